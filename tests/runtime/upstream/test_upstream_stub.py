"""The stub upstream: a static catalog served as tools; calls answered by a deterministic echo."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gatespec.config import load_config
from gatespec.upstream import (
    StubUpstream,
    UpstreamError,
    UpstreamPool,
    create_upstream,
    echo_result,
    tool_problem,
)

pytestmark = pytest.mark.anyio

REAL_CATALOG = Path(__file__).resolve().parents[2] / "fixtures" / "catalogs" / "mcp_catalog.json"
OBJ = {"type": "object", "properties": {"q": {"type": "string"}}}


def stub(servers: Any, catalog: Path, **extra: Any) -> StubUpstream:
    up = create_upstream(servers.config("stub", {"type": "stub", "catalog": str(catalog), **extra}))
    assert isinstance(up, StubUpstream)
    return up


@pytest.mark.parametrize("wrap", [False, True])
async def test_serves_tools_and_echoes(servers: Any, tmp_path: Path, wrap: bool) -> None:
    tools = [
        {"name": "search", "description": "Find things.", "inputSchema": OBJ},
        {"name": "bad", "description": "no schema"},
    ]
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps({"tools": tools} if wrap else tools))
    async with stub(servers, catalog) as up:
        assert up.state == "connected"
        listed = await up.list_tools()
        assert listed == tools  # as written, malformed entries included
        assert [tool_problem(t) for t in listed] == [None, "tool 'bad' has no inputSchema"]
        listed[0]["name"] = "mutated"  # callers get copies
        assert (await up.list_tools())[0]["name"] == "search"
        result = await up.call_tool("search", {"q": "mcp", "n": 2})
        assert result == {
            "content": [
                {"type": "text", "text": 'stub stub/search called with {"n": 2, "q": "mcp"}'}
            ],
            "structuredContent": {"q": "mcp", "n": 2},
            "isError": False,
        }
        assert result == echo_result("stub", "search", {"n": 2, "q": "mcp"})
        with pytest.raises(UpstreamError) as info:
            await up.call_tool("missing", {})
        assert info.value.kind == "call_failed"
    assert up.state == "closed"
    with pytest.raises(UpstreamError) as closed:
        await up.list_tools()
    assert closed.value.kind == "unavailable"


async def test_server_filter_and_bookkeeping_keys(servers: Any, tmp_path: Path) -> None:
    catalog = tmp_path / "multi.json"
    catalog.write_text(
        json.dumps(
            [
                {"server": "a", "name": "x", "inputSchema": OBJ, "source": "bench"},
                {"server": "b", "name": "y", "inputSchema": OBJ, "server_title": "B"},
            ]
        )
    )
    async with stub(servers, catalog, server="b") as up:
        assert await up.list_tools() == [{"name": "y", "inputSchema": OBJ}]
    empty = stub(servers, catalog, server="nobody")
    with pytest.raises(UpstreamError, match="no tools of server 'nobody'") as info:
        await empty.connect()
    assert info.value.kind == "start_failed"
    assert empty.state == "failed" and "nobody" in (empty.reason or "")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read catalog"),
        ("{not json", "not valid JSON"),
        ('{"tools": {"a": 1}}', "expected an array"),
        ('"text"', "expected an array"),
    ],
)
async def test_bad_catalog_files(
    servers: Any, tmp_path: Path, content: str | None, message: str
) -> None:
    catalog = tmp_path / "catalog.json"
    if content is not None:
        catalog.write_text(content)
    up = stub(servers, catalog)
    with pytest.raises(UpstreamError, match=message) as info:
        await up.connect()
    assert info.value.kind == "start_failed"


async def test_relative_catalog_from_config_file(tmp_path: Path) -> None:
    (tmp_path / "cat.json").write_text(json.dumps([{"name": "t", "inputSchema": OBJ}]))
    path = tmp_path / "gateway.json"
    path.write_text(json.dumps({"mcpServers": {"s": {"type": "stub", "catalog": "cat.json"}}}))
    config = load_config(path, environ={})
    async with UpstreamPool.from_config(config) as pool:
        await pool.start()
        assert pool.tools() == {"s": [{"name": "t", "inputSchema": OBJ}]}
        assert (await pool.call("s", "t", {}))["structuredContent"] == {}


async def test_real_tool_retrieval_catalog(servers: Any) -> None:
    items = json.loads(REAL_CATALOG.read_text(encoding="utf-8"))
    async with stub(servers, REAL_CATALOG) as everything:
        assert len(await everything.list_tools()) == len(items)
    async with stub(servers, REAL_CATALOG, server="github") as github:
        tools = await github.list_tools()
    assert len(tools) == sum(1 for i in items if i.get("server") == "github")
    assert all(set(t) <= {"name", "description", "inputSchema"} for t in tools)
