"""Against real third-party MCP servers: server-everything (stdio, Streamable HTTP, legacy SSE),
server-filesystem, server-memory (npm), mcp-server-time and mcp-server-git (PyPI).

Tool lists are cross-checked against the official SDK client walking every cursor page, so a
paginating server would be caught dropping pages.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters

from gatespec.config import ServerConfig
from gatespec.upstream import McpUpstream, UpstreamPool, tool_problem

pytestmark = [pytest.mark.anyio, pytest.mark.real_upstream, pytest.mark.timeout(45)]


async def _never(*args: Any) -> Any:
    raise AssertionError("not asked in these tests")


async def sdk_tool_names(config: ServerConfig) -> list[str]:
    """Every tool name as the official client sees it, following nextCursor. The client
    declares what gatespec declares (sampling, elicitation, roots: AM-UPSTREAM-RELAY), since
    servers such as server-everything list more tools to such clients."""
    target: Any
    if config.transport == "stdio":
        assert config.command is not None
        target = StdioServerParameters(
            command=config.command, args=list(config.args), env=dict(config.env) or None
        )
    elif config.transport == "sse":
        target = sse_client(str(config.url))
    else:
        target = config.url
    names: list[str] = []
    callbacks = {
        "sampling_callback": _never,
        "elicitation_callback": _never,
        "list_roots_callback": _never,
    }
    async with Client(target, cache=None, **callbacks) as client:
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor)
            names += [t.name for t in page.tools]
            cursor = page.next_cursor
            if not cursor:
                return names


async def check_listing(upstream: McpUpstream) -> list[dict[str, Any]]:
    tools = await upstream.list_tools()
    assert tools, f"{upstream.key} listed no tools"
    assert [t["name"] for t in tools] == await sdk_tool_names(upstream.config)
    assert [tool_problem(t) for t in tools] == [None] * len(tools)
    return tools


def everything_bin(servers: Any) -> str:
    return str(servers.binary(servers.node_bin / "mcp-server-everything"))


async def test_everything_stdio(servers: Any) -> None:
    config = servers.config("everything", {"command": everything_bin(servers), "args": ["stdio"]})
    async with McpUpstream(config) as upstream:
        assert upstream.protocol_version == "2025-11-25"
        assert upstream.list_changed == "notification"
        tools = await check_listing(upstream)
        names = {t["name"] for t in tools}
        assert {"echo", "get-sum", "get-structured-content"} <= names
        echo = await upstream.call_tool("echo", {"message": "hi"})
        assert echo == {"content": [{"type": "text", "text": "Echo: hi"}], "isError": False}
        total = await upstream.call_tool("get-sum", {"a": 2, "b": 3})
        assert "5" in total["content"][0]["text"]
        structured = await upstream.call_tool("get-structured-content", {"location": "New York"})
        assert isinstance(structured.get("structuredContent"), dict)
        bad = await upstream.call_tool("get-sum", {"a": "two"})
        assert bad["isError"] is True  # a tool-level error is a result, not an exception


@pytest.mark.parametrize(("mode", "path"), [("streamableHttp", "/mcp"), ("sse", "/sse")])
async def test_everything_over_http(servers: Any, mode: str, path: str) -> None:
    port = servers.free_port()
    servers.spawn([everything_bin(servers), mode], port, env={"PORT": str(port)})
    kind = "http" if mode == "streamableHttp" else "sse"
    config = servers.config("everything", {"type": kind, "url": f"http://127.0.0.1:{port}{path}"})
    async with McpUpstream(config) as upstream:
        assert upstream.protocol_version == "2025-11-25"
        await check_listing(upstream)
        echo = await upstream.call_tool("echo", {"message": kind})
        assert echo["content"] == [{"type": "text", "text": f"Echo: {kind}"}]


async def test_filesystem(servers: Any, tmp_path: Path) -> None:
    (tmp_path / "hello.txt").write_text("hello from gatespec\n")
    command = str(servers.binary(servers.node_bin / "mcp-server-filesystem"))
    config = servers.config("fs", {"command": command, "args": [str(tmp_path)]})
    async with McpUpstream(config) as upstream:
        names = {t["name"] for t in await check_listing(upstream)}
        assert {"read_text_file", "list_directory", "write_file"} <= names
        read = await upstream.call_tool("read_text_file", {"path": str(tmp_path / "hello.txt")})
        assert "hello from gatespec" in read["content"][0]["text"]
        listing = await upstream.call_tool("list_directory", {"path": str(tmp_path)})
        assert "hello.txt" in listing["content"][0]["text"]
        denied = await upstream.call_tool("read_text_file", {"path": "/etc/hostname"})
        assert denied["isError"] is True  # outside the allowed directory


async def test_memory(servers: Any, tmp_path: Path) -> None:
    command = str(servers.binary(servers.node_bin / "mcp-server-memory"))
    env = {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")}
    config = servers.config("memory", {"command": command, "env": env})
    async with McpUpstream(config) as upstream:
        await check_listing(upstream)
        entity = {"name": "gatespec", "entityType": "project", "observations": ["fronts MCP"]}
        await upstream.call_tool("create_entities", {"entities": [entity]})
        graph = await upstream.call_tool("read_graph", {})
        assert "gatespec" in graph["content"][0]["text"]


async def test_time(servers: Any) -> None:
    command = str(servers.binary(servers.venv_bin / "mcp-server-time"))
    config = servers.config("time", {"command": command, "args": ["--local-timezone", "UTC"]})
    async with McpUpstream(config) as upstream:
        assert upstream.protocol_version == "2026-07-28"  # a modern-era server
        names = {t["name"] for t in await check_listing(upstream)}
        assert names == {"get_current_time", "convert_time"}
        now = await upstream.call_tool("get_current_time", {"timezone": "UTC"})
        assert now["isError"] is False
        assert now["structuredContent"]["timezone"] == "UTC"
        assert "_meta" not in now  # the envelope's serverInfo stamp is not passed on


async def test_git(servers: Any, tmp_path: Path) -> None:
    command = str(servers.binary(servers.venv_bin / "mcp-server-git"))
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "README").write_text("hi\n")
    subprocess.run([*git, "add", "README"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first commit"], check=True)
    config = servers.config("git", {"command": command, "args": ["--repository", str(repo)]})
    async with McpUpstream(config) as upstream:
        names = {t["name"] for t in await check_listing(upstream)}
        assert {"git_status", "git_log"} <= names
        log = await upstream.call_tool("git_log", {"repo_path": str(repo)})
        assert "first commit" in log["content"][0]["text"]


async def test_pool_of_real_servers(servers: Any, tmp_path: Path) -> None:
    everything = everything_bin(servers)
    time_bin = str(servers.binary(servers.venv_bin / "mcp-server-time"))
    fs_bin = str(servers.binary(servers.node_bin / "mcp-server-filesystem"))
    configs = [
        servers.config("everything", {"command": everything, "args": ["stdio"]}),
        servers.config("time", {"command": time_bin}),
        servers.config("fs", {"command": fs_bin, "args": [str(tmp_path)]}),
        servers.config("broken", {"command": fs_bin, "args": [str(tmp_path / "absent")]}),
    ]
    async with UpstreamPool(configs, connect_timeout=15) as pool:
        statuses = {s.key: s for s in await pool.start()}
        assert {k: s.state for k, s in statuses.items()} == {
            "everything": "connected",
            "time": "connected",
            "fs": "connected",
            "broken": "failed",
        }
        # the filesystem server's own complaint reaches the reason through the stderr tail
        assert "absent" in (statuses["broken"].reason or "")
        tools = pool.tools()
        assert list(tools) == ["everything", "time", "fs"]
        result = await pool.call("everything", "echo", {"message": "pooled"})
        assert result["content"][0]["text"] == "Echo: pooled"
