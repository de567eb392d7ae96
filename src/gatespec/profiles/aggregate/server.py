"""The aggregate profile's MCP server: every list and routed request of an AggregateRuntime.

- tools/list, prompts/list, resources/list, resources/templates/list: a page of the merged
  list (AM-AGGREGATE-LISTING); an unknown or expired cursor is a JSON-RPC invalid-params error.
- tools/call: the upstream's own result, or an isError result carrying the §3.4 payload
  (AM-AGGREGATE-ERRORS); nothing raises across the boundary.
- prompts/get, resources/read, completion/complete, resources/subscribe/unsubscribe: the
  upstream's answer; a routing failure is a JSON-RPC error whose data is the payload, and an
  upstream's own JSON-RPC error is passed on.
- logging/setLevel: the session's filter, passed on to the upstreams that offer logging.
- Capabilities: what the connected upstreams offer together (AM-AGGREGATE-CAPABILITIES);
  list changes and resource updates in both protocol eras (server.notify).
- What an upstream sends during a request reaches that request's client (server.relay).
- Who is calling: the identity a bearer token proved (HTTP) or the config names (stdio); every
  list and request sees what that identity may see (AM-ACCESS-CONTROL), and list changes reach
  it only when what it sees changed (AM-ACCESS-NO-LEAK).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, get_args

import anyio
import mcp_types as types
from mcp.server.caching import CacheHint
from mcp.server.lowlevel.server import NotificationOptions
from mcp.shared.exceptions import MCPError
from mcp_types.methods import CacheableMethod
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from gatespec.access import LOCAL, Identity
from gatespec.metrics import metrics_of
from gatespec.profiles.aggregate.naming import LISTS
from gatespec.profiles.aggregate.pages import CursorInvalid
from gatespec.profiles.aggregate.runtime import AggregateRuntime
from gatespec.runtime_contract import CLIENT_CAPABILITIES
from gatespec.server.catalog_server import (
    UNAUTHENTICATED,
    GatewayServer,
    caller_identity,
    error_result,
    server_version,
)
from gatespec.server.notify import ListChangedNotifier
from gatespec.server.relay import LogLevels, RequestRelay
from gatespec.server.sessions import SESSIONLESS_KEY, session_key
from gatespec.upstream import UpstreamError
from gatespec_surface.errors import ErrorCode, GatewayError

__all__ = ["AggregateServer", "build_aggregate_server"]

logger = logging.getLogger(__name__)

# Failures of the request itself (the client can fix them) are invalid params; the others
# (a server down or too slow) are internal errors. Either way the data is the payload.
_INVALID: Final = frozenset(
    {
        ErrorCode.NOT_NAMESPACED,
        ErrorCode.NAME_INVALID,
        ErrorCode.UNKNOWN_SERVER,
        ErrorCode.TOOL_NOT_FOUND,
        ErrorCode.ARGS_INVALID,
        ErrorCode.FORBIDDEN,
    }
)
_CAPABILITIES: Final = ("prompts", "resources", "completions", "logging")
# What a client declares that the upstream may keep about it (aggregate.client_upstreams).
_CLIENT_SCOPED: Final = frozenset(CLIENT_CAPABILITIES.values())
# The requests that reach upstreams, which may talk back while answering them.
_RELAYING: Final = frozenset(
    {"tools/call", "prompts/get", "resources/read", "completion/complete", *LISTS}
)


def _done(result: dict[str, Any]) -> dict[str, Any]:
    """A result of either era (2026-07-28 requires resultType; the SDK strips it for a
    handshake-era client)."""
    return {**result, "resultType": "complete"}


def rpc_error(exc: GatewayError | UpstreamError) -> MCPError:
    """A failure as a JSON-RPC error (AM-AGGREGATE-ERRORS)."""
    if isinstance(exc, UpstreamError):
        cause = exc.__cause__
        if exc.kind == "call_failed" and isinstance(cause, MCPError):
            return MCPError(code=cause.code, message=cause.message, data=cause.error.data)
        code = ErrorCode.SERVER_UNAVAILABLE if exc.kind != "timeout" else ErrorCode.TIMEOUT
        exc = GatewayError(code, str(exc), details={"server": exc.key, "kind": exc.kind})
    rpc = types.INVALID_PARAMS if exc.code in _INVALID else types.INTERNAL_ERROR
    return MCPError(code=rpc, message=f"{exc.code}: {exc.message}", data=exc.to_payload())


class AggregateServer(GatewayServer):
    """A GatewayServer whose capabilities follow its upstreams."""

    runtime: AggregateRuntime

    @property
    def served(self) -> Any:
        return self.runtime

    def may_relay(self, method: str, params: Mapping[str, Any]) -> bool:
        return method in _RELAYING

    async def session_ended(self, session: str) -> None:
        """Its resource subscriptions and its own upstream connections go too."""
        await super().session_ended(session)
        try:
            await self.runtime.forget_session(session)
        except Exception:  # nothing raises out of a transport's session teardown
            logger.exception("forgetting session %s failed", session)

    def get_capabilities(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
        *,
        protocol_version: str | None = None,
    ) -> types.ServerCapabilities:
        every = NotificationOptions(
            prompts_changed=True, resources_changed=True, tools_changed=True
        )
        base = super().get_capabilities(
            every, experimental_capabilities, extensions, protocol_version=protocol_version
        )
        offered = self.runtime.capabilities()
        update: dict[str, Any] = {c: None for c in _CAPABILITIES if c not in offered}
        if "resources" in offered and base.resources is not None:
            subscribe = bool(offered["resources"].get("subscribe")) and bool(
                base.resources.subscribe
            )
            update["resources"] = base.resources.model_copy(update={"subscribe": subscribe})
        return base.model_copy(update=update)


def build_aggregate_server(
    runtime: AggregateRuntime,
    *,
    name: str = "gatespec",
    fallback_session: str = "local",
    fallback_identity: Identity = LOCAL,
) -> AggregateServer:
    """An MCP server for the aggregate profile over `runtime`; fallback_session and
    fallback_identity as for server.build_server."""

    def identity_of(ctx: Any) -> Identity | None:
        return caller_identity(server, ctx, fallback_identity)

    def identity(ctx: Any) -> Identity:
        """Who calls; a request with no verified identity is refused (an HTTP app that
        requires tokens answers it 401 before it gets here)."""
        who = identity_of(ctx)
        if who is None:
            raise GatewayError(ErrorCode.FORBIDDEN, UNAUTHENTICATED)
        return who

    notifier = ListChangedNotifier(runtime.visible_names, identity_of)
    levels = LogLevels()

    def one_of_many(ctx: Any, session: str) -> bool:
        """A handshake-era client of a transport that serves many (HTTP, SSE): its
        client-scoped state is its own (aggregate.client_upstreams)."""
        return (
            session not in (fallback_session, SESSIONLESS_KEY)
            and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS
        )

    def session_of(ctx: Any) -> str:
        session = session_key(ctx, fallback_session)
        notifier.remember(session, ctx)
        if one_of_many(ctx, session) and not runtime.clients.scoped(session):
            declared = ctx.session.client_capabilities
            if any(getattr(declared, c, None) is not None for c in _CLIENT_SCOPED):
                runtime.clients.mark(session)
        return session

    def relay(ctx: Any) -> RequestRelay:
        return RequestRelay(ctx, session_of(ctx), levels)

    def listing(method: str) -> Callable[[Any, Any], Awaitable[dict[str, Any]]]:
        async def handler(ctx: Any, params: types.PaginatedRequestParams | None) -> dict[str, Any]:
            cursor = params.cursor if params is not None else None
            try:
                who = identity(ctx)
                return _done(await runtime.list_page(method, cursor, relay(ctx), who))
            except CursorInvalid as exc:
                raise MCPError(code=types.INVALID_PARAMS, message=f"{method}: {exc}") from None
            except GatewayError as exc:
                raise rpc_error(exc) from None

        return handler

    metrics = metrics_of(runtime)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> dict[str, Any]:
        started = time.perf_counter()
        result = await answer_call(ctx, params)
        code = None
        if result.get("isError"):
            payload = result.get("structuredContent")
            code = payload.get("code") if isinstance(payload, dict) else None
            code = code if isinstance(code, str) else "upstream"
        metrics.meta_call("tools/call", time.perf_counter() - started, code)
        return result

    async def answer_call(ctx: Any, params: types.CallToolRequestParams) -> dict[str, Any]:
        raw = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        try:
            who = identity(ctx)
            return _done(await runtime.call_tool(session_of(ctx), raw, relay(ctx), who))
        except GatewayError as exc:
            return _dump(error_result(exc))
        except Exception as exc:  # nothing raises across the boundary (ERROR-NEVER-RAISE)
            logger.exception("tools/call %s failed unexpectedly", params.name)
            error = GatewayError(
                ErrorCode.UPSTREAM_ERROR,
                f"tools/call failed inside the gateway: {type(exc).__name__}: {exc}",
                params.name,
                {"exception": type(exc).__name__},
            )
            return _dump(error_result(error))

    def routed(method: str) -> Callable[[Any, Any], Awaitable[dict[str, Any]]]:
        async def handler(ctx: Any, params: Any) -> dict[str, Any]:
            raw = params.model_dump(by_alias=True, mode="json", exclude_none=True)
            try:
                who = identity(ctx)
                return _done(await runtime.request(method, raw, session_of(ctx), relay(ctx), who))
            except (GatewayError, UpstreamError) as exc:
                raise rpc_error(exc) from None

        return handler

    def subscription(on: bool) -> Callable[[Any, Any], Awaitable[types.EmptyResult]]:
        async def handler(ctx: Any, params: Any) -> types.EmptyResult:
            raw = params.model_dump(by_alias=True, mode="json", exclude_none=True)
            try:
                await runtime.subscribe(session_of(ctx), raw, on=on, identity=identity(ctx))
            except (GatewayError, UpstreamError) as exc:
                raise rpc_error(exc) from None
            return types.EmptyResult()

        return handler

    async def set_level(ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
        session = session_of(ctx)
        levels.set(session, params.level)
        await runtime.set_log_level(params.level, session if one_of_many(ctx, session) else None)
        return types.EmptyResult()

    async def listen(ctx: Any, params: types.SubscriptionsListenRequestParams) -> Any:
        """2026-07-28: the URIs a listen stream names are subscribed upstream while it is
        open (handshake-era clients use resources/subscribe)."""
        uris = list(params.notifications.resource_subscriptions or ())
        stream = f"listen:{session_key(ctx, fallback_session)}:{ctx.request_id}"
        who = identity_of(ctx)
        if who is None:  # nothing is published on an unverified caller's bus
            return await notifier.listen_handler(ctx, params)
        notifier.remember(stream, ctx)  # its identity's bus carries the updates it names
        subscribed: list[str] = []
        try:
            for uri in uris:
                try:
                    await runtime.subscribe(stream, {"uri": uri}, identity=who)
                    subscribed.append(uri)
                except (GatewayError, UpstreamError) as exc:
                    logger.info("listen: cannot subscribe %s: %s", uri, exc)
            return await notifier.listen_handler(ctx, params)
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                for uri in subscribed:
                    try:
                        await runtime.subscribe(stream, {"uri": uri}, on=False, identity=who)
                    except (GatewayError, UpstreamError) as exc:
                        logger.info("listen: cannot unsubscribe %s: %s", uri, exc)
            notifier.forget(stream)

    server = AggregateServer(
        name,
        version=server_version(),
        # Lists and reads change with the upstreams: every answer is stale at once and
        # belongs to its client (2026-07-28 caching hints).
        cache_hints={m: CacheHint() for m in get_args(CacheableMethod)},
        on_list_tools=_wire(listing("tools/list")),
        on_call_tool=_wire(call_tool),
        on_list_prompts=_wire(listing("prompts/list")),
        on_get_prompt=_wire(routed("prompts/get")),
        on_list_resources=_wire(listing("resources/list")),
        on_list_resource_templates=_wire(listing("resources/templates/list")),
        on_read_resource=_wire(routed("resources/read")),
        on_subscribe_resource=subscription(True),
        on_unsubscribe_resource=subscription(False),
        on_completion=_wire(routed("completion/complete")),
        on_subscriptions_listen=listen,
        get_tool_input_schema=runtime.input_schema,
    )
    server.runtime = runtime
    server.notifier = notifier
    server.metrics = metrics
    server.fallback_session = fallback_session
    server.fallback_identity = fallback_identity
    # Registered after construction: the constructor warns that logging is deprecated in
    # 2026-07-28, but handshake-era clients (most of them) still set levels.
    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)
    server.middleware.append(notifier.middleware)
    runtime.add_change_listener(notifier.lists_changed)
    runtime.add_update_listener(notifier.resource_updated)
    return server


def _wire(handler: Callable[[Any, Any], Awaitable[dict[str, Any]]]) -> Any:
    """A handler that answers in wire form: the upstream's own result, namespaced, passed on
    as a dict (fields the SDK's models do not know survive). The SDK serialises a dict as it
    is; its handler types name the models, so this is where the two meet."""
    return handler


def _dump(result: types.CallToolResult) -> dict[str, Any]:
    return _done(result.model_dump(by_alias=True, mode="json", exclude_none=True))
