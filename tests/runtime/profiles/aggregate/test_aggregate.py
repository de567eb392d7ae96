"""The aggregate profile end to end, in both protocol eras: gatespec in front of two (or one)
of the conformance kit's fixture upstreams in rich mode, which paginate every list (pages of 7)
and log every call they receive. Expected names come from seed 004 (server__tool) and the
amendments (AM-RESOURCE-URI, AM-AGGREGATE-*), computed from the fixture's own tables."""

from __future__ import annotations

import json
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.server.subscriptions import ResourceUpdated
from mcp.shared.exceptions import MCPError

from gatespec.config import parse_config
from gatespec.profiles.aggregate import AggregateRuntime, routing
from gatespec.profiles.aggregate.plugins import Plugin, ToolCall
from gatespec.profiles.registry import build_server
from gatespec_conformance.fixtures.catalog import fixture_tools
from gatespec_conformance.fixtures.rich import (
    BAD_PROMPT,
    NO_SCHEME_URI,
    PROMPTS,
    RELAY_TOOLS,
    RESOURCES,
)
from gatespec_conformance.fixtures.upstream import fixture_argv
from gatespec_surface.grammars import is_aggregate_name

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

ERAS = ["legacy", "2026-07-28"]
PAGE = 7  # the fixtures' own page size: gatespec must follow their cursors


def fixture_entry(log: Path, **extra: Any) -> dict[str, Any]:
    argv = fixture_argv(log, rich=True, page_size=PAGE)
    return {"command": argv[0], "args": argv[1:], **extra}


def make_config(tmp_path: Path, servers: list[str] | None = None, **gateway: Any) -> Any:
    names = servers or ["alpha", "beta"]
    body = {
        "mcpServers": {k: fixture_entry(tmp_path / f"{k}.jsonl") for k in names},
        "gateway": {"profile": "aggregate", "call_timeout": 10, **gateway},
    }
    return parse_config(body, source=tmp_path / "gatespec.json", environ={})


@asynccontextmanager
async def serving(config: Any) -> AsyncIterator[tuple[AggregateRuntime, Any]]:
    runtime = AggregateRuntime.from_config(config)
    try:
        await runtime.start()
        yield runtime, build_server(runtime, fallback_session="test")
    finally:
        await runtime.aclose()


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"  # module-wide, so that `pair` can be a module fixture


