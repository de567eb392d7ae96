"""The MCP server of a catalog profile over a GatewayRuntime: tools/list and tools/call.

`build_server(runtime)` returns an mcp low-level Server for a catalog profile (gateway,
transparent, search; gatespec.profiles.registry names each profile's builder):

- tools/list: exactly the profile's meta-tools (generated descriptors); a profile that lists
  upstream tools as "stripped" (transparent) adds `runtime.stripped_tools()`.
- tools/call: arguments are checked against the meta-tool's generated input schema before the
  runtime sees them, then dispatched. Nothing raises across the MCP boundary: a GatewayError
  becomes an isError result whose text is the §3.4 payload as JSON; any other exception is
  logged and reported the same way as UPSTREAM_ERROR. A success is the runtime's exact text
  plus its structured form, checked against the meta-tool's output schema (clients reject a
  mismatch, so we report it instead), then any image or audio blocks (AM-INLINE-MEDIA).
- Error results also carry the payload as structuredContent unless tools/list advertises
  output schemas (AM-OUTPUT-SCHEMA-OFF-WIRE turned them off): TypeScript SDK 1.x clients (MCP
  Inspector 0.15, SDK 1.32) validate structuredContent against the advertised outputSchema
  even on isError results and replace our error with their own -32602 (typescript-sdk#2748,
  fixed in its 2.x line). The text always carries the payload.
- Meta-tools whose result is the upstream's own (profiles.yaml `result: upstream`: the search
  profile's call) answer with the upstream's content, structuredContent and isError.
- The dispatch from a meta-tool name to the runtime's operation is generated from
  profiles.yaml (gatespec_surface.operations.call_meta_tool), with typed arguments.
- Who is calling: the session key of the transport and the identity the bearer token proved
  (HTTP) or the config names (stdio); tools/list and every call see that identity's catalog.
- list_changed (profiles that list upstream tools): handshake-era clients get
  notifications/tools/list_changed, 2026-07-28 clients a subscriptions/listen event, whenever
  the catalog their identity may see changed.
- What an upstream sends while running a tool (tool_execute, the search profile's call)
  reaches the client request behind it (server.relay, AM-UPSTREAM-RELAY); the server
  therefore offers logging, and passes a client's logging/setLevel on to the upstreams.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from dataclasses import replace
from importlib import metadata
from typing import TYPE_CHECKING, Any, Final

from jsonschema import Draft202012Validator
from mcp.server import Server
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.models import InitializationOptions
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    AudioContent,
    CallToolResult,
    EmptyResult,
    ImageContent,
    ListToolsResult,
    SetLevelRequestParams,
    TextContent,
    Tool,
)
from pydantic import ValidationError

from gatespec.access import LOCAL, Identity
from gatespec.metrics import Metrics, metrics_of
from gatespec.runtime_contract import Caller, GatewayRuntime, Reply
from gatespec.server.arguments import ArgumentChecker
from gatespec.server.mrtr import InputRequiredRelay
from gatespec.server.notify import ListChangedNotifier
from gatespec.server.relay import LogLevels, RequestRelay
from gatespec.server.sessions import identity_of, session_key
from gatespec.validation import fast_accepts, fast_validator
from gatespec_surface.descriptors import (
    META_TOOL_DESCRIPTIONS,
    PROFILES,
    output_schema,
    tools_for_profile,
)
from gatespec_surface.errors import PATH_MAX_CHARS, ErrorCode, GatewayError
from gatespec_surface.operations import call_meta_tool
from gatespec_surface.schemas import META_TOOL_INPUT_SCHEMAS, STRIPPED_INPUT_SCHEMA
from gatespec_surface.text import clip

logger = logging.getLogger(__name__)

_SHOWN_MAX: Final = 80  # a quoted tool name in a message
UNAUTHENTICATED: Final = "this request carries no verified identity"
# The meta-tools whose operation runs an upstream tool and relays what it sends (caller.relay).
RELAYING_META_TOOLS: Final = frozenset({"tool_execute", "call"})
# The content block types of Reply.media (AM-INLINE-MEDIA).
_MEDIA: Final[dict[str, type[ImageContent] | type[AudioContent]]] = {
    "image": ImageContent,
    "audio": AudioContent,
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


def error_code(result: CallToolResult) -> str | None:
    """The spec error code of an isError result the gateway made; "upstream" for one the
    upstream tool made itself (its own isError result); None for a success."""
    if not result.is_error:
        return None
    payload = result.structured_content
    if payload is None:
        try:
            payload = json.loads(result.content[0].text)  # type: ignore[union-attr]
        except Exception:
            payload = None
    code = payload.get("code") if isinstance(payload, dict) else None
    return code if isinstance(code, str) and code in ErrorCode.__members__ else "upstream"


def _gateway_error(exc: BaseException) -> GatewayError | None:
    """A GatewayError, also when a task group wrapped it alone in an ExceptionGroup."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc if isinstance(exc, GatewayError) else None


