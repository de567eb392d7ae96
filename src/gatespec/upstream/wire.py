"""Plain-dict checks and shaping for MCP wire objects (tools and tool results).

The upstream layer hands tools over exactly as the server sent them; `tool_problem` is the one
place that says whether a tool definition is usable, so the catalog can exclude a bad tool with
a recorded reason instead of losing the whole server.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from mcp.shared.inbound import find_invalid_x_mcp_header

from gatespec.secrets import redact

# `_meta` keys in this namespace are the protocol's own envelope (server identity stamps,
# subscription ids...). They describe the upstream connection, not the result, so they are not
# passed on to the gateway's clients.
ENVELOPE_META_PREFIX: Final = "io.modelcontextprotocol/"
# 2026-07-28 result bookkeeping that belongs to the upstream hop (caching hints, result kind).
HOP_RESULT_KEYS: Final = frozenset({"resultType", "ttlMs", "cacheScope"})


def tool_problem(tool: Any) -> str | None:
    """Why a tools/list entry is unusable, or None when it is a well-formed tool definition."""
    if not isinstance(tool, Mapping):
        return f"tool entry is {type(tool).__name__}, not an object"
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        return f"tool name is {name!r}, not a non-empty string"
    if "inputSchema" not in tool:
        return f"tool {name!r} has no inputSchema"
    schema = tool["inputSchema"]
    if not isinstance(schema, Mapping):
        return f"tool {name!r} inputSchema is {type(schema).__name__}, not an object"
    if schema.get("type") != "object":
        return f"tool {name!r} inputSchema type is {schema.get('type')!r}, not 'object'"
    # 2026-07-28 clients MUST drop tools with invalid x-mcp-header annotations (the SDK's rule).
    header_problem = find_invalid_x_mcp_header(schema)
    if header_problem is not None:
        return f"tool {name!r} inputSchema: {header_problem}"
    output = tool.get("outputSchema")
    if output is not None and not isinstance(output, Mapping):
        return f"tool {name!r} outputSchema is {type(output).__name__}, not an object"
    for text_key in ("title", "description"):
        value = tool.get(text_key)
        if value is not None and not isinstance(value, str):
            return f"tool {name!r} {text_key} is {type(value).__name__}, not a string"
    return None


def strip_envelope_meta(meta: Any) -> dict[str, Any] | None:
    """`_meta` without the protocol envelope keys; None when nothing is left (or not a dict)."""
    if not isinstance(meta, Mapping):
        return None
    kept = {k: v for k, v in meta.items() if not str(k).startswith(ENVELOPE_META_PREFIX)}
    return kept or None


def plain_result(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A raw result without the upstream hop's bookkeeping (HOP_RESULT_KEYS, envelope `_meta`
    keys); everything else exactly as sent."""
    out = {k: v for k, v in raw.items() if k not in HOP_RESULT_KEYS and k != "_meta"}
    meta = strip_envelope_meta(raw.get("_meta"))
    if meta is not None:
        out["_meta"] = meta
    return out


def call_result(raw: Mapping[str, Any]) -> dict[str, Any] | str:
    """A raw tools/call result in CallToolResult wire form, or a reason string when it is not one.

    Keeps content, structuredContent, isError and `_meta` (minus envelope keys); drops the
    2026-07-28 result bookkeeping (resultType, ttlMs...) that belongs to the upstream hop.
    """
    content = raw.get("content", [])
    if not isinstance(content, list):
        return f"tools/call result content is {type(content).__name__}, not an array"
    if any(not isinstance(block, Mapping) for block in content):
        return "tools/call result content has an entry that is not an object"
    is_error = raw.get("isError", False)
    if not isinstance(is_error, bool):
        return f"tools/call result isError is {type(is_error).__name__}, not a boolean"
    out: dict[str, Any] = {"content": content}
    if "structuredContent" in raw and raw["structuredContent"] is not None:
        out["structuredContent"] = raw["structuredContent"]
    if is_error:
        # The upstream's error report, like its JSON-RPC error text, may quote a value a
        # ${VAR} expanded to (its own key, its command line): redacted the same way.
        out = _redacted(out)
    out["isError"] = is_error
    meta = strip_envelope_meta(raw.get("_meta"))
    if meta is not None:
        out["_meta"] = meta
    return out


def _redacted(value: dict[str, Any]) -> dict[str, Any]:
    """A copy of `value` with every string in it redacted (gatespec.secrets), keys as they
    are; iterative, so no nesting depth can raise."""
    root: dict[str, Any] = {}
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        source, target = stack.pop()
        items = source.items() if isinstance(source, Mapping) else enumerate(source)
        for key, item in items:
            if isinstance(item, str):
                item = redact(item)
            elif isinstance(item, Mapping):
                copy: dict[str, Any] = {}
                stack.append((item, copy))
                item = copy
            elif isinstance(item, list):
                copy_list: list[Any] = [None] * len(item)
                stack.append((item, copy_list))
                item = copy_list
            target[key] = item
    return root


__all__ = [
    "ENVELOPE_META_PREFIX",
    "HOP_RESULT_KEYS",
    "call_result",
    "plain_result",
    "strip_envelope_meta",
    "tool_problem",
]
