"""End-to-end: tollbooth over stdio in front of tests/upstream_fixture.py,
driven by the official MCP SDK client."""

from __future__ import annotations

import json
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tollbooth.surface import browse_hard_cap, count_tokens

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable


def write_config(tmp_path: Path, **extra) -> Path:
    cfg = {
        "mcpServers": {
            "fix": {"command": PY, "args": [str(ROOT / "tests" / "upstream_fixture.py")]},
            "ghost": {"command": "/nonexistent/upstream-binary"},
        },
        "tollbooth": {"call_timeout": 2, "connect_timeout": 20, **extra},
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    return path


@asynccontextmanager
async def gateway(tmp_path, profile, *flags, **extra):
    params = StdioServerParameters(
        command=PY,
        args=["-m", "tollbooth", "serve", "--profile", profile, "--config", str(write_config(tmp_path, **extra)), *flags],
        env={"PYTHONPATH": str(ROOT)},
    )
    async with Client(params, mode="legacy") as client:
        yield client


async def call(client, name, args, **kw):
    res = await client.call_tool(name, args, **kw)
    return res.is_error, res.structured_content, res.content[0].text


@pytest.mark.anyio
async def test_gateway_profile(tmp_path):
    async with gateway(tmp_path, "gateway") as c:
        names = [t.name for t in (await c.list_tools()).tools]
        assert names == ["tool_browse", "tool_execute", "tool_view"]  # §4.2: exactly three

        err, sc, text = await call(c, "tool_browse", {"path": "/"})
        assert not err
        ids = [card["id"] for card in sc["cards"]]
        assert "/github" in ids and "/mcp" in ids and ids == sorted(ids)
        assert count_tokens(text) <= browse_hard_cap(len(ids))
        for card in sc["cards"]:
            assert "inputSchema" not in card and "args_schema" not in card

        err, sc, _ = await call(c, "tool_browse", {"path": "/github/create_issue"})
        assert [card["id"] for card in sc["cards"]] == ["github:create_issue@1.4.0"]
        assert sc["cards"][0]["tags"] == ["destructive"]

        err, sc, text = await call(c, "tool_browse", {"path": "/github/"})
        assert err and sc["error"] == "PATH_INVALID" and json.loads(text)["error"] == "PATH_INVALID"
        err, sc, _ = await call(c, "tool_browse", {"path": "/nope"})
        assert err and sc["error"] == "PATH_NOT_FOUND" and sc["status"] == "error"
        err, sc, _ = await call(c, "tool_browse", {"query": "x", "path": "/"})
        assert err and sc["error"] == "ARGS_INVALID"

        err, sc, _ = await call(c, "tool_browse", {"query": "weather forecast"})
        assert sc["cards"][0]["id"] == "weather:get@2024-05" and "score" in sc["cards"][0]

        # tool_execute -> ResultEnvelope through the firewall
        err, env, text = await call(c, "tool_execute", {"tool_id": "github:create_issue@1.4.0", "args": {"title": "T"}})
        assert not err and env["status"] == "ok" and env["summary"] == "created issue 'T'"
        assert env["facts"] == ["number: 42", "status: created"]
        assert env["provenance"]["content_annotations"][0]["priority"] == 0.9
        handle = env["artifacts"][0]["handle"]
        err, view, _ = await call(c, "tool_view", {"handle": handle, "selector": "/number"})
        assert not err and view["content"] == "42"
        err, sc, _ = await call(c, "tool_view", {"handle": handle, "selector": "/zzz"})
        assert err and sc["error"] == "VIEW_FAILED"

        # validation failure never reaches upstream (§4.4)
        err, sc, _ = await call(c, "tool_execute", {"tool_id": "github:create_issue@1.4.0", "args": {"title": 1}})
        assert err and sc["error"] == "ARGS_INVALID" and sc["path"] == "github:create_issue@1.4.0"

        # long text -> summary + full_text artifact
        browse = (await call(c, "tool_browse", {"path": "/mcp"}))[1]
        read_id = browse["cards"][0]["id"]
        err, env, _ = await call(c, "tool_execute", {"tool_id": read_id, "args": {"path": "/x"}})
        assert len(env["summary"]) <= 500
        full = next(a["handle"] for a in env["artifacts"] if a["handle"].endswith(":full_text"))
        err, view, _ = await call(c, "tool_view", {"handle": full, "selector": "lines:40-40"})
        assert view["content"].startswith("line 40:")

        # image -> binary artifact
        snap = (await call(c, "tool_browse", {"path": "/media"}))[1]["cards"][0]["id"]
        err, env, _ = await call(c, "tool_execute", {"tool_id": snap})
        assert any(a["media_type"] == "image/png" for a in env["artifacts"])

        # upstream tool-level error -> error envelope, isError
        fail = (await call(c, "tool_browse", {"path": "/fail"}))[1]["cards"][0]["id"]
        err, env, _ = await call(c, "tool_execute", {"tool_id": fail, "args": {}})
        assert err and env["status"] == "error" and env["summary"] == "it failed"

        # malformed upstream schema -> HYDRATE_FAILED
        broken = (await call(c, "tool_browse", {"path": "/broken"}))[1]["cards"][0]
        assert broken["has_schema"] is False
        err, sc, _ = await call(c, "tool_execute", {"tool_id": broken["id"], "args": {}})
        assert err and sc["error"] == "HYDRATE_FAILED"

        # the caller's _meta is not forwarded upstream
        slack = (await call(c, "tool_browse", {"path": "/slack"}))[1]["cards"][0]["id"]
        err, env, _ = await call(c, "tool_execute", {"tool_id": slack, "args": {"channel": "c", "text": "t"}},
                                 meta={"progressToken": "p1", "x-secret": "nope"})
        assert "meta_forwarded: false" in env["facts"]

        # hang -> timeout -> UPSTREAM_ERROR; server stays up
        slow = (await call(c, "tool_browse", {"path": "/slow"}))[1]["cards"][0]["id"]
        err, sc, _ = await call(c, "tool_execute", {"tool_id": slow, "args": {}})
        assert err and sc["error"] == "UPSTREAM_ERROR"

        # crash -> UPSTREAM_ERROR; next call reconnects
        crash = (await call(c, "tool_browse", {"path": "/crash/now"}))[1]["cards"][0]["id"]
        err, crash_sc, _ = await call(c, "tool_execute", {"tool_id": crash, "args": {}})
        assert err and crash_sc["error"] == "UPSTREAM_ERROR"
        err, env, _ = await call(c, "tool_execute", {"tool_id": "weather:get@2024-05", "args": {"city": "Oslo"}})
        assert not err and env["summary"] == "Sunny in Oslo", (crash_sc, env)

        # upstream exits *between* calls -> the next call reconnects first
        later = next(x["id"] for x in (await call(c, "tool_browse", {"path": "/crash"}))[1]["cards"]
                     if x["name"] == "later")
        err, env, _ = await call(c, "tool_execute", {"tool_id": later})
        assert not err and env["summary"] == "bye"
        await anyio.sleep(1.0)
        err, env, _ = await call(c, "tool_execute", {"tool_id": "weather:get@2024-05", "args": {"city": "Rome"}})
        assert not err and env["summary"] == "Sunny in Rome"

        # unknown / hidden tools
        err, sc, _ = await call(c, "tool_hydrate", {"tool_id": "weather:get@2024-05"})
        assert err and sc["error"] == "ARGS_INVALID"


@pytest.mark.anyio
async def test_transparent_profile(tmp_path):
    async with gateway(tmp_path, "transparent") as c:
        tools = (await c.list_tools()).tools
        names = [t.name for t in tools]
        assert names[:2] == ["tool_hydrate", "tool_execute"]
        stripped = {t.name: t for t in tools[2:]}
        assert "github:create_issue@1.4.0" in stripped and "weather:get@2024-05" in stripped
        assert any(n.startswith("slack:slack_send_message#") for n in stripped)
        assert any(n.startswith("mcp:read_file#") for n in stripped)
        for t in stripped.values():
            assert t.input_schema == {"type": "object"}
        assert "\n" not in stripped[next(n for n in stripped if n.startswith("mcp:read_file"))].description

        err, h, _ = await call(c, "tool_hydrate", {"tool_id": "github:create_issue@1.4.0"})
        assert not err and h["inputSchema"]["required"] == ["title"] and h["name"] == "github.create_issue"
        err, sc, text = await call(c, "tool_hydrate", {"tool_id": "mcp:nothing#00000000"})
        assert err and sc["error"] == "HYDRATE_FAILED" and json.loads(text)["error"] == "HYDRATE_FAILED"

        # passthrough result
        err, sc, text = await call(c, "tool_execute", {"tool_id": "github:create_issue@1.4.0", "args": {"title": "x"}})
        assert not err and sc == {"number": 42, "status": "created"} and text == "created issue 'x'"
        err, sc, _ = await call(c, "tool_execute", {"tool_id": "github:create_issue@1.4.0", "args": {}})
        assert err and sc == {"error": "ARGS_INVALID", "message": sc["message"], "path": "github:create_issue@1.4.0",
                              "details": sc["details"]}

        # direct call of a stripped entry is refused, not forwarded
        err, sc, _ = await call(c, "github:create_issue@1.4.0", {"title": "x"})
        assert err and sc["error"] == "ARGS_INVALID"


@pytest.mark.anyio
async def test_cache_stable_flag(tmp_path):
    async with gateway(tmp_path, "gateway", "--cache-stable") as c:
        first = (await call(c, "tool_browse", {"query": "issue"}))[1]["cards"]
        assert "__cache_breakpoint__" not in [x["id"] for x in first]
        second = (await call(c, "tool_browse", {"query": "issue weather"}))[1]["cards"]
        ids = [x["id"] for x in second]
        assert ids == ["github:create_issue@1.4.0", "__cache_breakpoint__", "weather:get@2024-05"]
        assert second[0] == first[0]  # frozen content, byte-stable prefix