class MetaToolHandlers:
    """tools/list and tools/call of one profile, independent of MCP plumbing."""

    def __init__(self, runtime: GatewayRuntime, structured_errors: bool | None = None) -> None:
        profile = runtime.profile
        spec = PROFILES.get(profile)
        if spec is None:
            raise ValueError(
                f"no profile {profile!r} in the spec (profiles: {', '.join(PROFILES)})"
            )
        if not spec.meta_tools:  # the aggregate profile: profiles.aggregate.server
            raise ValueError(f"profile {profile!r} has no meta-tools to serve")
        self.runtime = runtime
        self.profile = profile
        self.metrics: Metrics | None = None  # set by build_server
        self.lists_stripped = spec.lists_upstream_tools == "stripped"
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

    def list_tools(self, identity: Identity | None = LOCAL) -> list[Tool]:
        """The meta-tools, and for a profile that lists them the stripped entries `identity`
        may see (none for a request with no verified identity)."""
        tools = list(self.meta_tools)
        if self.lists_stripped and identity is not None:
            try:
                tools.extend(self.runtime.stripped_tools(identity))
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
        self, caller: Caller | str | None, name: str, arguments: Mapping[str, Any] | None
    ) -> CallToolResult:
        """Run one tools/call for `caller` (a bare session key: the local identity; None: an
        HTTP request with no verified identity, refused); never raises (cancellation aside)."""
        started = time.perf_counter()
        result = await self._call(caller, name, arguments)
        if self.metrics is not None:
            label = name if name in self._checkers else "(not a meta-tool)"
            self.metrics.meta_call(label, time.perf_counter() - started, error_code(result))
        return result

    async def _call(
        self, caller: Caller | str | None, name: str, arguments: Mapping[str, Any] | None
    ) -> CallToolResult:
        try:
            if caller is None:
                raise GatewayError(ErrorCode.FORBIDDEN, UNAUTHENTICATED)
            if isinstance(caller, str):
                caller = Caller(caller)
            checker = self._checkers.get(name)
            if checker is None:
                raise self._not_a_meta_tool(name)
            args = checker.check(arguments)
            reply = await call_meta_tool(self.runtime, name, caller, args)
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
        if reply.content is not None:  # the upstream's own result (`result: upstream`)
            try:
                return CallToolResult.model_validate(
                    {
                        "content": list(reply.content),
                        "structuredContent": reply.structured,
                        "isError": reply.is_error,
                    }
                )
            except ValidationError as exc:
                why = exc.errors()[0]["msg"]
                raise GatewayError(
                    ErrorCode.UPSTREAM_ERROR,
                    f"the upstream's result is not a valid MCP tool result: {why}",
                    details={"output_invalid": True},
                ) from None
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
            content=[
                TextContent(type="text", text=reply.text),
                *(TextContent(type="text", text=note) for note in reply.notes),
                *(_MEDIA[block["type"]].model_validate(block) for block in reply.media),
            ],
            structured_content=reply.structured,
            is_error=reply.is_error,
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
    """An mcp low-level Server that knows its meta-tool handlers and its list_changed notifier."""

    handlers: MetaToolHandlers
    notifier: ListChangedNotifier | None = None
    metrics: Metrics | None = None  # what GET /metrics (or the stdio metrics port) serves
    # Whether an HTTP request must carry a verified identity (the HTTP app sets it when it
    # requires bearer tokens); a request without one is then refused, never served as local.
    requires_identity: bool = False
    # The session key of a client the transport does not name (stdio, in-process).
    fallback_session: str = "local"
    # Who calls when the transport proves nobody (stdio; HTTP without access control).
    fallback_identity: Identity = LOCAL

    if not TYPE_CHECKING:  # type checkers keep Server's own signature

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            # 2026-07-28 clients: upstream requests for client input as input_required results
            # (every profile's server is a GatewayServer).
            self.middleware.append(InputRequiredRelay(self))

    def refused(self, method: str, error: GatewayError) -> dict[str, Any]:
        """A request refused before it is handled: an isError result for tools/call, a
        JSON-RPC error carrying the payload otherwise."""
        if method != "tools/call":
            raise MCPError(code=INVALID_PARAMS, message=error.message, data=error.to_payload())
        structured = getattr(self, "handlers", None)
        result = error_result(error, structured.structured_errors if structured else True)
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)

    @property
    def served(self) -> Any:
        """The runtime this server serves (health and readiness read its state backend)."""
        return self.handlers.runtime

    def may_relay(self, method: str, params: Mapping[str, Any]) -> bool:
        """Whether handling this request may send its client something before the answer
        (AM-UPSTREAM-RELAY); Streamable HTTP answers the others with one JSON body."""
        return method == "tools/call" and params.get("name") in RELAYING_META_TOOLS

    async def session_ended(self, session: str) -> None:
        """A client session ended (the transports call it: an HTTP session discarded, an SSE
        stream closed, stdin closed): what is kept for it goes. Never raises."""
        if self.notifier is not None:
            self.notifier.forget(session)

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


