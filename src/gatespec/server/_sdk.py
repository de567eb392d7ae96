"""The server side's one seam into the MCP SDK: every private SDK name the server layer uses
is used here and nowhere else (the upstream side's seam is gatespec.upstream._sdk;
tests/runtime/server/test_sdk_seam.py and ruff's banned-api rule keep it so).

mcp 2.3's StreamableHTTPSessionManager keeps its session table, the credential each session
belongs to, its task group and its lifespan state private, and has no hook for a session it
did not open itself; its transport decides a session's answer form once, in a private method.
gatespec needs what the public API does not give:
- find the Connection behind a request (the session key, server.sessions; list_changed,
  server.notify),
- see which sessions are open and close one (the session bounds, server.session_limits), and
  count the legacy SSE streams open (the metrics, server.transports),
- adjust each transport the manager opens (the per-request answer form, server.answers, and a
  per-session event store, replicas.http_sessions),
- run code around each POST a session transport handles, and give an SDK-built transport a
  subclass's behaviour (server.answers),
- adopt a session another replica opened: a transport with that session id, registered with
  its owner, its server run already initialized with the client's stored initialize params
  (replicas.http_sessions), and hear when a session's copy here ends;
- tell whether a client request is in flight in a session here, and send a request to the
  client under an id of gatespec's choosing (a client's answer or cancellation that reaches
  another replica is passed to the one waiting for it, replicas.answer_forward).
tests/faults/test_http_sessions.py and the replica tests fail loudly should an SDK upgrade
move them.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, TypeVar

import anyio
from anyio.abc import TaskStatus
from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.runner import serve_connection
from mcp.server.session import ServerSession
from mcp.server.sse import SseServerTransport
from mcp.server.streamable_http import EventStore, StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp.shared.transport_context import TransportContext
from mcp_types import InitializeRequestParams
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

__all__ = [
    "PostHookTransport",
    "adopt_session",
    "close_session",
    "connection_of",
    "in_flight",
    "on_admit",
    "on_discard",
    "open_sessions",
    "recast",
    "send_request_as",
    "sse_streams",
    "use_event_store",
]

logger = logging.getLogger(__name__)

# admit(transport, client params or None): called for every transport a manager opens or adopts
Admit = Callable[[StreamableHTTPServerTransport, InitializeRequestParams | None], None]
T = TypeVar("T", bound=StreamableHTTPServerTransport)


class PostHookTransport(StreamableHTTPServerTransport):
    """A session transport that runs `handling_post(request)` around each POST it handles (a
    subclass overrides it; the SDK's handler is private)."""

    def handling_post(self, request: Request) -> AbstractAsyncContextManager[None]:
        return _nothing()

    async def _handle_post_request(
        self, scope: Scope, request: Request, receive: Receive, send: Send
    ) -> None:
        async with self.handling_post(request):
            await super()._handle_post_request(scope, request, receive, send)


@asynccontextmanager
async def _nothing() -> Any:
    yield


def recast(transport: StreamableHTTPServerTransport, cls: type[T]) -> T:
    """`transport`, built and registered by the SDK, made an instance of `cls`: a subclass
    that adds behaviour and no state the SDK's constructor would have set."""
    transport.__class__ = cls
    assert isinstance(transport, cls)
    return transport


def sse_streams(transport: SseServerTransport) -> int:
    """How many legacy SSE connections `transport` serves now."""
    return len(transport._read_stream_writers)  # noqa: SLF001


def connection_of(ctx: ServerRequestContext[Any, Any]) -> Connection | None:
    """The SDK Connection behind a request, if the SDK still keeps it where we look.

    mcp 2.3.0 hands low-level handlers a ServerRequestContext whose ServerSession wraps the
    Connection without a public accessor (`Context.connection` exists, but the runner never
    builds a `Context`). The tests fail loudly if an SDK upgrade moves it.
    """
    connection = getattr(ctx.session, "_connection", None)
    return connection if isinstance(connection, Connection) else None


def open_sessions(manager: StreamableHTTPSessionManager) -> dict[str, Any]:
    """The manager's live sessions by id (its own table: do not modify)."""
    table: dict[str, Any] = manager._server_instances  # noqa: SLF001
    return table


async def close_session(manager: StreamableHTTPSessionManager, session_id: str) -> None:
    transport = manager._server_instances.get(session_id)  # noqa: SLF001
    if transport is not None:
        await manager._discard_session(session_id, transport)  # noqa: SLF001


def in_flight(manager: StreamableHTTPSessionManager, session_id: str, request_id: Any) -> bool:
    """Whether the client request `request_id` of `session_id` is being answered here: the
    transport keeps a stream per request until its answer is sent."""
    transport = manager._server_instances.get(session_id)  # noqa: SLF001
    return transport is not None and str(request_id) in transport._request_streams  # noqa: SLF001


async def send_request_as(
    session: ServerSession, method: str, params: Mapping[str, Any] | None, request_id: str
) -> dict[str, Any]:
    """Send a request to the client on the stream of the request `session` serves, under
    `request_id` (ServerSession.send_request always lets the dispatcher mint the id)."""
    outbound = session._request_outbound  # noqa: SLF001
    return await outbound.send_raw_request(method, params, {"request_id": request_id})


def on_discard(
    manager: StreamableHTTPSessionManager, hook: Callable[[str], Awaitable[None]]
) -> None:
    """Await `hook(session id)` whenever `manager` discards a session (DELETE, idle timeout,
    crash, close_session)."""
    discarding = manager._discard_session  # noqa: SLF001

    async def discarded(session_id: str, transport: StreamableHTTPServerTransport) -> None:
        try:
            await discarding(session_id, transport)
        finally:
            await hook(session_id)

    manager._discard_session = discarded  # type: ignore[method-assign]


def use_event_store(transport: StreamableHTTPServerTransport, store: EventStore) -> None:
    """Give one session its own event store: the SDK takes one store for every session and
    hands it stream ids that do not name the session (replicas.http_sessions)."""
    transport._event_store = store  # noqa: SLF001


def on_admit(manager: StreamableHTTPSessionManager, admit: Admit) -> None:
    """Call `admit` on each transport `manager` opens from now on (and each adopted one)."""
    hooks: list[Admit] | None = getattr(manager, "_gatespec_admit", None)
    if hooks is None:
        hooks = []
        manager._gatespec_admit = hooks  # type: ignore[attr-defined]
        opening = manager._admit_session

        def admitted(requestor: Any) -> StreamableHTTPServerTransport | None:
            transport = opening(requestor)
            if transport is not None:
                for hook in hooks:
                    hook(transport, None)
            return transport

        manager._admit_session = admitted  # type: ignore[method-assign]
    hooks.append(admit)


async def adopt_session(
    manager: StreamableHTTPSessionManager,
    session_id: str,
    owner: AuthorizationContext | None,
    protocol_version: str,
    client_params: InitializeRequestParams,
) -> StreamableHTTPServerTransport | None:
    """Serve `session_id` here from now on, as if it had been initialized here with
    `client_params`; None when the manager is at its session limit (it then answers 503)."""
    table = manager._server_instances  # noqa: SLF001
    if session_id in table:
        return table[session_id]
    if manager.max_sessions is not None and len(table) >= manager.max_sessions:
        return None
    transport = StreamableHTTPServerTransport(
        mcp_session_id=session_id,
        is_json_response_enabled=manager.json_response,
        event_store=manager.event_store,
        security_settings=manager.security_settings,
        retry_interval=manager.retry_interval,
        idle_timeout=manager.session_idle_timeout,
    )
    for hook in getattr(manager, "_gatespec_admit", ()):
        hook(transport, client_params)
    if owner is not None:
        manager._session_owners[session_id] = owner  # noqa: SLF001
    table[session_id] = transport
    lifespan_state = manager._lifespan_state  # noqa: SLF001

    async def run_server(*, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        # What the manager's own run_server does for a session it opened, except that the
        # connection starts initialized (the handshake happened on another replica).
        async with transport.connect() as (read_stream, write_stream):
            task_status.started()
            dispatcher: JSONRPCDispatcher[TransportContext] = JSONRPCDispatcher(
                read_stream, write_stream, inline_methods=frozenset({"initialize"})
            )
            connection = Connection.for_loop(
                dispatcher, session_id=session_id, protocol_version_hint=protocol_version
            )
            connection.client_params = client_params
            connection.initialized.set()
            idle_scope = transport.idle_scope or anyio.CancelScope()
            try:
                with idle_scope:
                    await serve_connection(
                        manager.app,
                        dispatcher,
                        connection=connection,
                        lifespan_state=lifespan_state,
                    )
            except Exception:
                logger.exception("adopted session %s crashed", session_id[:16])
            finally:
                await manager._discard_session(session_id, transport)  # noqa: SLF001

    group = manager._task_group  # noqa: SLF001
    assert group is not None, "the session manager is not running"
    try:
        await group.start(run_server)
    except BaseException:
        await manager._discard_session(session_id, transport)  # noqa: SLF001
        raise
    logger.info("adopted session %s opened on another replica", session_id[:16])
    return transport
