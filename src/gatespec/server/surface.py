"""The MCP surface of one exposure profile over a GatewayRuntime: tools/list and tools/call.

`build_server(runtime)` returns an mcp low-level Server for the runtime's profile:

- tools/list: exactly the profile's meta-tools (generated descriptors); a profile that lists
  upstream tools as "stripped" (transparent) adds `runtime.stripped_tools()`.
- tools/call: arguments are checked against the meta-tool's generated input schema before the
  runtime sees them, then dispatched. Nothing raises across the MCP boundary: a GatewayError
  becomes an isError result whose text is the §3.4 payload as JSON; any other exception is
  logged and reported the same way as UPSTREAM_ERROR. A success is the runtime's exact text
  plus its structured form, checked against the meta-tool's output schema (clients reject a
  mismatch, so we report it instead).
- Error results also carry the payload as structuredContent unless tools/list advertises
  output schemas (AM-OUTPUT-SCHEMA-OFF-WIRE turned them off): TypeScript SDK 1.x clients (MCP
  Inspector 0.15, SDK 1.32) validate structuredContent against the advertised outputSchema
  even on isError results and replace our error with their own -32602 (typescript-sdk#2748,
  fixed in its 2.x line). The text always carries the payload.
- list_changed (profiles that list upstream tools): handshake-era clients get
  notifications/tools/list_changed, 2026-07-28 clients a subscriptions/listen event, whenever
  the runtime reports a catalog change.
- What an upstream sends while running a tool_execute (progress, log messages, requests of its
  client) reaches the client request behind it (server.relay, AM-UPSTREAM-RELAY); the server
  therefore offers logging, and passes a client's logging/setLevel on to the upstreams.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from importlib import metadata
from typing import Any, Final

from jsonschema import Draft202012Validator
from mcp.server import Server
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.models import InitializationOptions
from mcp_types import (
    CallToolResult,
    EmptyResult,
    ListToolsResult,
    SetLevelRequestParams,
    TextContent,
    Tool,
)

from gatespec.core import GatewayRuntime, Relay, Reply
from gatespec.server.arguments import ArgumentChecker
from gatespec.server.notify import ListChangedNotifier
from gatespec.server.relay import LogLevels, RequestRelay
from gatespec.server.sessions import session_key
from gatespec.serving import SERVED_PROFILES
from gatespec.validation import fast_accepts, fast_validator
from gatespec_surface.descriptors import (
    META_TOOL_DESCRIPTIONS,
    PROFILES,
    output_schema,
    tools_for_profile,
)
from gatespec_surface.errors import PATH_MAX_CHARS, ErrorCode, GatewayError
from gatespec_surface.schemas import META_TOOL_INPUT_SCHEMAS, STRIPPED_INPUT_SCHEMA
from gatespec_surface.text import clip

logger = logging.getLogger(__name__)

_SHOWN_MAX: Final = 80  # a quoted tool name in a message


MetaToolCall = Callable[[GatewayRuntime, str, dict[str, Any], Relay | None], Awaitable[Reply]]

# The runtime operation behind each meta-tool (the arguments are already checked and defaulted).
_DISPATCH: Final[dict[str, MetaToolCall]] = {
    "tool_browse": lambda rt, s, a, r: rt.browse(s, a.get("query"), a.get("path")),
    "tool_hydrate": lambda rt, s, a, r: rt.hydrate(s, a["tool_id"]),
    "tool_execute": lambda rt, s, a, r: rt.execute(s, a["tool_id"], a["args"], relay=r),
    "tool_view": lambda rt, s, a, r: rt.view(s, a["handle"], a["selector"]),
}


def error_result(error: GatewayError, structured: bool = True) -> CallToolResult:
    """The isError result for a GatewayError: the §3.4 payload as JSON text, and as
    structuredContent when `structured` (see the module docstring for when not)."""
    payload = error.to_payload()
    text = json.dumps(payload, ensure_ascii=False)
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=payload if structured else None,
        is_error=True,
    )


def _gateway_error(exc: BaseException) -> GatewayError | None:
    """A GatewayError, also when a task group wrapped it alone in an ExceptionGroup."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc if isinstance(exc, GatewayError) else None


