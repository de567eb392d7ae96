"""One upstream through the official mcp client, against subprocess fixture servers.

raw_mcp_server.py is a hand-written handshake-era server (it can send malformed tools, which an
SDK server refuses to); sdk_mcp_server.py is an mcp 2.x server that negotiates 2026-07-28.
"""

from __future__ import annotations

import os
import signal
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from pydantic import ValidationError

from gatespec.config import parse_config
from gatespec.upstream import McpUpstream, UpstreamError, tool_problem

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]


async def test_malformed_tool_does_not_hide_the_others(servers: Any) -> None:
    config = servers.raw("raw", "--malformed")
    # The SDK's typed listing rejects the whole page for one bad tool (why we list raw):
    params = StdioServerParameters(command=config.command, args=list(config.args))
    async with Client(params, cache=None) as client:
        with pytest.raises(ValidationError):
            await client.list_tools()

    async with McpUpstream(config) as upstream:
        tools = await upstream.list_tools()
    names = [t["name"] for t in tools]
    assert names == [
        "echo",
        "no_schema",
        "string_schema",
        42,
        "sleep",
        "hang",
        "crash",
        "add_tool",
        "whoami",
        "params",
        "fail",
        "garbage",
        "big",
    ]
    assert tools[1] == {"name": "no_schema", "description": "inputSchema is missing"}  # as sent
    problems = {str(t["name"]): tool_problem(t) for t in tools if tool_problem(t)}
    assert problems == {
        "no_schema": "tool 'no_schema' has no inputSchema",
        "string_schema": "tool 'string_schema' inputSchema is str, not an object",
        "42": "tool name is 42, not a non-empty string",
    }


async def test_pagination_is_followed(servers: Any) -> None:
    async with McpUpstream(servers.raw("raw", "--page-size", "2", "--malformed")) as upstream:
        tools = await upstream.list_tools()
    assert len(tools) == 13
    assert len({repr(t["name"]) for t in tools}) == 13


async def test_call_returns_wire_form_and_sends_no_foreign_meta(servers: Any) -> None:
    async with McpUpstream(servers.raw()) as upstream:
        assert upstream.state == "connected"
        assert upstream.protocol_version == "2025-11-25"
        assert upstream.server_info == {"name": "raw-test-server", "version": "1.0"}
        result = await upstream.call_tool("echo", {"text": "hello"})
        assert result == {
            "content": [{"type": "text", "text": "hello"}],
            "structuredContent": {"text": "hello"},
            "isError": False,
        }
        sent = (await upstream.call_tool("params", {"a": 1}))["structuredContent"]["params"]
        assert sent == {"name": "params", "arguments": {"a": 1}}  # no _meta envelope forwarded
    assert upstream.state == "closed"


async def test_error_answer_is_call_failed(servers: Any) -> None:
    async with McpUpstream(servers.raw()) as upstream:
        with pytest.raises(UpstreamError) as info:
            await upstream.call_tool("nope", {})
    assert info.value.kind == "call_failed"
    assert info.value.key == "raw"
    assert "Unknown tool: nope" in str(info.value)


async def test_hanging_call_times_out_and_connection_survives(servers: Any) -> None:
    async with McpUpstream(servers.raw(), call_timeout=0.5) as upstream:
        with anyio.fail_after(5):
            with pytest.raises(UpstreamError) as info:
                await upstream.call_tool("sleep", {"seconds": 60})
        assert info.value.kind == "timeout"
        assert "0.5s" in info.value.reason
        # an explicit per-call timeout wins over the default
        with pytest.raises(UpstreamError, match="0.2s"):
            await upstream.call_tool("sleep", {"seconds": 60}, timeout=0.2)
        assert upstream.state == "connected"
        assert (await upstream.call_tool("echo", {"text": "still"}))["isError"] is False


async def test_per_server_timeout_from_config(servers: Any) -> None:
    config = servers.raw("raw", timeout=0.3)
    async with McpUpstream(config, call_timeout=60) as upstream:
        assert upstream.call_timeout == 0.3
        with pytest.raises(UpstreamError) as info:
            await upstream.call_tool("sleep", {"seconds": 60})
    assert info.value.kind == "timeout"


async def test_crash_mid_call_is_detected(servers: Any) -> None:
    async with McpUpstream(servers.raw()) as upstream:
        with pytest.raises(UpstreamError) as info:
            await upstream.call_tool("crash", {})
        assert info.value.kind == "unavailable"
        assert "crashing on purpose" in info.value.reason  # stderr tail
        assert upstream.state == "failed"
        with pytest.raises(UpstreamError, match="not connected") as again:
            await upstream.call_tool("echo", {"text": "x"})
        assert again.value.kind == "unavailable"
        await upstream.connect()  # reconnect after a crash
        assert (await upstream.call_tool("echo", {"text": "back"}))["structuredContent"] == {
            "text": "back"
        }


async def test_killed_process_between_calls_marks_failed(servers: Any) -> None:
    async with McpUpstream(servers.raw()) as upstream:
        pid = (await upstream.call_tool("whoami", {}))["structuredContent"]["pid"]
        os.kill(pid, signal.SIGKILL)
        with anyio.fail_after(5):
            while upstream.state != "failed":
                await anyio.sleep(0.02)
        assert "process exited" in (upstream.reason or "")


