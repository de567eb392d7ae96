"""The search profile's fixed tool surface and error model (seed 003, ADR-041).

* `meta_tools()` - the four MCP tools: search, schema, call, batch.
* `CallError` - the typed error a `call` answers with (`isError: true`,
  structuredContent `{code, message, details}`), and `ERROR_SCHEMAS`, the
  error schemas `schema` publishes for every operation.
"""

from __future__ import annotations

import json
from typing import Any

import mcp.types as types

# ------------------------------------------------------------------ error model
# CallError codes (ADR-023 style typed errors) and the schema of their details.
_STR = {"type": "string"}
ERROR_SCHEMAS: list[dict[str, Any]] = [
    {
        "code": "FORBIDDEN",
        "description": "The caller's identity is not authorized to call this operation.",
        "details": {"type": "object", "properties": {"operation": _STR}, "required": ["operation"]},
    },
    {
        "code": "NOT_FOUND",
        "description": "No such operation is exposed through the gateway.",
        "details": {"type": "object", "properties": {"operation": _STR}, "required": ["operation"]},
    },
    {
        "code": "INVALID_INPUT",
        "description": "The input does not match the operation's input schema.",
        "details": {
            "type": "object",
            "properties": {
                "operation": _STR,
                "errors": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"path": _STR, "message": _STR}},
                },
            },
            "required": ["operation", "errors"],
        },
    },
    {
        "code": "OPERATION_FAILED",
        "description": "The operation ran and reported an error (upstream tool result with isError: true).",
        "details": {
            "type": "object",
            "properties": {"operation": _STR, "content": {"type": "array"}, "structuredContent": {}},
            "required": ["operation", "content"],
        },
    },
    {
        "code": "UPSTREAM_ERROR",
        "description": "The server behind the operation answered with a protocol (JSON-RPC) error.",
        "details": {
            "type": "object",
            "properties": {"operation": _STR, "code": {"type": "integer"}, "message": _STR, "data": {}},
            "required": ["operation", "code", "message"],
        },
    },
    {
        "code": "TIMEOUT",
        "description": "The operation did not complete within the configured timeout and was cancelled.",
        "details": {
            "type": "object",
            "properties": {"operation": _STR, "timeoutSeconds": {"type": "number"}},
            "required": ["operation", "timeoutSeconds"],
        },
    },
    {
        "code": "UNAVAILABLE",
        "description": "The server behind the operation's namespace is not connected.",
        "details": {
            "type": "object",
            "properties": {"operation": _STR, "namespace": _STR},
            "required": ["operation", "namespace"],
        },
    },
]
# Errors about the meta-tool request itself (not listed per operation).
INVALID_REQUEST = "INVALID_REQUEST"
INTERNAL = "INTERNAL"


class CallError(Exception):
    def __init__(self, code: str, message: str, /, **details: Any):
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "details": self.details}


def text(obj: Any) -> list[types.ContentBlock]:
    return [types.TextContent(type="text", text=json.dumps(obj, ensure_ascii=False, default=str))]


def error_result(err: CallError) -> types.CallToolResult:
    body = err.as_dict()
    return types.CallToolResult(content=text(body), structured_content=body, is_error=True)


def dump_blocks(blocks: list[Any]) -> list[dict[str, Any]]:
    return [b.model_dump(by_alias=True, mode="json", exclude_none=True) for b in blocks]


# ------------------------------------------------------------ meta-tool schemas
_SUMMARY = {
    "type": "object",
    "properties": {
        "name": _STR,
        "namespace": _STR,
        "type": {"type": "string", "enum": ["query", "mutation"]},
        "description": _STR,
    },
    "required": ["name", "namespace", "type", "description"],
}


def meta_tools(max_batch: int) -> list[types.Tool]:
    op_arg = {"type": "string", "description": "Operation name, e.g. /fs/readFile (from `search`)."}
    input_arg = {"type": "object", "description": "The operation's input (see `schema`).", "default": {}}
    return [
        types.Tool(
            name="search",
            description=(
                "List or search the operations you are authorized to call. Returns operation names, namespaces, "
                "types (query|mutation) and short descriptions - not schemas; use `schema` for one operation's "
                "full spec, then `call` to invoke it."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Keywords; each must appear in name or description."},
                    "namespace": {"type": "string", "description": "Only operations in this namespace."},
                    "type": {"type": "string", "enum": ["query", "mutation"]},
                    "limit": {"type": "integer", "minimum": 1},
                },
            },
            output_schema={
                "type": "object",
                "properties": {"operations": {"type": "array", "items": _SUMMARY}},
                "required": ["operations"],
            },
            annotations=types.ToolAnnotations(read_only_hint=True),
        ),
        types.Tool(
            name="schema",
            description=(
                "Get an operation's OperationSpec: input JSON Schema, output JSON Schema (null if the operation "
                "declares none) and the error schemas of `call`."
            ),
            input_schema={"type": "object", "properties": {"operation": op_arg}, "required": ["operation"]},
            output_schema={
                "type": "object",
                "properties": {
                    "name": _STR,
                    "namespace": _STR,
                    "type": {"type": "string", "enum": ["query", "mutation"]},
                    "description": _STR,
                    "inputSchema": {"type": "object"},
                    "outputSchema": {"type": ["object", "null"]},
                    "errorSchemas": {"type": "array", "items": {"type": "object"}},
                },
                "required": ["name", "namespace", "type", "inputSchema", "outputSchema", "errorSchemas"],
            },
            annotations=types.ToolAnnotations(read_only_hint=True),
        ),
        types.Tool(
            name="call",
            description=(
                "Invoke one operation: {operation, input}. The operation's output is returned as structuredContent "
                "(the upstream's structured output, or {content: [...]} when it has none). Failures return "
                "isError: true with structuredContent {code, message, details}."
            ),
            input_schema={
                "type": "object",
                "properties": {"operation": op_arg, "input": input_arg},
                "required": ["operation"],
            },
        ),
        types.Tool(
            name="batch",
            description=(
                "Invoke several independent operations in one tool call: {calls: [{operation, input, id?}, ...]}. "
                "Returns {results: [...]} in request order; each result carries the call's id (default: its index) "
                "and either {ok: true, output} or {ok: false, error: {code, message, details}}."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "calls": {
                        "type": "array",
                        "maxItems": max_batch,
                        "items": {
                            "type": "object",
                            "properties": {
                                "operation": op_arg,
                                "input": input_arg,
                                "id": {"type": ["string", "integer"]},
                            },
                            "required": ["operation"],
                        },
                    }
                },
                "required": ["calls"],
            },
            output_schema={
                "type": "object",
                "properties": {"results": {"type": "array", "items": {"type": "object"}}},
                "required": ["results"],
            },
        ),
    ]
