"""A list request broadcast to every connected upstream that offers the list (seed 004,
AM-AGGREGATE-LISTING): fetched in parallel, each bounded by that server's own call timeout,
namespaced and merged in config order; an upstream that fails is left out and reported."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from gatespec.profiles.aggregate.naming import Kind, Naming, Unoffered, offer
from gatespec.profiles.aggregate.plugins import Chain
from gatespec.upstream import UpstreamError, UpstreamPool

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Failure:
    """An upstream left out of a broadcast, and why."""

    server: str
    reason: str


@dataclass(frozen=True)
class Merged:
    """One broadcast: the merged entries, what was left out and which upstreams failed."""

    entries: list[dict[str, Any]]
    unoffered: list[Unoffered]
    failures: list[Failure]


async def broadcast(
    kind: Kind,
    offering: Sequence[tuple[str, str]],
    pool: UpstreamPool,
    timeout_for: Callable[[str], float],
    plugins: Chain,
    naming: Naming,
) -> Merged:
    """The entries of `kind` of every (server key, config key) in `offering`, in its order;
    tools pass through the plugins first."""
    fetched: dict[str, list[dict[str, Any]]] = {}
    failures: list[Failure] = []

    async def fetch(server: str, key: str) -> None:
        try:
            with anyio.fail_after(timeout_for(key)):
                fetched[server] = await pool.list_all(key, kind.method, kind.field)
        except TimeoutError:
            reason = f"no complete {kind.method} within {timeout_for(key):g}s"
            failures.append(Failure(server, reason))
        except UpstreamError as exc:
            failures.append(Failure(server, exc.reason))

    async with anyio.create_task_group() as tg:
        for server, key in offering:
            tg.start_soon(fetch, server, key)
    entries: list[dict[str, Any]] = []
    unoffered: list[Unoffered] = []
    for server, _ in offering:
        if server not in fetched:
            continue
        raw = fetched[server]
        if kind.method == "tools/list":
            raw = plugins.tools(server, raw)
        done = offer(kind, server, raw, naming)
        entries += done.entries
        unoffered += done.unoffered
    order = {server: i for i, (server, _) in enumerate(offering)}
    failures.sort(key=lambda f: order[f.server])
    for entry in unoffered:
        logger.info(
            "%s %s of %s not offered: %s", kind.method, entry.name, entry.server, entry.reason
        )
    for failure in failures:
        logger.warning("%s: %s left out: %s", kind.method, failure.server, failure.reason)
    return Merged(entries, unoffered, failures)
