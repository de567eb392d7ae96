"""MCP server wiring for the two profiles (seed 000 §4.1 / §4.2).

* ``gateway``: tools/list = ``tool_browse``, ``tool_execute``, ``tool_view``.
* ``transparent``: tools/list = ``tool_hydrate``, ``tool_execute`` + one
  stripped entry per upstream tool (name = tool_id, description truncated per
  §2.4, ``inputSchema: {"type": "object"}``).

Handlers never raise across the MCP boundary: every failure becomes an
``isError=true`` CallToolResult carrying the §3.4 error object.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import mcp.types as types
from mcp.server import Server

from .cards import render_browse
from .errors import ARGS_INVALID, UPSTREAM_ERROR, GatewayError
from .results import ResultEnvelope
from .runtime import ProxyRuntime

log = logging.getLogger("tollbooth.server")

GATEWAY = "gateway"
TRANSPARENT = "transparent"

SCHEMA_BROWSE = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "Free-form query; returns the top-k tool cards."},
        "path": {"type": "string", "description": "Path such as '/', '/github', '/github/issues/*'."},
    },
    "additionalProperties": False,
}
SCHEMA_EXECUTE = {
    "type": "object",
    "properties": {
        "tool_id": {"type": "string", "description": "Canonical tool_id, e.g. 'github:create_issue@1.4.0'."},
        "args": {"type": "object", "description": "Arguments for the tool (validated against its schema)."},
    },
    "required": ["tool_id"],
    "additionalProperties": False,
}
SCHEMA_HYDRATE = {
    "type": "object",
    "properties": {"tool_id": {"type": "string", "description": "Canonical tool_id."}},
    "required": ["tool_id"],
    "additionalProperties": False,
}
SCHEMA_VIEW = {
    "type": "object",
    "properties": {
        "handle": {"type": "string", "description": "Artifact handle from a tool_execute envelope."},
        "selector": {
            "type": "string",
            "description": "'' (all), 'chars:A-B', 'lines:A-B', a JSON pointer '/a/0', or 'keys'.",
        },
    },
    "required": ["handle"],
    "additionalProperties": False,
}

META_TOOLS = {
    "tool_browse": ("Browse the tool catalog by query or path. Pass exactly one of query/path.", SCHEMA_BROWSE),
    "tool_execute": ("Invoke a tool by tool_id with args; args are validated first.", SCHEMA_EXECUTE),
    "tool_hydrate": ("Return the full input schema of a tool by tool_id.", SCHEMA_HYDRATE),
    "tool_view": ("Drill into an artifact produced by tool_execute.", SCHEMA_VIEW),
}
PROFILE_TOOLS = {
    GATEWAY: ("tool_browse", "tool_execute", "tool_view"),
    TRANSPARENT: ("tool_hydrate", "tool_execute"),
}
SENTINEL_SCHEMA = {"type": "object"}


def encode_name(tool_id: str) -> str:
    """§4.1: URL-encode ``:`` and ``#`` (``%3A``, ``%23``) for strict clients."""
    return tool_id.replace(":", "%3A").replace("#", "%23")


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def ok_result(structured: dict[str, Any], text: str | None = None, is_error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(text=_dumps(structured) if text is None else text)],
        structured_content=structured,
        is_error=is_error,
    )


def error_payload(err: GatewayError, profile: str) -> dict[str, Any]:
    """§3.4 object; for the gateway wrapped as an error ResultEnvelope whose
    top level also carries the four §3.4 keys."""
    body = err.to_dict()
    if profile == GATEWAY:
        env = ResultEnvelope(status="error", summary=err.message, provenance={"error_path": err.path}).to_dict()
        return {**env, **body}
    return body


def error_result(err: GatewayError, profile: str) -> types.CallToolResult:
    return ok_result(error_payload(err, profile), is_error=True)


