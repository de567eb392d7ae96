"""The search profile's MCP server: one low-level SDK Server per identity, so that an
identity's sessions, listings and calls are its own by construction."""

from __future__ import annotations

import fnmatch
import json
from typing import Any

import mcp.types as types
from mcp.server import Server

from . import search as ops
from .errors import GatewayError
from .upstream import Upstream, log


def _tool(name: str, description: str, properties: dict[str, Any], *required: str) -> types.Tool:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return types.Tool(name=name, description=description, input_schema=schema)


_REQUEST = {
    "type": "object",
    "properties": {"operation": {"type": "string"}, "input": {"type": "object"}},
    "required": ["operation"],
}
TOOLS = (
    _tool(
        "search",
        "Find operations you may call: names, namespaces, types and a short description. "
        "Without a query, every one; with a query, the best ten. A namespace narrows them.",
        {"query": {"type": "string"}, "namespace": {"type": "string"}},
    ),
    _tool(
        "schema",
        "The full spec of one operation: its input and output JSON Schemas and error schema.",
        {"operation": {"type": "string"}},
        "operation",
    ),
    _tool(
        "call",
        "Invoke one operation with a JSON input; answers the operation's own result.",
        _REQUEST["properties"],
        "operation",
    ),
    _tool(
        "batch",
        "Invoke several operations at once; results come back in the order of the requests.",
        {"requests": {"type": "array", "items": _REQUEST}},
        "requests",
    ),
)


def allow_rule(rules: list[str] | None) -> ops.Visible:
    """None: every operation; else those matching one of the globs (fnmatch on the name)."""
    if rules is None:
        return lambda _operation: True
    return lambda operation: any(fnmatch.fnmatchcase(operation, r) for r in rules)


def _json(document: Any, is_error: bool = False) -> types.CallToolResult:
    text = json.dumps(document, ensure_ascii=False)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], is_error=is_error
    )


def make_server(
    table: dict[str, ops.Op], upstreams: dict[str, Upstream], allow: list[str] | None
) -> Server[Any]:
    visible = allow_rule(allow)
    restricted = allow is not None

    async def dispatch(op: ops.Op, payload: dict[str, Any]) -> dict[str, Any]:
        return await upstreams[op["server"]].call(op["tool"], payload)

    async def one(request: Any) -> dict[str, Any]:
        """A batch item: the call's own result, or the gateway's error payload."""
        operation = request.get("operation") if isinstance(request, dict) else None
        try:
            if not isinstance(request, dict):
                raise GatewayError("ARGS_INVALID", "a request must be an object", "requests")
            op = ops.resolve(table, visible, operation, restricted)
            return {"operation": operation, **await ops.call(op, request.get("input"), dispatch)}
        except GatewayError as exc:
            return {"operation": operation, "isError": True, "error": exc.payload()}

    async def answer(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        if name == "search":
            return _json(ops.search(table, visible, arguments))
        if name == "schema":
            return _json(
                ops.schema(ops.resolve(table, visible, arguments.get("operation"), restricted))
            )
        if name == "call":
            op = ops.resolve(table, visible, arguments.get("operation"), restricted)
            return ops.as_result(await ops.call(op, arguments.get("input"), dispatch))
        if name == "batch":
            return _json(await ops.batch(arguments.get("requests"), one))
        raise GatewayError("ARGS_INVALID", f"no tool {name!r}", name)

    async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=list(TOOLS))

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            return await answer(params.name, dict(params.arguments or {}))
        except GatewayError as exc:
            return _json(exc.payload(), is_error=True)
        except Exception as exc:  # nothing raises across the MCP boundary
            log(f"internal error in {params.name}: {exc!r}")
            failure = GatewayError("UPSTREAM_ERROR", f"internal error: {type(exc).__name__}")
            return _json(failure.payload(), is_error=True)

    return Server(
        "independent-gateway-search",
        version="0.1",
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )
