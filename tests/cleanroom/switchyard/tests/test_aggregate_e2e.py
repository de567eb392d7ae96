"""End-to-end: profile `aggregate` over stdio in front of upstream_fixture.py.

Expected behaviour is quoted from seeds 001 (gateway spec) and 004 (Gatekit
routing model)."""

from __future__ import annotations

import time

import anyio
import mcp.types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from conftest import stdio_gateway, upstream, write_config

pytestmark = pytest.mark.anyio


def _two_plus_broken(tmp_path, **extra):
    return write_config(
        tmp_path,
        {"fixture": upstream("main"), "alt": upstream("alt"), "broken": {"command": "/nonexistent/switchyard-test"}},
        defaultTimeout=6,
        **extra,
    )


async def _rpc_error(coro) -> MCPError:
    with pytest.raises(MCPError) as info:
        await coro
    return info.value


async def test_capabilities_and_namespaced_merged_lists(tmp_path):
    async with Client(stdio_gateway("aggregate", _two_plus_broken(tmp_path)), mode="legacy") as c:
        caps = c.server_capabilities
        # 001 "Initialize server" / "Advertise capabilities": tools, prompts, resources
        assert caps.tools is not None and caps.prompts is not None and caps.resources is not None
        assert caps.tools.list_changed is True

        tools = await c.list_tools()
        names = [t.name for t in tools.tools]
        # 004 "Multi-Server Disambiguation": same clean name, two namespaces
        assert "fixture__echo" in names and "alt__echo" in names
        assert "fixture__add" in names and "alt__add" not in names
        # every exposed name is server__name
        assert all(n.split("__", 1)[0] in ("fixture", "alt") for n in names)
        # a name that cannot be namespaced (contains "__") is left out
        assert not any("bad__name" in n for n in names)
        # full schema is carried through (001 "Store full schema")
        add = next(t for t in tools.tools if t.name == "fixture__add")
        assert add.input_schema["required"] == ["a", "b"]
        assert add.output_schema["properties"]["sum"]["type"] == "integer"
        # partial result: the broken upstream is reported, not fatal
        assert tools.meta["switchyard/partial"]["failedServers"].keys() == {"broken"}

        prompts = await c.list_prompts()
        assert sorted(p.name for p in prompts.prompts) == ["alt__greet", "fixture__greet"]  # 001 "List prompts"

        resources = await c.list_resources()
        uris = sorted(r.uri for r in resources.resources)
        assert uris == ["alt__note://hello", "fixture__note://hello"]
        templates = await c.list_resource_templates()
        assert sorted(t.uri_template for t in templates.resource_templates) == [
            "alt__note://{key}",
            "fixture__note://{key}",
        ]


async def test_routing_to_the_right_upstream_with_clean_names(tmp_path):
    async with Client(stdio_gateway("aggregate", _two_plus_broken(tmp_path)), mode="legacy") as c:
        r = await c.call_tool("fixture__echo", {"text": "hi"})
        assert r.structured_content == {"text": "hi", "server": "main"}
        r = await c.call_tool("alt__echo", {"text": "hi"})
        assert r.structured_content == {"text": "hi", "server": "alt"}
        r = await c.call_tool("fixture__add", {"a": 2, "b": 3})
        assert r.structured_content == {"sum": 5} and not r.is_error

        p = await c.get_prompt("alt__greet", {"who": "bob"})  # 001 "Get prompt"
        assert p.messages[0].content.text == "Hello, bob! (alt)"

        rr = await c.read_resource("fixture__note://hello")  # 001 "Read resource" (URI prefix)
        assert rr.contents[0].text == "Hello from main"
        assert rr.contents[0].uri == "fixture__note://hello"  # namespaced again at egress
        rr = await c.read_resource("alt__note://hello")
        assert rr.contents[0].text == "Hello from alt"


