"""The search profile (seed 003, ADR-041) over ProxyRuntime: search, schema, call and batch,
driven through the MCP surface (official client, in-process) and directly.

Expected answers come from seed 003 and the amendments that decide what it leaves open
(AM-SEARCH-HITS, AM-SEARCH-NO-SUBSCRIPTIONS, AM-SEARCH-SCHEMA-ERRORS, AM-SEARCH-CALL-RESULT,
AM-SEARCH-BATCH, AM-SEARCH-OPERATION-NAME). The upstream is a spy pool (a unit-test stand-in
that records calls), so "nothing reached upstream" is observable.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import anyio
import mcp_types as types
import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from gatespec.runtime import ProxyRuntime
from gatespec.runtime_contract import Caller
from gatespec.server import build_server
from gatespec_surface.errors import ErrorCode, GatewayError
from gatespec_surface.operations import BatchArgs, BatchCallsItem, CallArgs, SearchArgs
from gatespec_surface.schemas import MODEL_SCHEMAS

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

OBJ: dict[str, Any] = {"type": "object"}
PATH_ARG = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
OUT = {"type": "object", "properties": {"n": {"type": "integer"}}}
TOOLS = {
    "fs": [
        {"name": "read_file", "description": "Read a file from disk.", "inputSchema": PATH_ARG,
         "outputSchema": OUT, "annotations": {"readOnlyHint": True}},
        {"name": "write_file", "description": "Write a file to disk.", "inputSchema": OBJ},
        {"name": "1st", "description": "A name the grammar maps.", "inputSchema": OBJ},
    ],
    "mail": [
        {"name": "send_mail", "description": "Send an e-mail message.", "inputSchema": OBJ},
        {"name": "fails", "description": "Always fails.", "inputSchema": OBJ},
        {"name": "slow", "description": "Waits for the other call.", "inputSchema": OBJ},
    ],
}  # fmt: skip


class SpyPool:
    """Upstreams in a test: a fixed tool list; calls are recorded and answered by name."""

    def __init__(self, tools: Mapping[str, list[dict[str, Any]]]) -> None:
        self._tools = {k: list(v) for k, v in tools.items()}
        self.calls: list[tuple[str, str, dict[str, Any]]] = []
        self.on_tools_changed = None
        self.started = anyio.Event()

    def tools(self) -> dict[str, list[dict[str, Any]]]:
        return self._tools

    async def call(
        self,
        key: str,
        name: str,
        arguments: Any = None,
        timeout: float | None = None,
        relay: Any = None,
    ) -> dict[str, Any]:
        self.calls.append((key, name, dict(arguments or {})))
        if name == "fails":
            return {"content": [{"type": "text", "text": "it broke"}], "isError": True}
        if name == "slow":  # returns only once another call has started after it
            with anyio.fail_after(5):
                await self.started.wait()
        else:
            self.started.set()
        return {
            "content": [{"type": "text", "text": f"{name} done"}],
            "structuredContent": {"tool": name, "args": dict(arguments or {})},
        }


@pytest.fixture
async def runtime() -> tuple[ProxyRuntime, SpyPool]:
    pool = SpyPool(TOOLS)
    rt = ProxyRuntime(pool, profile="search")  # type: ignore[arg-type]
    await rt.rebuild()
    return rt, pool


def valid(model: str, value: Any) -> Any:
    Draft202012Validator(MODEL_SCHEMAS[model]).validate(value)
    return value


async def test_search_lists_every_operation_by_name_without_a_query(runtime: Any) -> None:
    rt, _ = runtime
    reply = await rt.search(Caller("s"), SearchArgs(query=None, namespace=None, limit=50))
    hits = valid("SearchResult", reply.structured)["hits"]
    # AM-SEARCH-OPERATION-NAME: "1st" maps to "_1st"; the operation carries the mapped name
    assert [h["operation"] for h in hits] == [
        "/fs/_1st",
        "/fs/read_file",
        "/fs/write_file",
        "/mail/fails",
        "/mail/send_mail",
        "/mail/slow",
    ]
    assert all(h["score"] is None for h in hits)
    assert reply.text.splitlines()[1] == "/fs/read_file [query] Read a file from disk."
    limited = await rt.search(Caller("s"), SearchArgs(query=None, namespace="mail", limit=2))
    assert [h["operation"] for h in limited.structured["hits"]] == [
        "/mail/fails",
        "/mail/send_mail",
    ]


async def test_every_hit_is_a_query_or_mutation(runtime: Any) -> None:
    """AM-SEARCH-NO-SUBSCRIPTIONS: readOnlyHint true is a query, anything else a mutation."""
    rt, _ = runtime
    reply = await rt.search(Caller("s"), SearchArgs(query=None, namespace=None, limit=50))
    types_ = {h["operation"]: h["type"] for h in reply.structured["hits"]}
    assert types_.pop("/fs/read_file") == "query"
    assert set(types_.values()) == {"mutation"}


async def test_hits_carry_names_and_descriptions_never_schemas(runtime: Any) -> None:
    rt, _ = runtime
    reply = await rt.search(Caller("s"), SearchArgs(query="read a file", namespace=None, limit=10))
    hits = valid("SearchResult", reply.structured)["hits"]
    assert hits[0]["operation"] == "/fs/read_file"
    assert set(hits[0]) == {"operation", "namespace", "type", "description", "score"}
    assert "properties" not in json.dumps(reply.structured) and "path" not in reply.text
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True)


async def test_a_namespace_narrows_the_ranking(runtime: Any) -> None:
    rt, _ = runtime
    everywhere = await rt.search(Caller("s"), SearchArgs(query="send", namespace=None, limit=10))
    assert everywhere.structured["hits"][0]["operation"] == "/mail/send_mail"
    in_fs = await rt.search(Caller("s"), SearchArgs(query="send", namespace="fs", limit=10))
    assert all(h["namespace"] == "fs" for h in in_fs.structured["hits"])
    nowhere = await rt.search(Caller("s"), SearchArgs(query="send", namespace="nope", limit=10))
    assert nowhere.structured == {"hits": []}


async def test_schema_is_the_hydration_result_with_both_schemas(runtime: Any) -> None:
    rt, pool = runtime
    async with Client(build_server(rt), cache=None) as client:
        result = await client.call_tool("schema", {"operation": "/fs/read_file"})
        missing = await client.call_tool("schema", {"operation": "/fs/nothing"})
    hydration = valid("HydrationResult", result.structured_content)
    assert (hydration["input_schema"], hydration["output_schema"]) == (PATH_ARG, OUT)
    assert missing.is_error and missing.structured_content["error"] == "TOOL_NOT_FOUND"
    assert pool.calls == []


async def test_call_returns_the_upstreams_own_result(runtime: Any) -> None:
    rt, pool = runtime
    async with Client(build_server(rt), cache=None) as client:
        ok = await client.call_tool("call", {"operation": "/fs/read_file", "input": {"path": "a"}})
        failed = await client.call_tool("call", {"operation": "/mail/fails"})
        invalid = await client.call_tool("call", {"operation": "/fs/read_file", "input": {}})
    assert ok.is_error is False
    assert ok.content == [types.TextContent(type="text", text="read_file done")]
    assert ok.structured_content == {"tool": "read_file", "args": {"path": "a"}}
    # AM-SEARCH-CALL-RESULT: the upstream's own failure passes through, not as a payload
    assert failed.is_error is True and failed.content[0].text == "it broke"
    assert invalid.is_error and invalid.structured_content["error"] == "ARGS_INVALID"
    assert [c[1] for c in pool.calls] == ["read_file", "fails"]  # the invalid one never left


async def test_batch_answers_in_order_and_one_failure_fails_only_itself(runtime: Any) -> None:
    rt, pool = runtime
    calls = [
        {"operation": "/mail/slow"},  # finishes only after the next one started: concurrency
        {"operation": "/mail/send_mail", "input": {"to": "x"}},
        {"operation": "/mail/fails"},
        {"operation": "/fs/read_file", "input": {"wrong": 1}},
        {"operation": "/fs/absent"},
    ]
    async with Client(build_server(rt), cache=None) as client:
        result = await client.call_tool("batch", {"calls": calls})
    assert result.is_error is False
    items = valid("BatchResult", result.structured_content)["results"]
    assert [i["operation"] for i in items] == [c["operation"] for c in calls]
    assert [i["is_error"] for i in items] == [False, False, True, True, True]
    assert items[1]["structured_content"] == {"tool": "send_mail", "args": {"to": "x"}}
    assert items[2]["error"] is None and items[2]["content"][0]["text"] == "it broke"
    assert [items[3]["error"]["error"], items[4]["error"]["error"]] == [
        "ARGS_INVALID",
        "TOOL_NOT_FOUND",
    ]
    assert sorted(c[1] for c in pool.calls) == ["fails", "send_mail", "slow"]
    assert result.content[0].text.startswith("[1] /mail/slow: ok\nslow done")


async def test_the_batch_shape_is_the_schemas(runtime: Any) -> None:
    rt, _ = runtime
    async with Client(build_server(rt), cache=None) as client:
        empty = await client.call_tool("batch", {"calls": []})
        too_many = await client.call_tool("batch", {"calls": [{"operation": "/fs/_1st"}] * 17})
    assert (
        empty.structured_content["error"]
        == too_many.structured_content["error"]
        == ("ARGS_INVALID")
    )


async def test_batch_items_are_typed_arguments() -> None:
    """The generated argument classes fill a nested item's default (input: {})."""
    args = BatchArgs.of({"calls": [{"operation": "/a/b"}]})
    assert args.calls == (BatchCallsItem(operation="/a/b", input={}),)
    assert CallArgs.of({"operation": "/a/b", "input": {"x": 1}}).input == {"x": 1}


@pytest.mark.parametrize(
    ("calls", "message"),
    [
        ([1, 2], "argument 'calls' item [0] must be an object, not a number"),
        ([{"operation": "/a/b"}, "x"], "argument 'calls' item [1] must be an object, not a string"),
        ({"a": 1}, "argument 'calls' must be an array, not an object"),
    ],
)
def test_a_nested_type_error_names_where_it_is(calls: object, message: str) -> None:
    """Issue 22 item 19: batch {"calls": [1, 2]} answered "must be an array, not an array"
    (the item's problem told of the argument as a whole)."""
    from gatespec.server.arguments import ArgumentChecker

    with pytest.raises(GatewayError) as caught:
        ArgumentChecker("batch").check({"calls": calls})
    assert caught.value.code is ErrorCode.ARGS_INVALID
    assert caught.value.message == message