class MetaToolSurface:
    """tools/list and tools/call of one profile, independent of MCP plumbing."""

    def __init__(self, runtime: GatewayRuntime, structured_errors: bool | None = None) -> None:
        profile = runtime.profile
        if profile not in SERVED_PROFILES:
            raise ValueError(
                f"profile {profile!r} is not served (served: {', '.join(SERVED_PROFILES)})"
            )
        self.runtime = runtime
        self.profile = profile
        self.lists_stripped = PROFILES[profile].lists_upstream_tools == "stripped"
        self.meta_tools = tools_for_profile(profile)
        self.names = tuple(tool.name for tool in self.meta_tools)
        self._checkers = {name: ArgumentChecker(name) for name in self.names}
        advertised = any(tool.output_schema is not None for tool in self.meta_tools)
        self.structured_errors = not advertised if structured_errors is None else structured_errors
        # Results are checked against the output models whether or not tools/list shows them:
        # jsonschema-rs accepts, python-jsonschema words a rejection.
        self._outputs = {
            name: (fast_validator(Draft202012Validator, schema), Draft202012Validator(schema))
            for name in self.names
            if (schema := output_schema(name)) is not None
        }

    def list_tools(self) -> list[Tool]:
        tools = list(self.meta_tools)
        if self.lists_stripped:
            try:
                tools.extend(self.runtime.stripped_tools())
            except Exception:  # a broken catalog must not take the meta-tools down with it
                logger.exception("listing the stripped catalog failed; serving meta-tools only")
        return tools

    def input_schema(self, name: str) -> Mapping[str, Any] | None:
        """Input schema by tool name, for the SDK's Mcp-Param header check (2026-07-28 HTTP),
        so it does not run tools/list (the whole stripped catalog) on every call."""
        if name in self._checkers:
            return META_TOOL_INPUT_SCHEMAS[name]
        return STRIPPED_INPUT_SCHEMA if self.lists_stripped else None

    async def call(
        self,
        session: str,
        name: str,
        arguments: Mapping[str, Any] | None,
        relay: Relay | None = None,
    ) -> CallToolResult:
        """Run one tools/call; never raises (cancellation aside). `relay` is the client
        request behind it, for what upstreams send while answering."""
        try:
            checker = self._checkers.get(name)
            if checker is None:
                raise self._not_a_meta_tool(name)
            args = checker.check(arguments)
            reply = await _DISPATCH[name](self.runtime, session, args, relay)
            return self._success(name, reply)
        except Exception as exc:
            error = _gateway_error(exc)
            if error is None:
                logger.exception("%s failed unexpectedly", name)
                error = GatewayError(
                    ErrorCode.UPSTREAM_ERROR,
                    f"{name} failed inside the gateway: {type(exc).__name__}: {exc}",
                    details={"exception": type(exc).__name__},
                )
            return error_result(error, self.structured_errors)

    def _success(self, name: str, reply: Reply) -> CallToolResult:
        validators = self._outputs.get(name)
        if validators is not None and not fast_accepts(validators[0], reply.structured):
            problem = (
                "no structured content"
                if reply.structured is None
                else next((e.message for e in validators[1].iter_errors(reply.structured)), None)
            )
            if problem is not None:
                logger.error("%s produced an invalid result: %s", name, problem)
                raise GatewayError(
                    ErrorCode.UPSTREAM_ERROR,
                    f"{name} produced a result that breaks its output schema: {problem}",
                    details={"output_invalid": True},
                )
        return CallToolResult(
            content=[TextContent(type="text", text=reply.text)],
            structured_content=reply.structured,
        )

    def _not_a_meta_tool(self, name: str) -> GatewayError:
        shown = clip(name, _SHOWN_MAX)
        tools = ", ".join(self.names)
        if name in META_TOOL_DESCRIPTIONS:  # a meta-tool of another profile
            message = (
                f"{name} is not part of the {self.profile} profile; this server's tools are "
                f"{tools}."
            )
        elif self.lists_stripped:
            message = (
                f"{shown!r} is not callable directly: tools/list entries other than {tools} are "
                f"for discovery. Call tool_execute with tool_id={shown!r} and the tool's "
                "arguments in args (tool_hydrate shows its schema)."
            )
        else:
            message = (
                f"no tool named {shown!r}; this gateway's tools are {tools}. Find tools with "
                "tool_browse and run them with tool_execute."
            )
        return GatewayError(
            ErrorCode.TOOL_NOT_FOUND,
            message,
            name if len(name) <= PATH_MAX_CHARS else "",
            {"tools": list(self.names), "use": "tool_execute"},
        )