async def test_incoming_meta_is_not_forwarded(tmp_path):
    async with Client(stdio_gateway("aggregate", _two_plus_broken(tmp_path)), mode="legacy") as c:
        r = await c.call_tool("fixture__meta_probe", {}, meta={"custom/key": "secret", "progressToken": 7})
        seen = r.structured_content["meta"] or {}
        assert "custom/key" not in seen and "progressToken" not in seen


async def test_routing_errors_use_seed_wording(tmp_path):
    async with Client(stdio_gateway("aggregate", _two_plus_broken(tmp_path)), mode="legacy") as c:
        e = await _rpc_error(c.call_tool("echo", {"text": "x"}))
        assert e.code == types.INVALID_PARAMS
        assert "No server specified for non-broadcast request" in e.message
        assert "Tool 'echo' is not namespaced" in e.message

        e = await _rpc_error(c.call_tool("nope__echo", {}))
        assert e.message == "Unknown server: nope"  # 004 "Unknown Server"

        e = await _rpc_error(c.call_tool("fixture__nope", {}))
        assert e.message.startswith("Tool not found")  # 001 "Handle unknown tool"

        e = await _rpc_error(c.call_tool("fixture__bad__name", {}))
        assert e.message.startswith("Invalid namespace format")  # 004 "Invalid Namespace"

        e = await _rpc_error(c.call_tool("broken__x", {}))
        assert e.message == "Server broken unavailable"  # 004 "Connection Failures"

        e = await _rpc_error(c.get_prompt("greet", {}))
        assert "Prompt 'greet' is not namespaced" in e.message
        e = await _rpc_error(c.get_prompt("fixture__nope", {}))
        assert e.message.startswith("Prompt not found")
        e = await _rpc_error(c.read_resource("note://hello"))
        assert "is not namespaced" in e.message
        e = await _rpc_error(c.read_resource("ghost__note://hello"))
        assert e.message == "Unknown server: ghost"


async def test_upstream_errors_propagate(tmp_path):
    async with Client(stdio_gateway("aggregate", _two_plus_broken(tmp_path)), mode="legacy") as c:
        # 001 "Propagate errors": a backend JSON-RPC error reaches the caller unchanged
        e = await _rpc_error(c.call_tool("fixture__boom", {}))
        assert (e.code, e.message, e.data) == (-32050, "boom happened", {"why": "because"})
        # a tool-level error result passes through as a result
        r = await c.call_tool("fixture__fail", {})
        assert r.is_error and r.content[0].text == "it failed"
        # input is validated against the stored schema (001 "Store full schema")
        r = await c.call_tool("fixture__add", {"a": "x"})
        assert r.is_error and "Invalid arguments" in r.content[0].text


async def test_timeout_cancels_and_reports(tmp_path):
    async with Client(stdio_gateway("aggregate", _two_plus_broken(tmp_path)), mode="legacy") as c:
        start = time.monotonic()
        e = await _rpc_error(c.call_tool("fixture__sleep", {"seconds": 30}))
        assert time.monotonic() - start < 15
        assert e.code == types.REQUEST_TIMEOUT and e.message.startswith("Timeout")  # 001 "Enforce timeout"
        # the gateway (and the upstream) keep working afterwards
        r = await c.call_tool("fixture__echo", {"text": "still here"})
        assert r.structured_content["text"] == "still here"


async def test_list_changed_is_relayed_and_catalog_updated(tmp_path):
    got: list[str] = []

    async def on_message(msg):
        if isinstance(msg, types.ToolListChangedNotification):
            got.append(msg.method)

    async with Client(stdio_gateway("aggregate", _two_plus_broken(tmp_path)), mode="legacy",
                      message_handler=on_message) as c:
        before = {t.name for t in (await c.list_tools()).tools}
        assert "fixture__extra" not in before
        got.clear()
        await c.call_tool("fixture__toggle_extra", {})
        with anyio.fail_after(10):
            while not got:
                await anyio.sleep(0.05)
        after = {t.name for t in (await c.list_tools()).tools}
        assert "fixture__extra" in after
        r = await c.call_tool("fixture__extra", {})
        assert r.content[0].text == "extra!"


