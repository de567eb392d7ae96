"""The search profile (seed 003, ADR-041): search, schema, call and batch over a table of
operations, gated by the caller's identity (AM-ACCESS-CONTROL, AM-ACCESS-NO-LEAK).

Plain functions over plain dicts: an operation is a dict, the table is {operation: dict}, an
identity is a predicate over operation names. Nothing here knows MCP sessions or transports.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp.types as types
from mcp.shared.exceptions import MCPError

from .errors import GatewayError
from .upstream import Upstream, log

Visible = Callable[[str], bool]  # operation name -> whether the caller may see it
Op = dict[str, Any]

QUERY_HITS = 10  # a query answers its best ten; a listing answers everything visible
MAX_BATCH = 32
SHORT_DESCRIPTION = 120  # characters of a hit's description (seed 003 §3: "short")
# One fixed message for everything a restricted caller may not reach (AM-ACCESS-NO-LEAK).
FORBIDDEN_MESSAGE = "you are not allowed to use this operation"
# Seed 003 §1: the schema operation gives "error schemas"; every failure has this one shape.
ERROR_SCHEMA = {
    "type": "object",
    "required": ["error", "message", "path"],
    "properties": {
        "error": {"type": "string"},
        "message": {"type": "string"},
        "path": {"type": "string"},
        "details": {"type": "object"},
        "retryable": {"type": "boolean"},
    },
}


def slug(text: str) -> str:
    """A namespace: lower case, runs of other characters as one '-'."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "upstream"


def build_table(upstreams: dict[str, Upstream]) -> dict[str, Op]:
    """One operation per upstream tool, "/<namespace>/<tool name>". The namespace is the name
    the upstream gives itself (serverInfo.name), else its config key: the seed's "/fs/readFile"
    names the server a tool lives on, and the server's own name is the one it announces.
    Two tools claiming one operation are both withheld (logged)."""
    table: dict[str, Op] = {}
    claimed: dict[str, int] = {}
    for key, upstream in sorted(upstreams.items()):
        namespace = slug(upstream.server_name or key)
        for tool in upstream.tools:
            schema = tool.get("inputSchema")
            if not isinstance(schema, dict):
                continue
            operation = f"/{namespace}/{tool['name']}"
            claimed[operation] = claimed.get(operation, 0) + 1
            hints = tool.get("annotations") or {}
            table[operation] = {
                "operation": operation,
                "namespace": namespace,
                "server": key,
                "tool": tool["name"],
                "description": str(tool.get("description") or ""),
                "input": schema,
                "output": tool.get("outputSchema"),
                # ADR-041 §2: only Query and Mutation exist behind MCP; readOnlyHint says query
                "type": "query" if hints.get("readOnlyHint") is True else "mutation",
            }
    for operation, count in claimed.items():
        if count > 1:
            log(f"{count} tools claim {operation}: all withheld")
            del table[operation]
    return table


# ------------------------------------------------------------------ the four operations


