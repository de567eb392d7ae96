"""A config that reaches gatespec itself must not start a chain of gateways (issue 12 #3).

Pointing the gateway at an existing client config is easy, and such a config may list gatespec
among its servers, directly or through another gatespec config. Recognising "gatespec" on a
command line would be guesswork (npx, uvx, python -m, wrappers), so the processes say it
themselves: every gatespec that serves or lists a config puts that config's identity (a hash
of the file's bytes) into `CHAIN_ENV` for the upstreams it starts. A gatespec that finds its
own config's identity already there is an upstream of itself: it refuses to start
(`ChainLoop`, exit status `LOOP_EXIT_STATUS`), and the gateway above reports that upstream
as failed with kind ``loop``. Two hops (A lists B, B lists A) stop at the third process.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

__all__ = ["CHAIN_ENV", "LOOP_EXIT_STATUS", "ChainLoop", "child_environment", "entered"]

CHAIN_ENV: Final = "GATESPEC_CHAIN"
LOOP_EXIT_STATUS: Final = 78  # EX_CONFIG (sysexits.h): the configuration is the problem
_SEPARATOR: Final = ","


class ChainLoop(Exception):
    """This gatespec runs a config that a gatespec above it already runs."""

    def __init__(self, source: Path, chain: list[str]) -> None:
        self.source = source
        self.chain = chain
        super().__init__(
            f"refusing to start: {source} is already served by a gatespec above this one "
            f"(config chain {' -> '.join(chain)}); that gateway lists gatespec on its own "
            "config among its upstreams"
        )


def identity(source: Path) -> str:
    """A config's identity: the first 16 hex digits of the sha256 of its bytes."""
    return hashlib.sha256(source.read_bytes()).hexdigest()[:16]


def _inherited() -> list[str]:
    return [part for part in os.environ.get(CHAIN_ENV, "").split(_SEPARATOR) if part]


# The chain this process is in while it serves or lists a config (None: outside `entered`).
_joined: list[str] | None = None


@contextmanager
def entered(source: Path) -> Iterator[None]:
    """Run `source` as a link of the chain (the upstreams started meanwhile carry it); raises
    ChainLoop when a gatespec above already runs it. Left again on exit, so a process that
    runs several configs one after another (tests) does not chain them."""
    global _joined
    chain = _inherited()
    me = identity(source)
    if me in chain:
        raise ChainLoop(source, [*chain, me])
    previous, _joined = _joined, [*chain, me]
    try:
        yield
    finally:
        _joined = previous


def child_environment() -> dict[str, str]:
    """What a stdio upstream's environment carries of the chain (nothing outside one)."""
    chain = _joined if _joined is not None else _inherited()
    return {CHAIN_ENV: _SEPARATOR.join(chain)} if chain else {}