@pytest.fixture(scope="module")
async def pair(
    anyio_backend: str, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[tuple[Any, Path]]:
    """(server, folder of the call logs) of one gateway in front of alpha and beta for the tests
    that only list and call through it with a client of their own: they change nothing in it
    and read the call logs as what their own calls added."""
    folder = tmp_path_factory.mktemp("pair")
    async with serving(make_config(folder)) as (_, server):
        yield server, folder


def calls(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


async def every(client: Client, method: str) -> list[Any]:
    """Every entry of a list, following nextCursor."""
    fetch = {
        "tools/list": (client.list_tools, "tools"),
        "prompts/list": (client.list_prompts, "prompts"),
        "resources/list": (client.list_resources, "resources"),
        "resources/templates/list": (client.list_resource_templates, "resource_templates"),
    }[method]
    entries: list[Any] = []
    cursor: str | None = None
    while True:
        page = await fetch[0](cursor=cursor)
        entries += getattr(page, fetch[1])
        cursor = page.next_cursor
        if not cursor:
            return entries


def offered_tools(server: str) -> list[str]:
    """The fixture's tools a client must see, in the fixture's order: those whose
    server__name the aggregate_name grammar admits (seed 004, AM-AGGREGATE-SEPARATOR) and
    whose definition is a tool MCP allows (an inputSchema object of type object)."""
    entries = [t.wire() for t in fixture_tools()] + list(RELAY_TOOLS)
    out = []
    for tool in entries:
        wire = f"{server}__{tool['name']}"
        schema = tool.get("inputSchema")
        if is_aggregate_name(wire) and isinstance(schema, dict) and schema.get("type") == "object":
            out.append(wire)
    return out


# ------------------------------------------------------------------ lists


@pytest.mark.parametrize("mode", ERAS)
async def test_tools_of_every_upstream_in_one_namespaced_list(
    anyio_backend: str, tmp_path: Path, mode: str
) -> None:
    async with serving(make_config(tmp_path, page_size=25)) as (_, server):
        async with Client(server, mode=mode) as client:
            names = [t.name for t in await every(client, "tools/list")]
    # AGG-TOOLS-LIST-UNIFIED/-BROADCAST: both upstreams, every upstream page, in config order
    assert names == offered_tools("alpha") + offered_tools("beta")
    # AGG-SAME-NAME-DISAMBIGUATED: the same tool of two servers, told apart by the prefix
    assert {"alpha__echo", "beta__echo"} <= set(names)
    assert len(names) == len(set(names)) and len(names) > 25  # several downstream pages


@pytest.mark.parametrize("mode", ERAS)
async def test_prompts_resources_and_templates_are_namespaced(
    pair: tuple[Any, Path], mode: str
) -> None:
    server, _ = pair
    async with Client(server, mode=mode) as client:
        prompts = [p.name for p in await every(client, "prompts/list")]
        resources = [str(r.uri) for r in await every(client, "resources/list")]
        templates = [t.uri_template for t in await every(client, "resources/templates/list")]
    good = [p["name"] for p in PROMPTS if p["name"] != BAD_PROMPT]
    assert prompts == [f"{s}__{p}" for s in ("alpha", "beta") for p in good]
    uris = [r["uri"] for r in RESOURCES if r["uri"] != NO_SCHEME_URI]
    assert resources == [f"{s}+{u}" for s in ("alpha", "beta") for u in uris]
    assert templates == ["alpha+fixture://item/{id}", "beta+fixture://item/{id}"]


@pytest.mark.parametrize("mode", ERAS)
async def test_requests_reach_the_named_server_under_their_clean_names(
    pair: tuple[Any, Path], mode: str
) -> None:
    server, folder = pair
    before = {key: len(calls(folder / f"{key}.jsonl")) for key in ("alpha", "beta")}
    async with Client(server, mode=mode) as client:
        echoed = await client.call_tool("beta__echo", {"text": "hi", "times": 2})
        prompt = await client.get_prompt("alpha__greet", {"name": "Ada"})
        embedded = await client.get_prompt("beta__with-resource")
        read = await client.read_resource("beta+fixture://item/42")
        done = await client.complete(
            types.PromptReference(type="ref/prompt", name="alpha__greet"),
            {"name": "name", "value": "al"},
        )
    assert echoed.content[0].text == "hi hi" and not echoed.is_error
    assert prompt.messages[0].content.text == "Hello, Ada!"
    # URIs inside answers are namespaced too (AM-RESOURCE-URI), so the client can read them.
    assert str(embedded.messages[0].content.resource.uri) == "beta+fixture://doc/readme"
    assert [str(c.uri) for c in read.contents] == ["beta+fixture://item/42"]
    assert read.contents[0].text == "item 42"
    assert done.completion.values == ["alice", "albert"]
    alpha, beta = (
        [(c["name"], c["arguments"]) for c in calls(folder / f"{key}.jsonl")[before[key] :]]
        for key in ("alpha", "beta")
    )
    assert ("prompts/get:greet", {"name": "Ada"}) in alpha and (
        "echo",
        {"text": "hi", "times": 2},
    ) in beta
    assert ("resources/read", {"uri": "fixture://item/42"}) in beta  # ROUTE-UPSTREAM-CLEAN-NAME
    assert not any(name == "echo" for name, _ in alpha)


async def test_one_upstream_is_still_namespaced(anyio_backend: str, tmp_path: Path) -> None:
    """Seed 004 principle 5: no single-server special case."""
    async with serving(make_config(tmp_path, ["solo"])) as (_, server):
        async with Client(server, mode="legacy") as client:
            names = [t.name for t in await every(client, "tools/list")]
            bare = await client.call_tool("echo", {"text": "x"})
    assert names and all(n.startswith("solo__") for n in names)
    assert bare.is_error and bare.structured_content["error"] == "NOT_NAMESPACED"


async def test_failures_answer_with_the_spec_codes(anyio_backend: str, tmp_path: Path) -> None:
    servers = {"alpha": fixture_entry(tmp_path / "alpha.jsonl")}
    servers["down"] = {"command": str(tmp_path / "no-such-server")}
    config = parse_config(
        {"mcpServers": servers, "gateway": {"profile": "aggregate", "call_timeout": 10}},
        environ={},
    )
    async with serving(config) as (_, server):
        async with Client(server, mode="legacy") as client:
            codes = {}
            for name in (
                "echo",
                "alpha__echo__x",
                "gamma__echo",
                "down__echo",
                "alpha__no_such_tool",
            ):
                result = await client.call_tool(name, {})
                assert result.is_error, name
                codes[name] = result.structured_content["error"]
            with pytest.raises(MCPError) as prompt_error:
                await client.get_prompt("greet")
            with pytest.raises(MCPError) as upstream_error:
                await client.read_resource("alpha+fixture://doc/missing")
    assert codes == {
        "echo": "NOT_NAMESPACED",
        "alpha__echo__x": "NAME_INVALID",
        "gamma__echo": "UNKNOWN_SERVER",
        "down__echo": "SERVER_UNAVAILABLE",
        "alpha__no_such_tool": "TOOL_NOT_FOUND",
    }
    assert prompt_error.value.code == types.INVALID_PARAMS
    assert prompt_error.value.error.data["error"] == "NOT_NAMESPACED"
    assert upstream_error.value.code == -32002  # the upstream's own error, passed on


# ------------------------------------------------------------------ broadcast


async def test_a_failing_upstream_is_left_out_and_reported(
    anyio_backend: str, tmp_path: Path
) -> None:
    logs: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async with serving(make_config(tmp_path)) as (_, server):
        async with Client(server, mode="legacy", logging_callback=on_log) as client:
            assert not (await client.call_tool("beta__break_listing", {})).is_error
            names = [t.name for t in await every(client, "tools/list")]
            prompts = [p.name for p in await every(client, "prompts/list")]
            await client.call_tool("beta__fix_listing", {})
            again = [t.name for t in await every(client, "tools/list")]
    assert names == offered_tools("alpha") and all(p.startswith("alpha__") for p in prompts)
    warned = {str(m.data).split(":")[0] for m in logs if m.level == "warning"}
    # (the SDK client lists tools itself after a call too, so tools/list may warn twice)
    assert warned == {"beta was left out of tools/list", "beta was left out of prompts/list"}
    assert set(offered_tools("beta")) <= set(again)


async def test_the_broadcast_is_parallel(anyio_backend: str, tmp_path: Path) -> None:
    """Each upstream's listing waits for the other's to start: sent one after the other, both
    would time out (seed 004 scenario 3: "Send to all servers in parallel")."""
    started = {"alpha": anyio.Event(), "beta": anyio.Event()}
    config = make_config(tmp_path, call_timeout=5)
    runtime = AggregateRuntime.from_config(config)
    real = runtime.pool.list_all

    async def rendezvous(key: str, method: str, field: str, timeout: float | None = None) -> Any:
        started[key].set()
        with anyio.fail_after(3):
            await started["beta" if key == "alpha" else "alpha"].wait()
        return await real(key, method, field, timeout)

    try:
        await runtime.start()
        runtime.pool.list_all = rendezvous  # type: ignore[method-assign]
        merged = await runtime.broadcast(routing_kind("prompts/list"))
    finally:
        await runtime.aclose()
    assert merged.failures == []
    assert {e["name"].split("__")[0] for e in merged.entries} == {"alpha", "beta"}


def routing_kind(method: str) -> Any:
    from gatespec.profiles.aggregate.naming import LISTS

    return LISTS[method]


async def test_a_bad_cursor_is_invalid_params(anyio_backend: str, tmp_path: Path) -> None:
    async with serving(make_config(tmp_path, ["solo"], page_size=5)) as (_, server):
        async with Client(server, mode="legacy") as client:
            first = await client.list_tools()
            assert first.next_cursor
            with pytest.raises(MCPError) as exc:
                await client.list_tools(cursor="bm90LWEtY3Vyc29y")
    assert exc.value.code == types.INVALID_PARAMS


# ------------------------------------------------------------------ routing context, plugins


class Renamer(Plugin):
    """Seed 004 scenario 2: expose read_file as safe_read, map it back on the way in."""

    def tools(self, server: str, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{**t, "name": "safe_read"} if t["name"] == "read_file" else t for t in tools]

    async def before_call(self, context: Any, call: ToolCall) -> ToolCall:
        self.seen = (context.server, call.name)
        return ToolCall("read_file", call.arguments) if call.name == "safe_read" else call


class Hijacker(Plugin):
    """Rewrites a call's name into another server's namespaced name."""

    async def before_call(self, context: Any, call: ToolCall) -> ToolCall:
        return ToolCall("beta__echo", call.arguments)


async def test_plugins_see_clean_names_and_cannot_reroute(
    anyio_backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: list[object] = []
    real = routing.parse_name
    monkeypatch.setattr(routing, "parse_name", lambda v: parsed.append(v) or real(v))
    async with serving(make_config(tmp_path)) as (runtime, server):
        renamer = Renamer()
        runtime.plugins.plugins = (renamer,)
        async with Client(server, mode="legacy") as client:
            names = {t.name for t in await every(client, "tools/list")}
            parsed.clear()
            result = await client.call_tool("alpha__safe_read", {"path": "a.txt"})
            assert parsed == ["alpha__safe_read"]  # ROUTE-PARSE-ONCE
            runtime.plugins.plugins = (Hijacker(),)
            hijacked = await client.call_tool("alpha__echo", {"text": "x"})
    assert "alpha__safe_read" in names and "alpha__read_file" not in names
    assert renamer.seen == ("alpha", "safe_read")  # PLUGIN-CLEAN-NAMES
    assert not result.is_error and "read_file" in [
        c["name"] for c in calls(tmp_path / "alpha.jsonl")
    ]
    # ROUTE-NO-REEXTRACTION: still routed to alpha, which lists no "beta__echo"
    assert hijacked.is_error and hijacked.structured_content["error"] == "TOOL_NOT_FOUND"
    assert hijacked.structured_content["details"]["server"] == "alpha"
    assert not any(c["name"] == "echo" for c in calls(tmp_path / "beta.jsonl"))


async def test_the_configured_filter_and_audit_log(anyio_backend: str, tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    plugins = [
        {"type": "tool_filter", "servers": {"alpha": {"allow": ["echo", "read_*"]}}},
        {"type": "audit_log", "path": str(audit)},
    ]
    async with serving(make_config(tmp_path, plugins=plugins)) as (_, server):
        async with Client(server, mode="legacy") as client:
            names = [t.name for t in await every(client, "tools/list")]
            ok = await client.call_tool("alpha__echo", {"text": "secret words"})
            hidden = await client.call_tool("alpha__big_text", {})
    alpha = [n for n in names if n.startswith("alpha__")]
    assert alpha == ["alpha__echo", "alpha__read_file", "alpha__read_only_tool"]  # not read-file
    assert any(n.startswith("beta__") for n in names)  # another server: no rule
    assert not ok.is_error and hidden.structured_content["error"] == "TOOL_NOT_FOUND"
    lines = [json.loads(x) for x in audit.read_text().splitlines()]
    assert [(x["server"], x["tool"], x["outcome"]) for x in lines] == [
        ("alpha", "echo", "ok"),
        ("alpha", "big_text", "TOOL_NOT_FOUND"),
    ]
    assert "secret words" not in audit.read_text()


async def test_concurrent_calls_get_their_own_answers(pair: tuple[Any, Path]) -> None:
    """ROUTE-RESPONSE-CORRELATION: answers are matched by request id, whatever order the
    upstreams answer in."""
    results: dict[str, str] = {}
    server, _ = pair
    async with Client(server, mode="legacy") as client:

        async def one(name: str, args: dict[str, Any]) -> None:
            results[name] = (await client.call_tool(name, args)).content[0].text

        async with anyio.create_task_group() as tg:
            tg.start_soon(one, "alpha__slow", {"seconds": 0.5})
            tg.start_soon(one, "beta__echo", {"text": "beta"})
            tg.start_soon(one, "alpha__echo", {"text": "alpha"})
    assert results == {"alpha__slow": "slept", "beta__echo": "beta", "alpha__echo": "alpha"}


# ------------------------------------------------------------------ capabilities, changes


async def test_capabilities_are_what_the_upstreams_offer(
    anyio_backend: str, tmp_path: Path
) -> None:
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps([{"name": "ping", "inputSchema": {"type": "object"}}]))
    stub_only = parse_config(
        {
            "mcpServers": {"s": {"type": "stub", "catalog": str(catalog)}},
            "gateway": {"profile": "aggregate"},
        },
        environ={},
    )
    async with serving(stub_only) as (_, server):
        async with Client(server, mode="legacy") as client:
            caps = client.server_capabilities
            assert caps.tools is not None and caps.tools.list_changed
            assert (caps.prompts, caps.resources, caps.completions, caps.logging) == (None,) * 4
    async with serving(make_config(tmp_path, ["solo"])) as (_, server):
        for mode in ("legacy", "auto"):  # auto: 2026-07-28's server/discover
            async with Client(server, mode=mode) as client:
                caps = client.server_capabilities
                assert caps.prompts is not None and caps.prompts.list_changed
                assert caps.resources is not None and caps.resources.subscribe
                assert caps.completions is not None


@pytest.mark.parametrize("mode", ERAS)
async def test_an_upstream_list_change_reaches_the_client(
    anyio_backend: str, tmp_path: Path, mode: str
) -> None:
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with serving(make_config(tmp_path, ["solo"])) as (_, server):
        async with Client(server, mode=mode, message_handler=on_message) as client:
            if mode == "legacy":
                await client.call_tool("solo__add_tool", {})
                with anyio.fail_after(10):
                    await changed.wait()
            else:
                async with client.listen(tools_list_changed=True) as sub:
                    await client.call_tool("solo__add_tool", {})
                    with anyio.fail_after(10):
                        await sub.__anext__()
            names = [t.name for t in await every(client, "tools/list")]
    assert "solo__added_1" in names


@pytest.mark.parametrize("mode", ERAS)
async def test_resource_updates_reach_their_subscribers(
    anyio_backend: str, tmp_path: Path, mode: str
) -> None:
    uri = "solo+fixture://doc/readme"
    updated: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(str(message.params.uri))

    async with serving(make_config(tmp_path, ["solo"])) as (_, server):
        async with Client(server, mode=mode, message_handler=on_message) as client:
            if mode == "legacy":
                with warnings.catch_warnings():  # removed in 2026-07-28, not in this era
                    warnings.simplefilter("ignore")
                    await client.subscribe_resource(uri)
                    await _touched(client)
                    with anyio.fail_after(10):
                        while not updated:
                            await anyio.sleep(0.05)
                    await client.unsubscribe_resource(uri)
            else:
                async with client.listen(resource_subscriptions=[uri]) as sub:
                    await _touched(client)
                    with anyio.fail_after(10):
                        event = await sub.__anext__()
                    assert isinstance(event, ResourceUpdated) and event.uri == uri
                    updated.append(uri)
    assert updated[0] == uri
    # The upstream (reached in 2026-07-28) was subscribed to the clean URI in its listen filter.
    listened = [c["arguments"] for c in calls(tmp_path / "solo.jsonl") if c["name"] == "listen"]
    assert {"uris": ["fixture://doc/readme"]} in listened


async def _touched(client: Client) -> None:
    """touch fails until the upstream's listen filter names the URI (it is re-listened)."""
    with anyio.fail_after(10):
        while (await client.call_tool("solo__touch", {"uri": "fixture://doc/readme"})).is_error:
            await anyio.sleep(0.05)


# ------------------------------------------------------------------ catalog


def test_the_catalog_lists_every_name_and_every_entry_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """AGG-UNOFFERED-NAMES-LISTED: nothing is dropped silently; REGISTRY-COMPACT-LIST."""
    from gatespec import cli

    config = tmp_path / "gatespec.json"
    body = {
        "mcpServers": {"alpha": fixture_entry(tmp_path / "alpha.jsonl")},
        "gateway": {"profile": "aggregate"},
    }
    config.write_text(json.dumps(body))
    assert cli.main(["catalog", "--config", str(config), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    listed = {(t["list"], t["name"]) for t in doc["tools"]}
    assert ("tools/list", "alpha__echo") in listed and ("prompts/list", "alpha__greet") in listed
    assert ("resources/templates/list", "alpha+fixture://item/{id}") in listed
    left_out = {e["tool"]: e["reason"] for e in doc["excluded"] if e["server"] == "alpha"}
    for entry in (
        f"prompts/list {BAD_PROMPT}",
        f"resources/list {NO_SCHEME_URI}",
        "tools/list read.file",
    ):
        assert entry in left_out and left_out[entry], entry
    assert "AM-AGGREGATE-SEPARATOR" in left_out[f"prompts/list {BAD_PROMPT}"]
    assert "AM-RESOURCE-URI" in left_out[f"resources/list {NO_SCHEME_URI}"]

    assert cli.main(["catalog", "--config", str(config), "--compact"]) == 0
    compact = json.loads(capsys.readouterr().out)
    assert all(set(entry) == {"name", "description", "server"} for entry in compact)
    echo = next(e for e in compact if e["name"] == "alpha__echo")
    assert echo == {
        "name": "alpha__echo",
        "description": "Echo the text back, optionally repeated.",
        "server": "alpha",
    }
