"""Registry changes while serving (seed 001 "Server Management", AM-REGISTRY-RELOAD): servers
added, removed and replaced; open sessions told; in-flight calls to a removed server ended with
a typed error; the config file watched, and reread on SIGHUP by a running gatespec."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from gatespec.config import load_config
from gatespec.profiles.aggregate import AggregateRuntime
from gatespec.profiles.registry import build_server
from gatespec.reload import watch_config
from gatespec_conformance.fixtures.upstream import fixture_argv

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]


def write(path: Path, servers: list[str], **gateway: Any) -> Path:
    entries = {}
    for key in servers:
        argv = fixture_argv(path.parent / f"{key}.jsonl", rich=True)
        entries[key] = {"command": argv[0], "args": argv[1:]}
    body = {
        "mcpServers": entries,
        "gateway": {"profile": "aggregate", "call_timeout": 20, **gateway},
    }
    path.write_text(json.dumps(body))
    return path


class Changes:
    """The list_changed notifications a client received."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.event = anyio.Event()

    async def __call__(self, message: Any) -> None:
        kinds = {
            types.ToolListChangedNotification: "tools",
            types.PromptListChangedNotification: "prompts",
            types.ResourceListChangedNotification: "resources",
        }
        kind = kinds.get(type(message))
        if kind is not None:
            self.seen.append(kind)
            self.event.set()

    async def wait(self, kinds: set[str], seconds: float = 20) -> None:
        with anyio.fail_after(seconds):
            while not kinds <= set(self.seen):
                await self.event.wait()
                self.event = anyio.Event()


def called(log: Path) -> list[str]:
    """The tool names a fixture upstream logged, in order."""
    lines = log.read_text().splitlines() if log.exists() else []
    return [json.loads(line)["name"] for line in lines if line.strip()]


async def tool_names(client: Client) -> set[str]:
    names: set[str] = set()
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor)
        names |= {t.name for t in page.tools}
        cursor = page.next_cursor
        if not cursor:
            return names


async def test_add_remove_and_replace_while_serving(anyio_backend: str, tmp_path: Path) -> None:
    path = write(tmp_path / "gatespec.json", ["alpha", "beta"])
    runtime = AggregateRuntime.from_config(load_config(path))
    changes = Changes()
    try:
        await runtime.start()
        server = build_server(runtime, fallback_session="test")
        async with Client(server, mode="legacy", message_handler=changes) as client:
            assert any(n.startswith("beta__") for n in await tool_names(client))
            in_flight: dict[str, Any] = {}

            async def slow_call() -> None:
                in_flight["result"] = await client.call_tool("beta__slow", {"seconds": 60})

            async with anyio.create_task_group() as tg:
                tg.start_soon(slow_call)
                with anyio.fail_after(20):  # until beta has logged the call: it is upstream now
                    while "slow" not in called(tmp_path / "beta.jsonl"):
                        await anyio.sleep(0.05)
                write(path, ["alpha", "gamma"])
                changed = await runtime.reconfigure(load_config(path))
            assert (changed.added, changed.removed, changed.replaced) == (("gamma",), ("beta",), ())
            await changes.wait({"tools", "prompts", "resources"})
            ended = in_flight["result"]
            assert ended.is_error and ended.structured_content["error"] == "SERVER_UNAVAILABLE"
            assert "removed from the configuration" in ended.structured_content["message"]
            names = await tool_names(client)
            assert not any(n.startswith("beta__") for n in names)  # REGISTRY-REMOVE-SERVER
            assert "gamma__echo" in names
            gone = await client.call_tool("beta__echo", {"text": "x"})
            assert gone.structured_content["error"] == "UNKNOWN_SERVER"
            prompts = [p.name for p in (await client.list_prompts()).prompts]
            assert not any(p.startswith("beta__") for p in prompts)

            # A changed entry is replaced: a new process serves it.
            write(path, ["alpha", "gamma"], call_timeout=21)  # options only: nothing changes
            assert not await runtime.reconfigure(load_config(path))
            body = json.loads(path.read_text())
            body["mcpServers"]["gamma"]["env"] = {"FIXTURE_GENERATION": "2"}
            path.write_text(json.dumps(body))
            changed = await runtime.reconfigure(load_config(path))
            assert changed.replaced == ("gamma",)
            echoed = await client.call_tool("gamma__echo", {"text": "again"})
            assert echoed.content[0].text == "again"
    finally:
        await runtime.aclose()