class TollboothServer:
    """Binds a :class:`ProxyRuntime` to an ``mcp.server.Server``."""

    def __init__(
        self,
        runtime: ProxyRuntime,
        profile: str,
        *,
        encode_names: bool = False,
        proxy_result: str = "passthrough",
        name: str = "tollbooth",
    ) -> None:
        if profile not in PROFILE_TOOLS:
            raise ValueError(f"unknown profile {profile!r}")
        self.runtime = runtime
        self.profile = profile
        self.encode_names = encode_names
        self.proxy_result = proxy_result
        self.ready = anyio.Event()
        self.server = Server(name, version="0.1.0", on_list_tools=self.on_list_tools, on_call_tool=self.on_call_tool)

    # -- tools/list ---------------------------------------------------------
    async def on_list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        await self.ready.wait()
        try:
            return types.ListToolsResult(tools=self._tool_list())
        except Exception:  # noqa: BLE001 - never fail tools/list; fall back to the meta-tools
            log.exception("building tools/list failed")
            return types.ListToolsResult(tools=self._tool_list(stripped=False))

    def _tool_list(self, stripped: bool = True) -> list[types.Tool]:
        tools = [
            types.Tool(name=n, description=META_TOOLS[n][0], input_schema=META_TOOLS[n][1])
            for n in PROFILE_TOOLS[self.profile]
        ]
        if self.profile == TRANSPARENT and stripped:
            for tool_id in sorted(self.runtime.catalog.entries):
                card = self.runtime.catalog.entries[tool_id].card
                name = encode_name(tool_id) if self.encode_names else tool_id
                tools.append(types.Tool(name=name, description=card.description, input_schema=dict(SENTINEL_SCHEMA)))
        return tools

    # -- tools/call ---------------------------------------------------------
    async def on_call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        await self.ready.wait()
        name = params.name
        args = params.arguments or {}
        try:
            if name not in PROFILE_TOOLS[self.profile]:
                raise self._unknown_tool(name)
            return await self._dispatch(name, args)
        except GatewayError as err:
            return error_result(err, self.profile)
        except Exception as exc:  # noqa: BLE001 - never raise across the MCP boundary
            log.exception("internal error in %s", name)
            err = GatewayError(UPSTREAM_ERROR, f"internal error: {type(exc).__name__}: {exc}", details={"internal": True})
            return error_result(err, self.profile)

    def _unknown_tool(self, name: str) -> GatewayError:
        if self.profile == TRANSPARENT:
            from urllib.parse import unquote

            if unquote(name) in self.runtime.catalog.entries:
                return GatewayError(
                    ARGS_INVALID,
                    "stripped catalog entries are discovery-only; call tool_execute(tool_id, args)",
                    path=unquote(name),
                    details={"reason": "direct_call_unsupported", "use": "tool_execute"},
                )
        return GatewayError(
            ARGS_INVALID,
            f"unknown tool {name!r}; available: {list(PROFILE_TOOLS[self.profile])}",
            path=name,
            details={"reason": "unknown_tool"},
        )

    @staticmethod
    def _check_keys(args: dict[str, Any], allowed: tuple[str, ...], required: tuple[str, ...]) -> None:
        extra = sorted(k for k in args if k not in allowed)
        if extra:
            raise GatewayError(ARGS_INVALID, f"unexpected argument(s) {extra}", details={"unexpected": extra})
        missing = [k for k in required if args.get(k) is None]
        if missing:
            raise GatewayError(ARGS_INVALID, f"missing argument(s) {missing}", details={"missing": missing})

    async def _dispatch(self, name: str, args: dict[str, Any]) -> types.CallToolResult:
        rt = self.runtime
        if name == "tool_browse":
            cards = rt.browse(args)
            return ok_result({"cards": [c.to_dict() for c in cards]}, text=render_browse(cards))
        if name == "tool_hydrate":
            self._check_keys(args, ("tool_id",), ("tool_id",))
            return ok_result(rt.hydrate(args["tool_id"]))
        if name == "tool_view":
            self._check_keys(args, ("handle", "selector"), ("handle",))
            view = rt.view(args["handle"], args.get("selector"))
            return ok_result(view)
        # tool_execute
        self._check_keys(args, ("tool_id", "args"), ("tool_id",))
        if self.profile == GATEWAY or self.proxy_result == "envelope":
            env = await rt.execute_enveloped(args["tool_id"], args.get("args"))
            return ok_result(env.to_dict(), is_error=env.status == "error")
        raw = await rt.call(args["tool_id"], args.get("args"))
        return passthrough(raw, args["tool_id"])


def passthrough(raw: dict[str, Any], tool_id: str) -> types.CallToolResult:
    """Transparent proxy result (§4.1 "returns the result"): the upstream
    content / structuredContent / isError, re-validated; upstream ``_meta``
    and a non-object structuredContent are dropped."""
    clean: dict[str, Any] = {"content": raw.get("content", []), "isError": raw.get("isError") is True}
    if isinstance(raw.get("structuredContent"), dict):
        clean["structuredContent"] = raw["structuredContent"]
    try:
        return types.CallToolResult.model_validate(clean, by_name=False)
    except Exception as exc:  # noqa: BLE001
        raise GatewayError(
            UPSTREAM_ERROR, f"upstream result is not a valid CallToolResult: {exc}", path=tool_id
        ) from None
