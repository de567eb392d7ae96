"""One record per upstream kind (gatespec.upstream_kinds) is what the config, the factory, the
MCP client's transports and the early spawn read: they agree with it."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest

from gatespec.config import ConfigError, parse_config
from gatespec.upstream import McpUpstream, StubUpstream, create_upstream
from gatespec.upstream.transports import OPENERS
from gatespec.upstream_kinds import KINDS, SPELLINGS, Transport


def test_the_transport_type_names_every_kind() -> None:
    assert set(get_args(Transport)) == set(KINDS)


def test_every_kind_the_mcp_client_reaches_has_its_opener() -> None:
    assert set(OPENERS) == {name for name, kind in KINDS.items() if kind.mcp}


def test_every_spelling_names_its_own_kind() -> None:
    for name, kind in KINDS.items():
        assert name in kind.spellings
        assert all(SPELLINGS[s] == name for s in kind.spellings)


# config entries of each kind, as written in the README's examples (docs: config.py docstring)
ENTRIES = {
    "stdio": {"command": "mcp-server-time"},
    "http": {"type": "streamable-http", "url": "https://example.com/mcp"},
    "sse": {"url": "http://127.0.0.1:3001/sse"},
    "stub": {"type": "stub", "catalog": "catalog.json"},
}


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_an_entry_reads_as_its_kind_and_makes_its_upstream(name: str, tmp_path: Path) -> None:
    config = parse_config({"mcpServers": {"s": ENTRIES[name]}}, tmp_path / "c.json")
    server = config.servers["s"]
    assert server.transport == name and server.kind is KINDS[name]
    upstream = create_upstream(server)
    assert isinstance(upstream, McpUpstream if KINDS[name].mcp else StubUpstream)


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_an_entry_without_the_key_its_kind_needs_is_refused(name: str) -> None:
    entry = {"type": name}
    with pytest.raises(ConfigError) as caught:
        parse_config({"mcpServers": {"s": entry}})
    assert caught.value.path == f"mcpServers.s.{KINDS[name].needs}"
