"""The kinds of upstream server a config entry can name, one record each.

The config reads an entry's keys and type spellings from here (gatespec.config), the factory
picks the upstream class by it (gatespec.upstream.factory), the MCP client opens the kind's
transport (gatespec.upstream.transports, one opener per kind) and only a kind that runs a
local process is started early (gatespec.spawn). A new kind is a record here, an opener there,
and whatever its entry's keys need in the config reader; nothing else compares kind names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

__all__ = ["KINDS", "SPELLINGS", "Transport", "UpstreamKind"]

# A ServerConfig's `transport`: the name of one of KINDS (tests/runtime/test_config.py checks
# that the two agree).
Transport = Literal["stdio", "http", "sse", "stub"]


@dataclass(frozen=True)
class UpstreamKind:
    name: Transport
    spellings: tuple[str, ...]  # what an entry's type may say for it (lower case), name included
    keys: frozenset[str]  # the entry keys that belong to this kind
    needs: str  # the key every entry of this kind has (command, url or catalog)
    missing: str  # why, when it is missing
    local_process: bool  # a process of ours on stdio: started early, its stderr kept
    mcp: bool  # reached through the MCP SDK's client; else a stub (a captured tool list)


_URL_KEYS: Final = frozenset({"url", "headers"})

KINDS: Final[Mapping[str, UpstreamKind]] = {
    kind.name: kind
    for kind in (
        UpstreamKind(
            "stdio",
            ("stdio",),
            frozenset({"command", "args", "env", "cwd"}),
            "command",
            "a stdio server needs a command",
            local_process=True,
            mcp=True,
        ),
        UpstreamKind(
            "http",
            ("http", "streamable-http", "streamable_http", "streamablehttp"),
            _URL_KEYS,
            "url",
            "an http server needs a url",
            local_process=False,
            mcp=True,
        ),
        UpstreamKind(
            "sse",
            ("sse",),
            _URL_KEYS,
            "url",
            "an sse server needs a url",
            local_process=False,
            mcp=True,
        ),
        UpstreamKind(
            "stub",
            ("stub",),
            frozenset({"catalog", "server"}),
            "catalog",
            "a stub server needs a catalog JSON file",
            local_process=False,
            mcp=False,
        ),
    )
}

# An entry's type, lower-cased, to the kind it names.
SPELLINGS: Final[Mapping[str, Transport]] = {
    spelling: kind.name for kind in KINDS.values() for spelling in kind.spellings
}