class GatewayServer(Server[Any]):
    """An mcp low-level Server that knows its surface and its list_changed notifier."""

    surface: MetaToolSurface
    notifier: ListChangedNotifier | None = None

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        # Transports that build their own options (the Streamable HTTP session manager, the
        # in-memory test transport) call this without arguments: advertise listChanged there.
        if notification_options is None:
            notification_options = NotificationOptions(tools_changed=self.notifier is not None)
        return super().create_initialization_options(
            notification_options, experimental_capabilities, extensions
        )


def server_version() -> str:
    try:
        return metadata.version("gatespec")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def build_server(
    runtime: GatewayRuntime,
    *,
    name: str = "gatespec",
    fallback_session: str = "local",
    notify_list_changed: bool | None = None,
    structured_errors: bool | None = None,
) -> GatewayServer:
    """An MCP server for `runtime.profile`.

    fallback_session: the session key when the transport identifies no session (stdio: one
    client per process). notify_list_changed: announce catalog changes; by default only for
    profiles whose tools/list shows the catalog (in the gateway profile the list never changes).
    structured_errors: put error payloads in structuredContent too; by default only when
    tools/list advertises no output schema (see the module docstring).
    """
    if runtime.profile == "aggregate":  # the aggregate profile has a surface of its own
        from gatespec.aggregate.surface import build_aggregate_server

        return build_aggregate_server(
            runtime,  # type: ignore[arg-type]  # the aggregate profile's runtime
            name=name,
            fallback_session=fallback_session,
        )
    surface = MetaToolSurface(runtime, structured_errors)
    announce = surface.lists_stripped if notify_list_changed is None else notify_list_changed
    notifier = ListChangedNotifier() if announce else None
    levels = LogLevels()

    async def on_list_tools(ctx: Any, params: Any) -> ListToolsResult:
        return ListToolsResult(tools=surface.list_tools())

    async def on_call_tool(ctx: Any, params: Any) -> CallToolResult:
        session = session_key(ctx, fallback_session)
        relay = RequestRelay(ctx, session, levels)
        return await surface.call(session, params.name, params.arguments, relay=relay)

    async def on_set_level(ctx: Any, params: SetLevelRequestParams) -> EmptyResult:
        levels.set(session_key(ctx, fallback_session), params.level)
        set_upstream_level = getattr(runtime, "set_log_level", None)
        if set_upstream_level is not None:
            await set_upstream_level(params.level)
        return EmptyResult()

    server = GatewayServer(
        name,
        version=server_version(),
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        on_subscriptions_listen=notifier.listen_handler if notifier is not None else None,
        get_tool_input_schema=surface.input_schema,
    )
    server.surface = surface
    # Registered after construction: the constructor warns that logging is deprecated in
    # 2026-07-28, but handshake-era clients (most of them) still set levels.
    server.add_request_handler("logging/setLevel", SetLevelRequestParams, on_set_level)
    if notifier is not None:
        server.notifier = notifier
        server.middleware.append(notifier.middleware)
        runtime.add_catalog_listener(notifier.tools_changed)
    return server
