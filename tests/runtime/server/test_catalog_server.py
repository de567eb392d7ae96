"""The server layer in-process: tools/list, argument checking, error results, list_changed.

Driven through the official mcp Client connected to the Server object, in both protocol eras
(mode="legacy" runs the handshake over memory streams; the default drives 2026-07-28 per
request). The runtime is tests/fixtures/fake_gateway.py's FakeRuntime.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from jsonschema import Draft202012Validator
from mcp import Client
from mcp.server.subscriptions import ToolsListChanged

from gatespec.server import MetaToolHandlers, Reply, build_server, error_result
from gatespec_surface.descriptors import PROFILES, meta_tool, tools_for_profile
from gatespec_surface.errors import ErrorCode, GatewayError
from gatespec_surface.schemas import MODEL_SCHEMAS

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]


def _load_fixture() -> Any:
    path = Path(__file__).resolve().parents[2] / "fixtures" / "fake_gateway.py"
    spec = importlib.util.spec_from_file_location("fake_gateway", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("fake_gateway", module)
    spec.loader.exec_module(module)
    return module


fake = _load_fixture()
MODES = ["legacy", "2026-07-28"]


def runtime(mode: str = "gateway") -> Any:
    return fake.FakeRuntime(mode, fake.sample_tools())


def wire(tools: list[types.Tool]) -> list[dict[str, Any]]:
    return [t.model_dump(by_alias=True, exclude_none=True) for t in tools]


def payload_of(result: types.CallToolResult) -> dict[str, Any]:
    """The error payload, checked to be the same in text and structured form."""
    assert result.is_error is True
    assert len(result.content) == 1 and isinstance(result.content[0], types.TextContent)
    payload = json.loads(result.content[0].text)
    assert payload == result.structured_content
    Draft202012Validator(MODEL_SCHEMAS["ErrorPayload"]).validate(payload)
    return dict(payload)


# -- tools/list ---------------------------------------------------------------------------


@pytest.mark.parametrize("client_mode", MODES)
async def test_gateway_lists_exactly_its_meta_tools(client_mode: str) -> None:
    async with Client(build_server(runtime("gateway")), mode=client_mode, cache=None) as client:
        listed = await client.list_tools()
    assert wire(listed.tools) == wire(tools_for_profile("gateway"))
    # seed 000 §4.2: "exactly three meta-tools" — written here from the seed, not the spec
    assert sorted(t.name for t in listed.tools) == ["tool_browse", "tool_execute", "tool_view"]


@pytest.mark.parametrize("client_mode", MODES)
async def test_transparent_lists_meta_tools_then_stripped_entries(client_mode: str) -> None:
    rt = runtime("transparent")
    async with Client(build_server(rt), mode=client_mode, cache=None) as client:
        listed = await client.list_tools()
    assert wire(listed.tools) == wire(tools_for_profile("transparent") + rt.stripped_tools())
    # seed 000 §4.1's two meta-tools, plus tool_view (AM-TRANSPARENT-VIEW)
    meta = ["tool_hydrate", "tool_execute", "tool_view"]
    assert [t.name for t in listed.tools[:3]] == meta
    stripped = listed.tools[3:]
    assert len(stripped) == len(rt.tools)
    assert all(t.input_schema == {"type": "object"} for t in stripped)


async def test_a_failing_catalog_still_lists_the_meta_tools(caplog: Any) -> None:
    rt = runtime("transparent")

    def broken(identity: Any) -> list[types.Tool]:
        raise RuntimeError("catalog exploded")

    rt.stripped_tools = broken
    with caplog.at_level(logging.ERROR):
        async with Client(build_server(rt), cache=None) as client:
            listed = await client.list_tools()
    assert [t.name for t in listed.tools] == ["tool_hydrate", "tool_execute", "tool_view"]
    assert "catalog exploded" in caplog.text


def test_a_profile_without_meta_tools_is_refused() -> None:
    with pytest.raises(ValueError, match="aggregate"):
        MetaToolHandlers(runtime("aggregate"))


# -- tools/call: success ------------------------------------------------------------------


@pytest.mark.parametrize("client_mode", MODES)
async def test_browse_returns_the_runtime_text_and_structure(client_mode: str) -> None:
    rt = runtime("gateway")
    expected = await rt.browse("local", "read", None)
    async with Client(build_server(rt), mode=client_mode, cache=None) as client:
        result = await client.call_tool("tool_browse", {"query": "read"})
    assert result.is_error is False
    assert [c.text for c in result.content if isinstance(c, types.TextContent)] == [expected.text]
    assert result.structured_content == expected.structured
    assert rt.calls[-1] == ("browse", "local", ("read", None))


async def test_schema_defaults_are_filled_in() -> None:
    rt = runtime("gateway")
    tool_id = next(iter(rt.tools))
    async with Client(build_server(rt), cache=None) as client:
        await client.call_tool("tool_execute", {"tool_id": tool_id})
        await client.call_tool("tool_view", {"handle": fake.HANDLE})
    assert rt.calls[-2] == ("execute", "local", (tool_id, {}))
    assert rt.calls[-1] == ("view", "local", (fake.HANDLE, "all"))


async def test_transparent_hydrate_and_execute_by_wire_name() -> None:
    rt = runtime("transparent")
    tool_id = next(iter(rt.tools))
    wire_name = rt.stripped_tools()[0].name
    async with Client(build_server(rt, fallback_session="me"), cache=None) as client:
        hydrated = await client.call_tool("tool_hydrate", {"tool_id": wire_name})
        executed = await client.call_tool(
            "tool_execute", {"tool_id": wire_name, "args": {"path": "/x"}}
        )
    assert hydrated.structured_content is not None
    assert hydrated.structured_content["tool_id"] == tool_id
    assert executed.structured_content is not None
    assert executed.structured_content["provenance"] == {"tool_id": tool_id, "session": "me"}


# -- tools/call: errors -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "tool_browse takes exactly one of query or path; got neither"),
        ({"query": "x", "path": "/"}, "tool_browse takes exactly one of query or path; got both"),
        ({"path": "/fs", "limit": 3}, "tool_browse has no argument 'limit'; it takes query, path"),
        ({"query": ""}, "argument 'query' is empty"),
        ({"query": 7}, "argument 'query' must be a string, not a number"),
    ],
)
async def test_browse_argument_errors_name_the_argument(
    arguments: dict[str, Any], message: str
) -> None:
    rt = runtime("gateway")
    async with Client(build_server(rt), cache=None) as client:
        result = await client.call_tool("tool_browse", arguments)
    payload = payload_of(result)
    assert payload["error"] == "ARGS_INVALID"
    assert payload["message"] == message
    assert rt.calls == []  # never reached the runtime


@pytest.mark.parametrize("path", ["/fs/", "//fs", "/fs\n", "/Fs", "/fs/*/x", "/" + "a" * 300])
async def test_a_malformed_path_is_path_invalid(path: str) -> None:
    rt = runtime("gateway")
    async with Client(build_server(rt), cache=None) as client:
        payload = payload_of(await client.call_tool("tool_browse", {"path": path}))
    assert payload["error"] == "PATH_INVALID"
    assert payload["message"].startswith("argument 'path': path ")
    assert payload["path"] == (path if len(path) <= 512 else "")
    assert payload["details"]["argument"] == "path"
    assert rt.calls == []


@pytest.mark.parametrize(
    ("tool", "arguments", "code", "argument"),
    [
        ("tool_execute", {}, "ARGS_INVALID", "tool_id"),
        ("tool_execute", {"tool_id": "not an id"}, "ARGS_INVALID", "tool_id"),
        ("tool_execute", {"tool_id": "fs:x", "args": "nope"}, "ARGS_INVALID", "args"),
        ("tool_view", {"handle": "art_1"}, "VIEW_FAILED", "handle"),  # artifact_handle grammar
        ("tool_view", {"handle": fake.HANDLE, "selector": "lines:x"}, "ARGS_INVALID", "selector"),
    ],
)
async def test_argument_errors_of_other_meta_tools(
    tool: str, arguments: dict[str, Any], code: str, argument: str
) -> None:
    rt = runtime("gateway")
    async with Client(build_server(rt), cache=None) as client:
        payload = payload_of(await client.call_tool(tool, arguments))
    assert payload["error"] == code
    assert payload["details"]["argument"] == argument
    assert argument in payload["message"]
    assert rt.calls == []


@pytest.mark.parametrize("client_mode", MODES)
async def test_a_runtime_gateway_error_becomes_its_payload(client_mode: str) -> None:
    async with Client(build_server(runtime()), mode=client_mode, cache=None) as client:
        payload = payload_of(await client.call_tool("tool_browse", {"path": "/nope"}))
    assert payload == {
        "error": "PATH_NOT_FOUND",
        "message": "nothing at /nope",
        "path": "/nope",
        "details": {},
    }


async def test_an_unexpected_exception_is_an_upstream_error_and_is_logged(caplog: Any) -> None:
    with caplog.at_level(logging.ERROR, logger="gatespec.server.catalog_server"):
        async with Client(build_server(runtime()), cache=None) as client:
            payload = payload_of(await client.call_tool("tool_browse", {"query": "boom"}))
    assert payload["error"] == "UPSTREAM_ERROR"
    assert "RuntimeError: kaboom" in payload["message"]
    assert payload["details"] == {"exception": "RuntimeError"}
    assert "tool_browse failed unexpectedly" in caplog.text


async def test_a_result_that_breaks_the_output_schema_is_reported() -> None:
    async with Client(build_server(runtime()), cache=None) as client:
        payload = payload_of(await client.call_tool("tool_browse", {"query": "bad-output"}))
    assert payload["error"] == "UPSTREAM_ERROR"
    assert "breaks its output schema" in payload["message"]


async def test_a_gateway_error_inside_an_exception_group_is_unwrapped() -> None:
    rt = runtime()

    async def browse(session: str, query: str | None, path: str | None) -> Reply:
        async with anyio.create_task_group() as tg:

            async def fail() -> None:
                raise GatewayError(ErrorCode.PATH_NOT_FOUND, "deep", path or "")

            tg.start_soon(fail)
        raise AssertionError("unreachable")

    rt.browse = browse
    async with Client(build_server(rt), cache=None) as client:
        payload = payload_of(await client.call_tool("tool_browse", {"path": "/fs"}))
    assert (payload["error"], payload["message"]) == ("PATH_NOT_FOUND", "deep")


async def test_calling_a_stripped_entry_directly_points_to_tool_execute() -> None:
    rt = runtime("transparent")
    name = rt.stripped_tools()[0].name
    async with Client(build_server(rt), cache=None) as client:
        payload = payload_of(await client.call_tool(name, {"path": "/x"}))
        other = payload_of(await client.call_tool("tool_browse", {"query": "x"}))
    assert payload["error"] == "TOOL_NOT_FOUND"
    assert f"Call tool_execute with tool_id={name!r}" in payload["message"]
    assert payload["path"] == name
    assert other["message"] == (
        "tool_browse is not part of the transparent profile; this server's tools are "
        "tool_hydrate, tool_execute, tool_view."
    )
    assert rt.calls == []


async def test_an_unknown_tool_in_gateway_mode() -> None:
    async with Client(build_server(runtime()), cache=None) as client:
        payload = payload_of(await client.call_tool("read_file", {}))
    assert payload["error"] == "TOOL_NOT_FOUND"
    assert "tool_browse" in payload["message"] and "tool_execute" in payload["message"]


def test_error_result_shape() -> None:
    error = GatewayError(ErrorCode.VIEW_FAILED, "gone", "art_x")
    assert payload_of(error_result(error)) == error.to_payload()
    text_only = error_result(error, structured=False)
    assert text_only.structured_content is None
    assert [c.text for c in text_only.content if isinstance(c, types.TextContent)] == [
        json.dumps(error.to_payload())
    ]


async def test_error_structure_follows_whether_output_schemas_are_advertised(
    monkeypatch: Any,
) -> None:
    # AM-OUTPUT-SCHEMA-OFF-WIRE: no output schemas in tools/list, so errors are structured.
    assert all(t.output_schema is None for t in tools_for_profile("gateway"))
    assert MetaToolHandlers(runtime()).structured_errors is True
    assert MetaToolHandlers(runtime(), structured_errors=False).structured_errors is False
    # Were they advertised, TS SDK 1.x clients would validate error payloads against them.
    import gatespec.server.catalog_server as catalog_server

    def with_outputs(profile: str) -> list[types.Tool]:
        return [meta_tool(n, with_output_schema=True) for n in PROFILES[profile].meta_tools]

    monkeypatch.setattr(catalog_server, "tools_for_profile", with_outputs)
    assert MetaToolHandlers(runtime()).structured_errors is False
    server = build_server(runtime())
    async with Client(server, cache=None) as client:
        result = await client.call_tool("tool_browse", {})
    assert result.is_error is True and result.structured_content is None
    assert json.loads(result.content[0].text)["error"] == "ARGS_INVALID"  # type: ignore[union-attr]


# -- sessions ----------------------------------------------------------------------------


@pytest.mark.parametrize("client_mode", MODES)
async def test_in_process_calls_use_the_fallback_session(client_mode: str) -> None:
    rt = runtime()
    server = build_server(rt, fallback_session="stdio")
    async with Client(server, mode=client_mode, cache=None) as client:
        await client.call_tool("tool_browse", {"query": "file"})
    assert rt.calls[-1][1] == "stdio"


# -- list_changed ------------------------------------------------------------------------


async def test_capabilities_advertise_list_changed_only_when_the_list_can_change() -> None:
    for mode, announces in (("gateway", False), ("transparent", True)):
        server = build_server(runtime(mode))
        async with Client(server, mode="legacy", cache=None) as client:
            assert client.server_capabilities.tools is not None
            assert bool(client.server_capabilities.tools.list_changed) is announces
        async with Client(server, cache=None) as client:  # auto: server/discover
            assert client.protocol_version == "2026-07-28"
            tools = client.server_capabilities.tools
            assert tools is not None and bool(tools.list_changed) is announces


async def test_list_changed_reaches_a_legacy_client() -> None:
    rt = runtime("transparent")
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    touch = next(t for t, v in rt.tools.items() if v["name"] == "touch")
    server = build_server(rt)
    async with Client(server, mode="legacy", message_handler=on_message, cache=None) as client:
        before = len((await client.list_tools()).tools)
        await client.call_tool("tool_execute", {"tool_id": touch})
        with anyio.fail_after(5):
            await changed.wait()
        assert len((await client.list_tools()).tools) == before + 1
    assert server.notifier is not None


async def test_list_changed_reaches_a_2026_subscriber() -> None:
    rt = runtime("transparent")
    touch = next(t for t, v in rt.tools.items() if v["name"] == "touch")
    async with Client(build_server(rt), mode="2026-07-28", cache=None) as client:
        async with client.listen(tools_list_changed=True) as subscription:
            await client.call_tool("tool_execute", {"tool_id": touch})
            with anyio.fail_after(5):
                event = await subscription.__anext__()
    assert event == ToolsListChanged()


async def test_gateway_mode_does_not_subscribe_to_catalog_changes() -> None:
    rt = runtime("gateway")
    server = build_server(rt)
    assert server.notifier is None and rt.listeners == []
    assert build_server(runtime("gateway"), notify_list_changed=True).notifier is not None


# ---------------------------------------------------------------- arguments the runtime needs
# Seed 000 §4.1/§4.2 call tool_hydrate(tool_id), tool_execute(tool_id, args), tool_view(handle,
# selector); seed 003 Decision 4 call/batch take {operation, input}. Without the argument the
# operation needs, the answer is ARGS_INVALID (§3.4, §4.4) even when the spec's input schema
# no longer lists it as required (issue 21: tool_hydrate({}) answered UPSTREAM_ERROR with a
# Python TypeError once `required` was dropped).


def _without_required(monkeypatch: Any, tool: str) -> None:
    from gatespec.server import arguments

    schema = json.loads(json.dumps(arguments.META_TOOL_INPUT_SCHEMAS[tool]))
    schema.pop("required", None)
    for prop in schema.get("properties", {}).values():
        prop.get("items", {}).pop("required", None)
    monkeypatch.setitem(arguments.META_TOOL_INPUT_SCHEMAS, tool, schema)


@pytest.mark.parametrize(
    ("profile", "tool", "arguments", "argument"),
    [
        ("transparent", "tool_hydrate", {}, "tool_id"),
        ("gateway", "tool_execute", {"args": {}}, "tool_id"),
        ("gateway", "tool_view", {"selector": "all"}, "handle"),
    ],
)
async def test_a_missing_needed_argument_is_args_invalid_even_when_the_spec_drops_required(
    monkeypatch: Any, profile: str, tool: str, arguments: dict[str, Any], argument: str
) -> None:
    _without_required(monkeypatch, tool)
    rt = runtime(profile)
    async with Client(build_server(rt), cache=None) as client:
        payload = payload_of(await client.call_tool(tool, arguments))
    assert payload["error"] == "ARGS_INVALID"
    assert payload["details"]["argument"] == argument
    assert f"missing required argument {argument!r}" in payload["message"]
    assert rt.calls == []


@pytest.mark.parametrize(
    ("tool", "arguments", "argument"),
    [
        ("tool_hydrate", {}, "tool_id"),
        ("tool_execute", {}, "tool_id"),
        ("tool_view", {}, "handle"),
        ("schema", {}, "operation"),
        ("call", {"input": {}}, "operation"),
        ("batch", {}, "calls"),
        ("batch", {"calls": [{"operation": "/a/b"}, {"input": {}}]}, "calls[1].operation"),
    ],
)
def test_the_argument_checker_needs_what_the_operation_needs(
    monkeypatch: Any, tool: str, arguments: dict[str, Any], argument: str
) -> None:
    from gatespec.server.arguments import ArgumentChecker

    _without_required(monkeypatch, tool)
    with pytest.raises(GatewayError) as err:
        ArgumentChecker(tool).check(arguments)
    assert err.value.code is ErrorCode.ARGS_INVALID
    assert err.value.details["argument"] == argument


def test_a_needed_argument_the_schema_does_not_declare_is_refused_at_start(
    monkeypatch: Any,
) -> None:
    """A spec that renames an argument the runtime needs stops the server from starting, not
    every call at run time."""
    from gatespec.server import arguments

    schema = json.loads(json.dumps(arguments.META_TOOL_INPUT_SCHEMAS["tool_hydrate"]))
    schema["properties"] = {"id": schema["properties"].pop("tool_id")}
    schema["required"] = ["id"]
    monkeypatch.setitem(arguments.META_TOOL_INPUT_SCHEMAS, "tool_hydrate", schema)
    with pytest.raises(ValueError, match="no argument 'tool_id'"):
        arguments.ArgumentChecker("tool_hydrate")


# ---------------------------------------------------------------- profiles.yaml lists_upstream_tools


def test_lists_upstream_tools_decides_what_a_meta_tool_server_lists(monkeypatch: Any) -> None:
    """profiles.yaml lists_upstream_tools is read: "stripped" gets a meta-tool server that
    lists stripped entries, "none" one that lists only meta-tools; a profile without meta-tools
    (the aggregate one, served by its own server: tests/runtime/profiles) is refused."""
    import dataclasses

    from gatespec.server import catalog_server

    rt = runtime("transparent")
    assert MetaToolHandlers(rt).lists_stripped is True
    profiles = dict(catalog_server.PROFILES)
    monkeypatch.setattr(catalog_server, "PROFILES", profiles)
    profiles["transparent"] = dataclasses.replace(
        profiles["transparent"], lists_upstream_tools="none"
    )
    assert MetaToolHandlers(rt).lists_stripped is False
    assert [t.name for t in MetaToolHandlers(rt).list_tools()] == list(
        PROFILES["transparent"].meta_tools
    )

    class Aggregate:
        profile = "aggregate"

    with pytest.raises(ValueError, match="has no meta-tools"):
        build_server(Aggregate())  # type: ignore[arg-type]
