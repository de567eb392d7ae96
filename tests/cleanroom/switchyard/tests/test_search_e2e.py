"""End-to-end: profile `search` (seed 003, ADR-041) over stdio."""

from __future__ import annotations

import mcp.types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from conftest import stdio_gateway, upstream, write_config

pytestmark = pytest.mark.anyio


def _config(tmp_path, **extra):
    return write_config(
        tmp_path,
        {
            "fixture": upstream("main", operationTypes={"toggle_extra": "subscription"}),
            "alt": upstream("alt"),
        },
        defaultTimeout=6,
        internalOperations=["/fixture/meta_probe"],
        **extra,
    )


async def test_exactly_four_meta_tools(tmp_path):
    async with Client(stdio_gateway("search", _config(tmp_path)), mode="legacy") as c:
        tools = (await c.list_tools()).tools
        assert [t.name for t in tools] == ["search", "schema", "call", "batch"]  # Decision 1
        caps = c.server_capabilities
        assert caps.prompts is None and caps.resources is None


async def test_search_returns_names_namespaces_types_descriptions_only(tmp_path):
    async with Client(stdio_gateway("search", _config(tmp_path)), mode="legacy") as c:
        r = await c.call_tool("search", {})
        assert not r.is_error
        ops = r.structured_content["operations"]
        for op in ops:
            assert set(op) == {"name", "namespace", "type", "description"}  # Decision 3
            assert op["type"] in ("query", "mutation")
        by_name = {op["name"]: op for op in ops}
        assert by_name["/fixture/add"] == {
            "name": "/fixture/add", "namespace": "fixture", "type": "query", "description": "Add two integers."}
        assert by_name["/fixture/write_note"]["type"] == "mutation"
        # short description: first line only
        assert by_name["/fixture/echo"]["description"] == "Echo the given text back (main)."
        # Decision 2: subscriptions are filtered out; Assumption 4: Internal ops too
        assert "/fixture/toggle_extra" not in by_name and "/fixture/meta_probe" not in by_name

        r = await c.call_tool("search", {"query": "echo"})
        assert sorted(o["name"] for o in r.structured_content["operations"]) == ["/alt/echo", "/fixture/echo"]
        r = await c.call_tool("search", {"namespace": "alt"})
        assert {o["namespace"] for o in r.structured_content["operations"]} == {"alt"}
        r = await c.call_tool("search", {"type": "mutation", "namespace": "fixture"})
        assert {o["type"] for o in r.structured_content["operations"]} == {"mutation"}
        r = await c.call_tool("search", {"limit": 2})
        assert len(r.structured_content["operations"]) == 2


async def test_schema_returns_operation_spec(tmp_path):
    async with Client(stdio_gateway("search", _config(tmp_path)), mode="legacy") as c:
        r = await c.call_tool("schema", {"operation": "/fixture/add"})
        spec = r.structured_content
        assert spec["name"] == "/fixture/add" and spec["type"] == "query"
        assert spec["inputSchema"]["required"] == ["a", "b"]
        assert spec["outputSchema"]["properties"]["sum"] == {"type": "integer"}
        assert "FORBIDDEN" in {e["code"] for e in spec["errorSchemas"]}
        r = await c.call_tool("schema", {"operation": "/fixture/nope"})
        assert r.is_error and r.structured_content["code"] == "NOT_FOUND"
        r = await c.call_tool("schema", {"operation": "/fixture/toggle_extra"})  # subscription
        assert r.is_error and r.structured_content["code"] == "NOT_FOUND"


async def test_call_maps_results_and_typed_errors(tmp_path):
    async with Client(stdio_gateway("search", _config(tmp_path)), mode="legacy") as c:
        r = await c.call_tool("call", {"operation": "/fixture/add", "input": {"a": 1, "b": 2}})
        assert not r.is_error and r.structured_content == {"sum": 3}  # Decision 4: structuredContent
        r = await c.call_tool("call", {"operation": "/fixture/write_note", "input": {"key": "k", "value": "v"}})
        assert r.structured_content == {"content": [{"type": "text", "text": "stored"}]}

        async def err(args):
            r = await c.call_tool("call", args)
            assert r.is_error
            assert set(r.structured_content) == {"code", "message", "details"}
            return r.structured_content

        assert (await err({"operation": "/fixture/add", "input": {"a": "x"}}))["code"] == "INVALID_INPUT"
        e = await err({"operation": "/fixture/fail"})
        assert e["code"] == "OPERATION_FAILED" and e["details"]["content"][0]["text"] == "it failed"
        e = await err({"operation": "/fixture/boom"})
        assert e["code"] == "UPSTREAM_ERROR" and e["details"]["code"] == -32050
        assert (await err({"operation": "/fixture/sleep", "input": {"seconds": 30}}))["code"] == "TIMEOUT"
        assert (await err({"operation": "/fixture/toggle_extra"}))["code"] == "NOT_FOUND"
        assert (await err({"operation": "/fixture/meta_probe"}))["code"] == "NOT_FOUND"
        assert (await err({"operation": "nonsense"}))["code"] == "NOT_FOUND"
        assert (await err({}))["code"] == "INVALID_REQUEST"


async def test_batch_answers_in_order(tmp_path):
    async with Client(stdio_gateway("search", _config(tmp_path)), mode="legacy") as c:
        r = await c.call_tool("batch", {"calls": [
            {"operation": "/fixture/sleep", "input": {"seconds": 0.5}},
            {"operation": "/fixture/add", "input": {"a": 1, "b": 1}},
            {"operation": "/ghost/x", "id": "g"},
            {"operation": "/alt/echo", "input": {"text": "b"}},
        ]})
        assert not r.is_error
        results = r.structured_content["results"]
        assert [x["id"] for x in results] == [0, 1, "g", 3]
        assert [x["ok"] for x in results] == [True, True, False, True]
        assert results[1]["output"] == {"sum": 2}
        assert results[2]["error"]["code"] == "NOT_FOUND"
        assert results[3]["output"]["server"] == "alt"


async def test_unknown_meta_tool_is_a_protocol_error(tmp_path):
    async with Client(stdio_gateway("search", _config(tmp_path)), mode="legacy") as c:
        with pytest.raises(MCPError) as info:
            await c.call_tool("fixture__echo", {})
        assert info.value.code == types.INVALID_PARAMS


async def test_stdio_identity_restricts(tmp_path):
    cfg = _config(tmp_path, identities={"r": {"token": "t", "allow": ["/alt/*"]}}, stdioIdentity="r")
    async with Client(stdio_gateway("search", cfg), mode="auto") as c:
        r = await c.call_tool("search", {})
        assert {o["namespace"] for o in r.structured_content["operations"]} == {"alt"}
        r = await c.call_tool("call", {"operation": "/fixture/add", "input": {"a": 1, "b": 2}})
        assert r.is_error and r.structured_content["code"] == "FORBIDDEN"