async def test_a_2026_client_hears_every_list_change(anyio_backend: str, tmp_path: Path) -> None:
    """AM-AGGREGATE-CAPABILITIES: list changes reach 2026-07-28 clients as listen events."""
    path = write(tmp_path / "gatespec.json", ["alpha"])
    runtime = AggregateRuntime.from_config(load_config(path))
    try:
        await runtime.start()
        server = build_server(runtime, fallback_session="test")
        async with Client(server, mode="2026-07-28") as client:
            kinds = {"tools_list_changed": True, "prompts_list_changed": True}
            async with client.listen(**kinds, resources_list_changed=True) as sub:
                write(path, ["alpha", "beta"])
                await runtime.reconfigure(load_config(path))
                seen: set[str] = set()
                with anyio.fail_after(10):
                    while len(seen) < 3:
                        seen.add(type(await sub.__anext__()).__name__)
    finally:
        await runtime.aclose()
    assert seen == {"ToolsListChanged", "PromptsListChanged", "ResourcesListChanged"}


async def test_the_watcher_applies_a_rewritten_file(anyio_backend: str, tmp_path: Path) -> None:
    path = write(tmp_path / "gatespec.json", ["alpha"])
    applied: list[Any] = []

    class Recorder:
        async def reconfigure(self, config: Any) -> Any:
            applied.append(sorted(config.servers))
            return "changed"

    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: watch_config(Recorder(), load_config(path), poll=0.05))
        await anyio.sleep(0.2)
        path.write_text("{ not json")  # an invalid file changes nothing
        await anyio.sleep(0.3)
        write(path, ["alpha", "beta"])
        with anyio.fail_after(10):
            while not applied:
                await anyio.sleep(0.05)
        tg.cancel_scope.cancel()
    assert applied == [["alpha", "beta"]]


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="no SIGHUP on this platform")
async def test_a_running_gateway_rereads_its_config(
    anyio_backend: str, tmp_path: Path, servers: Any
) -> None:
    """gatespec serve over HTTP: a rewritten file is picked up by the watcher; with watch off,
    only SIGHUP rereads it. The handshake-era client is told on its standing stream."""
    path = write(tmp_path / "gatespec.json", ["alpha"])
    port = servers.free_port()
    argv = [sys.executable, "-m", "gatespec.cli", "serve", "--config", str(path)]
    process = servers.spawn([*argv, "--transport", "http", "--port", str(port)], port)
    changes = Changes()
    url = f"http://127.0.0.1:{port}/mcp"
    async with Client(url, mode="legacy", message_handler=changes) as client:
        assert not any(n.startswith("beta__") for n in await tool_names(client))
        write(path, ["alpha", "beta"], watch=False)
        await changes.wait({"tools"})
        assert "beta__echo" in await tool_names(client)
        changes.seen.clear()
        write(path, ["alpha"], watch=False)  # not watched any more
        await anyio.sleep(1.5)
        assert "beta__echo" in await tool_names(client)
        assert process.proc is not None
        os.kill(process.proc.pid, signal.SIGHUP)
        await changes.wait({"tools"})
        assert not any(n.startswith("beta__") for n in await tool_names(client))


async def test_a_reload_is_logged_at_info_in_words(
    anyio_backend: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from gatespec.upstream import Reconfigured

    path = write(tmp_path / "gatespec.json", ["alpha"])
    answers = [Reconfigured(added=("beta",), replaced=("alpha",)), Reconfigured()]

    class Recorder:
        async def reconfigure(self, config: Any) -> Any:
            return answers.pop(0)

    with caplog.at_level("INFO", logger="gatespec.reload"):
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: watch_config(Recorder(), load_config(path), poll=0.05))
            await anyio.sleep(0.2)
            write(path, ["alpha", "beta"])
            with anyio.fail_after(10):
                while len(answers) == 2:
                    await anyio.sleep(0.05)
            await anyio.sleep(0.2)
            write(path, ["alpha", "beta"], watch=True, page_size=10)
            with anyio.fail_after(10):
                while answers:
                    await anyio.sleep(0.05)
            await anyio.sleep(0.2)
            tg.cancel_scope.cancel()
    reloads = [r for r in caplog.records if "reloaded" in r.getMessage()]
    assert [r.levelname for r in reloads] == ["INFO", "INFO"]
    assert reloads[0].getMessage().endswith(": added beta; restarted alpha")
    assert reloads[1].getMessage().endswith(": no server changed")
    assert "Reconfigured(" not in caplog.text


def test_reloads_are_shown_without_verbose(monkeypatch: pytest.MonkeyPatch) -> None:
    import logging

    from gatespec.cli.output import configure_logging

    monkeypatch.setattr(logging.getLogger("gatespec.reload"), "level", logging.NOTSET)
    monkeypatch.setattr(logging.getLogger("gatespec.upstream.pool"), "level", logging.NOTSET)
    monkeypatch.setattr(logging, "basicConfig", lambda **kwargs: None)
    configure_logging(0)
    assert logging.getLogger("gatespec.reload").isEnabledFor(logging.INFO)