def _words(text: str) -> list[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    return [w for w in re.split(r"[^a-z0-9]+", spaced.lower()) if w]


def _score(op: Op, terms: list[str]) -> int:
    """3 per query word that is a word of the tool's name, 1 per word found anywhere in its
    description (substring): the seed does not fix ranking, a plain count does."""
    name = set(_words(op["tool"]))
    text = op["description"].lower()
    return sum(3 * (t in name) + (t in text) for t in terms)


def _short(description: str) -> str:
    line = " ".join(description.split())
    first = re.split(r"(?<=[.!?])\s", line, maxsplit=1)[0]
    return first if len(first) <= SHORT_DESCRIPTION else first[: SHORT_DESCRIPTION - 1] + "…"


def _hit(op: Op, score: int | None) -> dict[str, Any]:
    hit = {
        "operation": op["operation"],
        "namespace": op["namespace"],
        "type": op["type"],
        "description": _short(op["description"]),
        "tool": op["tool"],
    }
    if score is not None:
        hit["score"] = score
    return hit


def _args(arguments: dict[str, Any], allowed: set[str]) -> None:
    extra = sorted(set(arguments) - allowed)
    if extra:
        raise GatewayError("ARGS_INVALID", f"unknown argument(s) {extra}", "", {"unknown": extra})


def search(table: dict[str, Op], visible: Visible, arguments: dict[str, Any]) -> dict[str, Any]:
    """ADR-041's search "can accept a query/filter (namespace, keyword)": nothing else."""
    _args(arguments, {"query", "namespace"})
    query, namespace = arguments.get("query"), arguments.get("namespace")
    for name, value in (("query", query), ("namespace", namespace)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise GatewayError("ARGS_INVALID", f"{name} must be non-blank text", name)
    ops = [
        op
        for name, op in sorted(table.items())
        if visible(name) and (namespace is None or op["namespace"] == namespace)
    ]
    if query is None:
        return {"hits": [_hit(op, None) for op in ops]}
    terms = _words(query)
    scored = sorted(
        ((_score(op, terms), op) for op in ops), key=lambda p: (-p[0], p[1]["operation"])
    )
    return {"hits": [_hit(op, s) for s, op in scored[:QUERY_HITS] if s > 0]}


def resolve(table: dict[str, Op], visible: Visible, operation: Any, restricted: bool) -> Op:
    """The operation a caller names. A restricted caller gets FORBIDDEN for everything it may
    not see, existing or not (AM-ACCESS-NO-LEAK); others get TOOL_NOT_FOUND for the unknown."""
    if not isinstance(operation, str) or not operation:
        raise GatewayError("ARGS_INVALID", "operation must be a non-empty string", "operation")
    if not visible(operation):
        raise GatewayError("FORBIDDEN", FORBIDDEN_MESSAGE, operation)
    if operation not in table:
        if restricted:
            raise GatewayError("FORBIDDEN", FORBIDDEN_MESSAGE, operation)
        raise GatewayError("TOOL_NOT_FOUND", f"no operation {operation!r}", operation)
    return table[operation]


def schema(op: Op) -> dict[str, Any]:
    """ADR-041 §1: the operation's spec, its input/output schemas and error schemas."""
    return {
        "operation": op["operation"],
        "description": op["description"],
        "input": op["input"],
        "output": op["output"],
        "errors": [ERROR_SCHEMA],
    }


Dispatch = Callable[[Op, dict[str, Any]], Awaitable[dict[str, Any]]]


async def call(op: Op, arguments: Any, dispatch: Dispatch) -> dict[str, Any]:
    """ADR-041 §4: the operation's own result (content, structuredContent, isError) as the
    upstream gave it. The input goes to the operation as given: validating it is the
    operation's job (OperationRegistry::invoke), not the wrapper's."""
    payload = {} if arguments is None else arguments
    if not isinstance(payload, dict):
        raise GatewayError("ARGS_INVALID", "input must be an object", op["operation"])
    try:
        return await dispatch(op, payload)
    except MCPError as exc:  # the upstream answered, with a protocol error: pass it on
        raise GatewayError(
            "UPSTREAM_ERROR",
            f"the operation failed upstream: {exc.message}",
            op["operation"],
            {"code": exc.code},
        ) from None
    except Exception as exc:
        raise GatewayError(
            "UPSTREAM_ERROR",
            f"the operation could not be reached: {type(exc).__name__}",
            op["operation"],
            retryable=True,
        ) from None


async def batch(requests: Any, one: Callable[[Any], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
    """ADR-041 §4: several calls at once, answered in order, each its own result."""
    if not isinstance(requests, list) or not 1 <= len(requests) <= MAX_BATCH:
        raise GatewayError("ARGS_INVALID", f"requests must be a list of 1-{MAX_BATCH}", "requests")
    results: list[dict[str, Any]] = [{} for _ in requests]

    async def run(i: int, request: Any) -> None:
        results[i] = {"id": i, **await one(request)}

    async with anyio.create_task_group() as group:
        for i, request in enumerate(requests):
            group.start_soon(run, i, request)
    return {"results": results}


def as_result(document: dict[str, Any]) -> types.CallToolResult:
    """An upstream's result dict (camelCase, as dumped) as the MCP result it was."""
    return types.CallToolResult.model_validate(document)
