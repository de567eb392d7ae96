"""gateway.plugins apply in every profile (issue 22 item 9): `gatespec serve` over stdio in the
gateway, transparent and search profiles, in front of a real upstream
(tests/fixtures/client_state_server.py), with a tool_filter that denies `level` and an
audit_log. The denied tool is neither listed, browsable, hydratable nor callable (its id, as
an unfiltered gateway lists it, is unknown); the calls that ran are audited.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "client_state_server.py"
SERVER = {"command": sys.executable, "args": [str(FIXTURE)]}


def write_config(folder: Path, profile: str, plugins: list[Any]) -> Path:
    body = {"mcpServers": {"state": SERVER}, "gateway": {"profile": profile, "plugins": plugins}}
    path = folder / f"{profile}-{len(plugins)}.json"
    path.write_text(json.dumps(body))
    return path


@pytest.fixture(scope="module")
def ids(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Tool name -> tool id, as a gateway without plugins lists them (`gatespec catalog`)."""
    path = write_config(tmp_path_factory.mktemp("catalog"), "gateway", [])
    argv = [sys.executable, "-m", "gatespec.cli", "catalog", "--config", str(path)]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True).stdout
    found = {}
    for line in out.splitlines():
        if line.startswith("state:"):
            tool_id = line.split("\t")[0]
            found[tool_id.split(":")[1].split("#")[0]] = tool_id
    assert {"level", "subscribed"} <= set(found), out
    return found


@asynccontextmanager
async def gateway(tmp_path: Path, profile: str) -> AsyncIterator[tuple[Client, Path]]:
    audit = tmp_path / "audit.jsonl"
    plugins = [
        {"type": "tool_filter", "servers": {"state": {"deny": ["level"]}}},
        {"type": "audit_log", "path": str(audit)},
    ]
    path = write_config(tmp_path, profile, plugins)
    argv = ["-m", "gatespec.cli", "serve", "--config", str(path)]
    params = StdioServerParameters(command=sys.executable, args=argv, env=dict(os.environ))
    async with Client(params, mode="legacy", cache=None) as client:
        yield client, audit


async def text_of(client: Client, tool: str, args: dict[str, Any]) -> tuple[str, bool]:
    """(the result's text and structured content, whether it is an error)."""
    result = await client.call_tool(tool, args)
    texts = [b.text for b in result.content if isinstance(b, types.TextContent)]
    texts.append(json.dumps(result.structured_content))
    return "\n".join(texts), bool(result.is_error)


def names(ids: dict[str, str], tool: str) -> list[str]:
    """How a listing may name `tool`: its id, browse path, or tools/list name."""
    return [ids[tool], f"/state/{tool}", f"state-n{tool}-"]


def shows(listing: str, ids: dict[str, str], tool: str) -> bool:
    return any(name in listing for name in names(ids, tool))


def audited(audit: Path) -> list[tuple[str, str]]:
    lines = audit.read_text().splitlines() if audit.exists() else []
    return [(e["tool"], e["outcome"]) for e in map(json.loads, lines)]


async def test_gateway_profile(tmp_path: Path, ids: dict[str, str]) -> None:
    async with gateway(tmp_path, "gateway") as (client, audit):
        for args in ({"path": "/state"}, {"query": "level logging"}):
            listing, _ = await text_of(client, "tool_browse", args)
            assert not shows(listing, ids, "level"), listing
        listing, _ = await text_of(client, "tool_browse", {"path": "/state"})
        assert shows(listing, ids, "subscribed"), listing
        _, failed = await text_of(client, "tool_hydrate", {"tool_id": ids["level"]})
        assert failed
        said, failed = await text_of(client, "tool_execute", {"tool_id": ids["level"]})
        assert failed and "level: unset" not in said, said
        said, failed = await text_of(client, "tool_execute", {"tool_id": ids["subscribed"]})
        assert not failed and "subscribed: " in said, said
    assert audited(audit) == [("subscribed", "ok")]


async def test_transparent_profile(tmp_path: Path, ids: dict[str, str]) -> None:
    async with gateway(tmp_path, "transparent") as (client, audit):
        listed = json.dumps([t.model_dump(mode="json") for t in (await client.list_tools()).tools])
        assert shows(listed, ids, "subscribed")
        assert not shows(listed, ids, "level"), listed
        _, failed = await text_of(client, "tool_hydrate", {"tool_id": ids["level"]})
        assert failed
        said, failed = await text_of(client, "tool_execute", {"tool_id": ids["level"]})
        assert failed and "level: unset" not in said, said
        said, failed = await text_of(client, "tool_execute", {"tool_id": ids["subscribed"]})
        assert not failed and "subscribed: " in said, said
    assert audited(audit) == [("subscribed", "ok")]


async def test_search_profile(tmp_path: Path, ids: dict[str, str]) -> None:
    async with gateway(tmp_path, "search") as (client, audit):
        hits, _ = await text_of(client, "search", {"query": "level logging", "limit": 50})
        assert not shows(hits, ids, "level"), hits
        hits, _ = await text_of(client, "search", {"namespace": "state", "limit": 50})
        assert shows(hits, ids, "subscribed") and not shows(hits, ids, "level"), hits
        level, subscribed = "/state/level", "/state/subscribed"  # operations are paths here
        _, failed = await text_of(client, "schema", {"operation": level})
        assert failed
        said, failed = await text_of(client, "call", {"operation": level, "input": {}})
        assert failed and "level: unset" not in said, said
        calls = [{"operation": level, "input": {}}, {"operation": subscribed}]
        said, _ = await text_of(client, "batch", {"calls": calls})
        assert "level: unset" not in said and "subscribed: " in said, said
    assert audited(audit) == [("subscribed", "ok")]