async def test_list_changed_notification(servers: Any) -> None:
    changed: list[str] = []
    async with McpUpstream(servers.raw(), on_tools_changed=changed.append) as upstream:
        assert upstream.list_changed == "notification"
        added = (await upstream.call_tool("add_tool", {}))["content"][0]["text"]
        with anyio.fail_after(5):
            while not changed:
                await anyio.sleep(0.02)
        assert changed == ["raw"]
        assert added in [t["name"] for t in await upstream.list_tools()]


async def test_modern_server_pagination_and_subscription(servers: Any) -> None:
    changed: list[str] = []

    async def on_change(key: str) -> None:  # async callbacks are awaited
        changed.append(key)

    async with McpUpstream(
        servers.sdk("sdk", "--page-size", "1"), on_tools_changed=on_change
    ) as up:
        assert up.protocol_version == "2026-07-28"
        assert [t["name"] for t in await up.list_tools()] == ["echo", "bump"]
        with anyio.fail_after(5):
            while up.list_changed is None:  # the listen stream is acknowledged asynchronously
                await anyio.sleep(0.02)
        assert up.list_changed == "subscription"
        result = await up.call_tool("echo", {"text": "hi"})
        assert result == {
            "content": [{"type": "text", "text": "sdk echo: hi"}],
            "structuredContent": {"text": "hi"},
            "isError": False,
        }  # the server's serverInfo envelope stamp in _meta is not passed on
        await up.call_tool("bump", {})
        with anyio.fail_after(5):
            while not changed:
                await anyio.sleep(0.02)
        assert [t["name"] for t in await up.list_tools()] == ["echo", "bump", "bumped_2"]


async def test_server_killed_by_the_discover_probe_gets_a_legacy_retry(servers: Any) -> None:
    # Some handshake-era servers exit when the first request is not `initialize`.
    upstream = McpUpstream(servers.raw("strict", "--strict-init"))
    try:
        await upstream.connect()
        assert upstream.protocol_version == "2025-11-25"
        assert (await upstream.call_tool("echo", {"text": "ok"}))["isError"] is False
        await upstream.close()
        await upstream.connect()  # the era is remembered: no probe, no retry this time
        assert upstream.state == "connected"
    finally:
        await upstream.close()


async def test_command_not_found(servers: Any) -> None:
    upstream = McpUpstream(servers.config("ghost", {"command": "gatespec-no-such-command"}))
    with pytest.raises(UpstreamError) as info:
        await upstream.connect()
    await upstream.close()
    assert info.value.kind == "start_failed"
    assert str(info.value) == "upstream 'ghost': command not found: gatespec-no-such-command"


async def test_missing_working_directory(servers: Any, tmp_path: Any) -> None:
    config = servers.raw("raw", cwd=str(tmp_path / "absent"))
    upstream = McpUpstream(config)
    with pytest.raises(UpstreamError, match="working directory not found") as info:
        await upstream.connect()
    await upstream.close()
    assert info.value.kind == "start_failed"


async def test_exit_during_handshake_reports_stderr(servers: Any) -> None:
    upstream = McpUpstream(servers.raw("raw", "--exit-now", "3"))
    with pytest.raises(UpstreamError) as info:
        await upstream.connect()
    assert upstream.state == "failed"
    assert upstream.reason == info.value.reason
    await upstream.close()
    assert info.value.kind == "start_failed"
    assert "exited during the MCP handshake" in info.value.reason
    assert "refusing to start" in info.value.reason


@pytest.mark.timeout(20)
async def test_hanging_start_times_out(servers: Any) -> None:
    config = servers.config(
        "slow", {"command": servers.python, "args": ["-c", "import time; time.sleep(999)"]}
    )
    upstream = McpUpstream(config, connect_timeout=1)
    with anyio.fail_after(3):
        with pytest.raises(UpstreamError) as info:
            await upstream.connect()
    assert info.value.kind == "timeout"
    assert "no MCP handshake within 1s" in info.value.reason
    await upstream.close()  # waits for the process teardown (SDK-bounded)


async def test_connection_refused(servers: Any) -> None:
    port = servers.free_port()
    for transport, path in (("http", "/mcp"), ("sse", "/sse")):
        config = servers.config(
            "down", {"type": transport, "url": f"http://127.0.0.1:{port}{path}"}
        )
        upstream = McpUpstream(config)
        with pytest.raises(UpstreamError) as info:
            await upstream.connect()
        await upstream.close()
        assert info.value.kind == "start_failed"
        assert f"cannot connect to http://127.0.0.1:{port}{path}" in info.value.reason


async def test_modern_http_server(servers: Any) -> None:
    port = servers.free_port()
    servers.spawn(
        [servers.python, str(servers.fixtures / "sdk_mcp_server.py"), "--http", str(port)], port
    )
    entry = {
        "type": "http",
        "url": f"http://127.0.0.1:{port}/mcp",
        "headers": {"Authorization": "Bearer ${TOKEN}"},
    }
    config = parse_config({"mcpServers": {"sdk": entry}}, environ={"TOKEN": "t0k"}).servers["sdk"]
    async with McpUpstream(config) as upstream:
        assert upstream.protocol_version == "2026-07-28"
        assert [t["name"] for t in await upstream.list_tools()] == ["echo", "bump"]
        result = await upstream.call_tool("echo", {"text": "over http"})
        assert result["structuredContent"] == {"text": "over http"}
        seen = await upstream.call_tool("headers", {})
        assert seen["structuredContent"] == {"authorization": "Bearer t0k"}
