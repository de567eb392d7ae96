"""The aggregate profile in front of real servers nobody here wrote: npm server-everything
(prompts, resources, resource templates, completion, subscriptions, sampling, progress),
server-filesystem, server-memory and PyPI mcp-server-time, reached through gatespec's command
line over stdio and Streamable HTTP with the official client. Expected values are the servers'
documented behaviour; names follow seed 004 (server__tool) and AM-RESOURCE-URI."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters

pytestmark = [pytest.mark.anyio, pytest.mark.real_upstream, pytest.mark.timeout(120)]


def real_config(tmp_path: Path, servers: Any) -> Path:
    files = tmp_path / "files"
    files.mkdir()
    (files / "notes.txt").write_text("hello from the filesystem server\n")
    node = servers.node_bin
    config = {
        "mcpServers": {
            "everything": {
                "command": servers.binary(node / "mcp-server-everything"),
                "args": ["stdio"],
            },
            "fs": {"command": servers.binary(node / "mcp-server-filesystem"), "args": [str(files)]},
            "memory": {
                "command": servers.binary(node / "mcp-server-memory"),
                "env": {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")},
            },
            "time": {"command": servers.binary(servers.venv_bin / "mcp-server-time")},
        },
        "gateway": {"profile": "aggregate", "call_timeout": 30},
    }
    path = tmp_path / "gatespec.json"
    path.write_text(json.dumps(config))
    return path


def gatespec_argv(config: Path) -> list[str]:
    return [sys.executable, "-m", "gatespec.cli", "serve", "--config", str(config)]


class Seen:
    def __init__(self) -> None:
        self.updates: list[str] = []
        self.progress: list[float] = []
        self.sampled = 0

    async def on_message(self, message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.updates.append(str(message.params.uri))

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append(progress)

    async def sampling(self, ctx: Any, params: types.CreateMessageRequestParams) -> Any:
        self.sampled += 1
        text = types.TextContent(type="text", text="a sampled reply")
        return types.CreateMessageResult(role="assistant", content=text, model="test")


async def test_real_servers_over_stdio(anyio_backend: str, tmp_path: Path, servers: Any) -> None:
    config = real_config(tmp_path, servers)
    argv = gatespec_argv(config)
    seen = Seen()
    params = StdioServerParameters(command=argv[0], args=argv[1:])
    async with Client(
        params, mode="legacy", message_handler=seen.on_message, sampling_callback=seen.sampling
    ) as client:
        tools = [t.name for t in (await client.list_tools()).tools]
        assert {t.split("__")[0] for t in tools} == {"everything", "fs", "memory", "time"}
        assert {
            "everything__echo",
            "fs__read_text_file",
            "memory__read_graph",
            "time__get_current_time",
        } <= set(tools)

        prompts = [p.name for p in (await client.list_prompts()).prompts]
        assert {"everything__simple-prompt", "everything__args-prompt"} <= set(prompts)
        got = await client.get_prompt("everything__args-prompt", {"city": "Paris", "state": "IDF"})
        assert "Paris" in got.messages[0].content.text
        embedded = await client.get_prompt(
            "everything__resource-prompt", {"resourceType": "Text", "resourceId": "2"}
        )
        uris = [
            str(m.content.resource.uri) for m in embedded.messages if m.content.type == "resource"
        ]
        assert uris == ["everything+demo://resource/dynamic/text/2"]  # namespaced at egress

        resources = [str(r.uri) for r in (await client.list_resources()).resources]
        assert "everything+demo://resource/static/document/architecture.md" in resources
        templates = [
            t.uri_template for t in (await client.list_resource_templates()).resource_templates
        ]
        assert "everything+demo://resource/dynamic/text/{resourceId}" in templates
        read = await client.read_resource("everything+demo://resource/dynamic/text/1")
        assert str(read.contents[0].uri) == "everything+demo://resource/dynamic/text/1"
        assert "Resource 1" in read.contents[0].text

        done = await client.complete(
            types.PromptReference(type="ref/prompt", name="everything__completable-prompt"),
            {"name": "department", "value": "E"},
        )
        assert done.completion.values == ["Engineering"]

        text = await client.call_tool(
            "fs__read_text_file", {"path": str(tmp_path / "files" / "notes.txt")}
        )
        assert "hello from the filesystem server" in text.content[0].text
        await client.call_tool(
            "memory__create_entities",
            {"entities": [{"name": "Ada", "entityType": "person", "observations": ["math"]}]},
        )
        graph = await client.call_tool("memory__read_graph", {})
        assert "Ada" in graph.content[0].text
        now = await client.call_tool("time__get_current_time", {"timezone": "UTC"})
        assert json.loads(now.content[0].text)["timezone"] == "UTC"

        long_op = await client.call_tool(
            "everything__trigger-long-running-operation",
            {"duration": 1, "steps": 2},
            progress_callback=seen.on_progress,
        )
        assert not long_op.is_error and seen.progress == [1, 2]
        sampled = await client.call_tool("everything__trigger-sampling-request", {"prompt": "hi"})
        assert seen.sampled == 1 and "a sampled reply" in sampled.content[0].text

        with warnings.catch_warnings():  # resources/subscribe is gone in 2026-07-28 only
            warnings.simplefilter("ignore")
            await client.subscribe_resource("everything+demo://resource/dynamic/text/1")
        await client.call_tool("everything__toggle-subscriber-updates", {})
        with anyio.fail_after(20):
            while not seen.updates:
                await anyio.sleep(0.1)
    assert seen.updates[0] == "everything+demo://resource/dynamic/text/1"


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28", "sse"])
async def test_real_servers_over_streamable_http(
    anyio_backend: str, tmp_path: Path, servers: Any, mode: str
) -> None:
    """Streamable HTTP in both eras, and the legacy SSE transport (/sse + /messages)."""
    config = real_config(tmp_path, servers)
    port = servers.free_port()
    servers.spawn([*gatespec_argv(config), "--transport", "http", "--port", str(port)], port)
    base = f"http://127.0.0.1:{port}"
    target: Any = sse_client(f"{base}/sse") if mode == "sse" else f"{base}/mcp"
    async with Client(target, mode="legacy" if mode == "sse" else mode) as client:
        prompts = [p.name for p in (await client.list_prompts()).prompts]
        read = await client.read_resource("everything+demo://resource/static/document/features.md")
        echoed = await client.call_tool("everything__echo", {"message": "over http"})
    assert "everything__simple-prompt" in prompts
    assert str(read.contents[0].uri).startswith("everything+demo://")
    assert echoed.content[0].text == "Echo: over http"