def caller_identity(server: GatewayServer, ctx: Any, fallback: Identity) -> Identity | None:
    """Who makes the request behind `ctx`: the identity its bearer token proved; `fallback`
    where the transport proves none (stdio, HTTP without access control); None for an HTTP
    request with no verified identity when the app requires one."""
    found = identity_of(ctx, fallback)
    if found is None and not server.requires_identity:
        return fallback  # HTTP without access control: today's local caller
    return found


def build_server(
    runtime: GatewayRuntime,
    *,
    name: str = "gatespec",
    fallback_session: str = "local",
    fallback_identity: Identity = LOCAL,
    notify_list_changed: bool | None = None,
    structured_errors: bool | None = None,
) -> GatewayServer:
    """An MCP server for `runtime.profile`, a profile with meta-tools (the aggregate one has
    a server of its own: gatespec.profiles.registry.build_server picks by profile).

    fallback_session and fallback_identity: who calls when the transport says nothing (stdio:
    one client per process, with the config's stdio identity). An HTTP request's identity is
    the one its bearer token proved; without access control HTTP callers are the fallback.
    notify_list_changed: announce catalog changes; by default only for profiles whose
    tools/list shows the catalog (in the gateway profile the list never changes).
    structured_errors: put error payloads in structuredContent too; by default only when
    tools/list advertises no output schema (see the module docstring).
    """
    handlers = MetaToolHandlers(runtime, structured_errors)
    handlers.metrics = metrics_of(runtime)
    announce = handlers.lists_stripped if notify_list_changed is None else notify_list_changed

    def identity(ctx: Any) -> Identity | None:
        return caller_identity(server, ctx, fallback_identity)

    def caller_of(ctx: Any) -> Caller | None:
        who = identity(ctx)
        return None if who is None else Caller(session_key(ctx, fallback_session), who)

    notifier = ListChangedNotifier(runtime.visible_ids, identity) if announce else None
    levels = LogLevels()

    async def on_list_tools(ctx: Any, params: Any) -> ListToolsResult:
        caller = caller_of(ctx)
        return ListToolsResult(tools=handlers.list_tools(caller.identity if caller else None))

    async def on_call_tool(ctx: Any, params: Any) -> CallToolResult:
        caller = caller_of(ctx)
        if caller is not None:
            caller = replace(caller, relay=RequestRelay(ctx, caller.session, levels))
        return await handlers.call(caller, params.name, params.arguments)

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
        get_tool_input_schema=handlers.input_schema,
    )
    server.handlers = handlers
    server.metrics = handlers.metrics
    server.fallback_session = fallback_session
    server.fallback_identity = fallback_identity
    # Registered after construction: the constructor warns that logging is deprecated in
    # 2026-07-28, but handshake-era clients (most of them) still set levels.
    server.add_request_handler("logging/setLevel", SetLevelRequestParams, on_set_level)
    if notifier is not None:
        server.notifier = notifier
        server.middleware.append(notifier.middleware)
        runtime.add_catalog_listener(notifier.tools_changed)
    return server