async def test_single_server_still_requires_namespace(tmp_path):
    # 004 Scenario 4 / Principle 5: no single-server special case.
    cfg = write_config(tmp_path, {"filesystem": upstream("main")})
    async with Client(stdio_gateway("aggregate", cfg), mode="legacy") as c:
        assert all(t.name.startswith("filesystem__") for t in (await c.list_tools()).tools)
        e = await _rpc_error(c.call_tool("echo", {"text": "x"}))
        assert "is not namespaced" in e.message
        r = await c.call_tool("filesystem__echo", {"text": "x"})
        assert r.structured_content["text"] == "x"


async def test_crashed_upstream_does_not_take_the_gateway_down(tmp_path):
    cfg = write_config(tmp_path, {"fixture": upstream("main"), "alt": upstream("alt")},
                       defaultTimeout=5, reconnectBackoff=0.5)
    async with Client(stdio_gateway("aggregate", cfg), mode="legacy") as c:
        await c.list_tools()
        e = await _rpc_error(c.call_tool("fixture__crash", {}))
        assert e.message == "Server fixture unavailable"
        # the other upstream keeps serving, lists are partial
        r = await c.call_tool("alt__echo", {"text": "ok"})
        assert r.structured_content["server"] == "alt"
        # ... and the crashed one is reconnected
        with anyio.fail_after(20):
            while True:
                try:
                    r = await c.call_tool("fixture__echo", {"text": "back"})
                    break
                except MCPError:
                    await anyio.sleep(0.3)
        assert r.structured_content["text"] == "back"


async def test_slow_upstream_gives_partial_results(tmp_path):
    cfg = write_config(tmp_path, {"fast": upstream("main"), "slow": upstream("alt", "--startup-delay", "20")},
                       defaultTimeout=2, connectTimeout=60)
    async with Client(stdio_gateway("aggregate", cfg), mode="legacy") as c:
        with anyio.fail_after(15):  # let the fast upstream finish starting (machine may be loaded)
            while "fast__echo" not in {t.name for t in (await c.list_tools()).tools}:
                await anyio.sleep(0.2)
        start = time.monotonic()
        tools = await c.list_tools()
        assert time.monotonic() - start < 6  # the slow upstream costs at most defaultTimeout
        names = {t.name for t in tools.tools}
        assert "fast__echo" in names and not any(n.startswith("slow__") for n in names)
        assert "slow" in tools.meta["switchyard/partial"]["failedServers"]


async def test_modern_protocol_client_and_listen(tmp_path):
    """The same gateway serves 2026-07-28 clients; list_changed arrives on subscriptions/listen."""
    async with Client(stdio_gateway("aggregate", _two_plus_broken(tmp_path)), mode="auto") as c:
        assert c.protocol_version == "2026-07-28"
        r = await c.call_tool("fixture__echo", {"text": "modern"})
        assert r.structured_content["text"] == "modern"
        e = await _rpc_error(c.call_tool("nope__x", {}))
        assert e.message == "Unknown server: nope"
        await c.list_tools()
        async with c.listen(tools_list_changed=True) as sub:
            await c.call_tool("fixture__toggle_extra", {})
            with anyio.fail_after(10):
                event = await sub.__anext__()
            from mcp.client.subscriptions import ToolsListChanged

            assert isinstance(event, ToolsListChanged)


async def test_upstream_over_streamable_http(tmp_path):
    from conftest import http_upstream

    with http_upstream("alt") as url:
        cfg = write_config(tmp_path, {"remote": {"url": url}})
        async with Client(stdio_gateway("aggregate", cfg), mode="legacy") as c:
            r = await c.call_tool("remote__echo", {"text": "over http"})
            assert r.structured_content == {"text": "over http", "server": "alt"}
