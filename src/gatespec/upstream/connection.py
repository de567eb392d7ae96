"""One upstream MCP server over stdio, Streamable HTTP or legacy SSE, through the official client.

Each connection is driven by one runner task that owns the whole `mcp.Client` context (anyio
requires a context to be exited by the task that entered it). Requests are sent from any task
through the session; the runner only waits for a stop request or for the transport to end.

Protocol eras: the client negotiates with `mode="auto"` (probe `server/discover`, fall back to
`initialize`). Some handshake-era stdio servers exit when their first message is not
`initialize`, which leaves auto mode nothing to fall back on; when the connection closes during
an auto handshake we retry once with `mode="legacy"` in a fresh process, and remember a
handshake-era server so later reconnects skip the probe.

list_changed: on handshake-era connections the server's `notifications/tools/list_changed`
arrives through the client's message handler; on 2026-07-28 connections whose server advertises
`tools.listChanged` we hold a `subscriptions/listen` stream open (re-listened with backoff when
lost, followed by a refetch since there is no replay). Either way `on_tools_changed(key)` runs,
coalesced, in a task of the connection. Prompt and resource list changes and resource updates
go to `on_notification` (the aggregate registry follows them).

What the server sends while answering a request reaches the client request it was made for
(`relay`, AM-UPSTREAM-RELAY): its progress, its log messages, and the requests it makes of its
client (sampling, elicitation, roots), which the gateway therefore declares it can answer. A
2026-07-28 server's input_required results are resolved the same way.
"""

from __future__ import annotations

import asyncio
import logging
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import anyio
import httpx2
import mcp_types as types
from anyio.abc import TaskGroup
from mcp import Client
from mcp.client.session import IncomingMessage
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from gatespec import spawn
from gatespec.config import DEFAULT_CONNECT_TIMEOUT, ServerConfig
from gatespec.upstream import _sdk
from gatespec.upstream._host import TaskHost
from gatespec.upstream.base import (
    FOLLOWED_NOTIFICATIONS,
    MAX_PAGES,
    ListChangedSupport,
    ToolsChangedCallback,
    Upstream,
    UpstreamState,
)
from gatespec.upstream.errors import ErrorKind, UpstreamError
from gatespec.upstream.failures import (
    LOOP_REASON,
    HandshakeClosed,
    classify,
    describe,
    refused_as_loop,
    root_cause,
)
from gatespec.upstream.listening import SUBSCRIBING, ResourceWatch, announces_more, listen
from gatespec.upstream.oversized import MALFORMED_CODE, OVERSIZED_CODE
from gatespec.upstream.relay import InFlight
from gatespec.upstream.transports import StderrTail, open_transport
from gatespec.upstream.wire import call_result, plain_result

if TYPE_CHECKING:
    from gatespec.runtime_contract import Relay

logger = logging.getLogger(__name__)

MAX_TOOL_PAGES: Final = MAX_PAGES
CLIENT_INFO: Final = types.Implementation(name="gatespec", version="0.1.0")


@dataclass(eq=False)
class _Connection:
    """State of one connection attempt; a reconnect makes a new one, so stale events are inert."""

    mode: str
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    ready: anyio.Event = field(default_factory=anyio.Event)  # handshake done, or failed
    stopped: anyio.Event = field(default_factory=anyio.Event)  # close requested or transport ended
    finished: anyio.Event = field(default_factory=anyio.Event)  # runner and teardown done
    changed: anyio.Event = field(default_factory=anyio.Event)  # tool list changed, not yet handled
    client: Client | None = None
    stderr: StderrTail | None = None
    process: subprocess.Popen[bytes] | None = None  # a stdio server's process
    error: UpstreamError | None = None
    closing: bool = False
    list_changed: ListChangedSupport = None

    def fail(self, error: UpstreamError) -> None:
        """Record the first failure and stop the runner."""
        if self.error is None and not self.closing:
            self.error = error
        self.stopped.set()


class McpUpstream(Upstream):
    """An upstream MCP server reached through the official mcp client."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        call_timeout: float | None = None,
        on_tools_changed: ToolsChangedCallback | None = None,
        mode: str = "auto",
    ) -> None:
        if not config.kind.mcp:
            raise ValueError(f"McpUpstream cannot serve a {config.transport} server")
        super().__init__(
            config,
            connect_timeout=connect_timeout,
            call_timeout=call_timeout,
            on_tools_changed=on_tools_changed,
        )
        self._mode = mode
        self._conn: _Connection | None = None
        self._host = TaskHost()  # hosts the runner when no task group is passed to connect()
        self._closed = False
        self.protocol_version: str | None = None
        self.server_info: dict[str, Any] | None = None
        self._capabilities: dict[str, Any] = {}
        self._inflight = InFlight(self.key)
        self._watch = ResourceWatch()  # resources subscribed to (2026-07-28: the listen filter)

    # -- state ---------------------------------------------------------------------------

    @property
    def inflight(self) -> InFlight:
        """The client requests in flight here (upstream.relay), and the connection's owner."""
        return self._inflight

    @property
    def state(self) -> UpstreamState:
        conn = self._conn
        if conn is None:
            return "closed" if self._closed else "idle"
        if conn.error is not None:
            return "failed"
        if conn.closing:
            return "closed"
        if not conn.ready.is_set():
            return "connecting"
        return "connected"

    @property
    def reason(self) -> str | None:
        conn = self._conn
        return conn.error.reason if conn is not None and conn.error is not None else None

    @property
    def error(self) -> UpstreamError | None:
        return self._conn.error if self._conn is not None else None

    @property
    def list_changed(self) -> ListChangedSupport:
        return self._conn.list_changed if self._conn is not None else None

    @property
    def capabilities(self) -> dict[str, Any]:
        return dict(self._capabilities) if self.state == "connected" else {}

    # -- lifecycle -----------------------------------------------------------------------

    async def connect(self, task_group: TaskGroup | None = None) -> None:
        """Connect (or reconnect); raises UpstreamError with kind start_failed/timeout/protocol."""
        if self.state == "connected":
            return
        await self._retire()
        if task_group is None:
            task_group = await self._host.open()
        self._closed = False
        conn = _Connection(mode=self._mode)
        self._conn = conn
        task_group.start_soon(self._run, conn, name=f"upstream {self.key}")
        with anyio.move_on_after(self.connect_timeout):
            await conn.ready.wait()
        if not conn.ready.is_set():
            # The handshake hangs: give up now; teardown continues in the runner's task.
            conn.fail(
                self._error(
                    "timeout",
                    f"no MCP handshake within {self.connect_timeout:g}s",
                    conn,
                )
            )
            conn.scope.cancel()
            conn.ready.set()
        if conn.error is not None:
            raise conn.error

    async def close(self) -> None:
        """Close the connection and wait for its teardown (bounded by the SDK's own limits)."""
        self._closed = True
        await self._retire()
        self._conn = None
        await self._host.close()

    async def _retire(self) -> None:
        """Stop the current connection, if any, and wait until its runner is done."""
        conn = self._conn
        if conn is None:
            return
        conn.closing = conn.error is None
        conn.stopped.set()
        if not conn.ready.is_set():
            conn.scope.cancel()
        await conn.finished.wait()

    # -- runner --------------------------------------------------------------------------

    async def _run(self, conn: _Connection) -> None:
        try:
            with conn.scope:
                try:
                    await self._serve(conn, conn.mode)
                except HandshakeClosed:
                    if refused_as_loop(conn.process):
                        raise
                    # Auto mode's probe may have killed a handshake-era server: retry plainly.
                    logger.info("upstream %r closed during the probe; retrying legacy", self.key)
                    await self._serve(conn, "legacy")
        except Exception as exc:  # every failure is recorded; nothing escapes into the group
            if conn.error is None and not conn.closing:
                kind, reason = classify(exc, self.config, handshake=not conn.ready.is_set())
                if refused_as_loop(conn.process):
                    kind, reason = "loop", LOOP_REASON
                conn.error = self._error(kind, reason, conn)
        finally:
            conn.client = None
            if not conn.ready.is_set() and conn.error is None and not conn.closing:
                conn.error = self._error("start_failed", "connection ended during handshake", conn)
            conn.stopped.set()
            conn.ready.set()
            if conn.stderr is not None:
                conn.stderr.close()
                conn.stderr = None
            conn.finished.set()

    async def _serve(self, conn: _Connection, mode: str) -> None:
        """One connection attempt: handshake, then wait for stop or end of transport."""
        if conn.stderr is not None:
            conn.stderr.close()
            conn.stderr = None
        # The first connection adopts a process started before the SDK was imported, if any;
        # later ones start theirs the same way (gatespec.spawn), the SDK only off asyncio.
        early = None
        if self.config.kind.local_process and _on_asyncio():
            early = spawn.take(self.config) or spawn.start(self.config)
            conn.process = early.process
        if early is not None:
            conn.stderr = early.stderr
        else:
            conn.stderr = StderrTail() if self.config.kind.local_process else None

        def on_eof() -> None:
            if conn.ready.is_set() and not conn.stopped.is_set():
                what = "process exited" if self.config.kind.local_process else "stream ended"
                conn.fail(self._error("unavailable", f"server connection lost ({what})", conn))

        async def on_message(message: IncomingMessage) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                conn.changed.set()
            elif isinstance(message, Exception):
                logger.debug("upstream %r transport error: %r", self.key, message)
            elif message.method in FOLLOWED_NOTIFICATIONS:
                params = message.model_dump(by_alias=True, mode="json", exclude_none=True)
                await self._notified(message.method, params.get("params") or {})

        relay = self._inflight
        client = Client(
            open_transport(self.config, on_eof, conn.stderr, early),
            mode=mode,
            cache=None,  # the gateway keeps its own catalog; stale SDK caches would hide changes
            message_handler=on_message,
            client_info=CLIENT_INFO,
            sampling_callback=relay.sampling,
            elicitation_callback=relay.elicitation,
            list_roots_callback=relay.roots,
            logging_callback=relay.log,
            # 2026-07-28 delivers log messages only to requests that opt in: take them all,
            # each client's own level filters them on the way out (server.relay).
            log_level="debug",
        )
        try:
            await client.__aenter__()
        except Exception as exc:
            leaf = root_cause(exc)
            if (
                mode == "auto"
                and isinstance(leaf, MCPError)
                and leaf.code == types.CONNECTION_CLOSED
            ):
                raise HandshakeClosed from exc
            raise
        try:
            conn.client = client
            self.protocol_version = client.protocol_version
            info = client.server_info
            self.server_info = info.model_dump(mode="json", exclude_none=True) if info else None
            if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
                self._mode = "legacy"  # remember the era: later reconnects skip the probe
            caps = client.server_capabilities
            self._capabilities = caps.model_dump(by_alias=True, mode="json", exclude_none=True)
            tools_cap = caps.tools
            advertises = bool(tools_cap is not None and tools_cap.list_changed)
            streams = advertises or announces_more(caps)
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._watch_changes, conn)
                if streams and client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                    tg.start_soon(self._listen, conn, client)
                elif advertises:
                    conn.list_changed = "notification"
                conn.ready.set()
                await conn.stopped.wait()
                tg.cancel_scope.cancel()
        finally:
            conn.client = None
            # Not shielded: the SDK's stdio transport shields (and bounds) its own shutdown.
            await client.__aexit__(None, None, None)

    async def _watch_changes(self, conn: _Connection) -> None:
        while True:
            await conn.changed.wait()
            conn.changed = anyio.Event()  # coalesce a burst of notifications into one callback
            await self._tools_changed()

    async def _listen(self, conn: _Connection, client: Client) -> None:
        """The 2026-07-28 listen stream (upstream.listening) for this connection."""

        def subscribed() -> None:
            conn.list_changed = "subscription"

        def refetch() -> None:
            conn.changed.set()  # the event of the moment: _watch_changes replaces it

        await listen(client, self._watch, self.key, subscribed=subscribed, refetch=refetch)

    # -- requests ------------------------------------------------------------------------

    def _live(self) -> tuple[_Connection, Client]:
        conn = self._conn
        if conn is None or conn.client is None or conn.stopped.is_set() or conn.error is not None:
            if conn is not None and conn.error is not None:
                raise UpstreamError(self.key, "unavailable", f"not connected: {conn.error.reason}")
            raise UpstreamError(self.key, "unavailable", f"not connected ({self.state})")
        return conn, conn.client

    async def _request(
        self,
        method: str,
        params: Mapping[str, Any],
        timeout: float,
        what: str,
        relay: Relay | None = None,
    ) -> dict[str, Any]:
        conn, client = self._live()
        if conn.stderr is not None:
            conn.stderr.trim()
        progress = relay.progress if relay is not None and relay.wants_progress else None

        async def send(extra: dict[str, Any]) -> dict[str, Any]:
            return await _sdk.raw_request(client.session, method, {**params, **extra}, progress)

        try:
            with anyio.fail_after(timeout), self._inflight.track(relay):
                return await _sdk.resolve_input_required(client.session, await send({}), send)
        except TimeoutError:
            raise UpstreamError(
                self.key, "timeout", f"{what}: no answer within {timeout:g}s (request cancelled)"
            ) from None
        except MCPError as exc:
            if exc.code == types.CONNECTION_CLOSED or conn.error is not None:
                await anyio.sleep(0)  # let the EOF watcher record the cause first
                if conn.error is None:
                    detail = f"server connection lost ({exc.message})"
                    conn.fail(self._error("unavailable", detail, conn))
                if conn.error is None:  # closed on purpose (the gateway stops or reconnects)
                    raise UpstreamError(
                        self.key, "unavailable", f"{what}: the connection was closed meanwhile"
                    ) from exc
                raise UpstreamError(
                    self.key, "unavailable", f"{what}: {conn.error.reason}"
                ) from exc
            if exc.code == types.REQUEST_TIMEOUT:
                raise UpstreamError(self.key, "timeout", f"{what}: {exc.message}") from exc
            if exc.code == OVERSIZED_CODE:  # made up by our transport; the server is fine
                raise UpstreamError(self.key, "too_large", f"{what}: {exc.message}") from exc
            if exc.code == MALFORMED_CODE:  # made up by our transport too
                raise UpstreamError(self.key, "protocol", f"{what}: {exc.message}") from exc
            raise UpstreamError(
                self.key, "call_failed", f"{what}: server error {exc.code}: {exc.message}"
            ) from exc
        except (httpx2.HTTPError, OSError, anyio.BrokenResourceError) as exc:
            # The HTTP transports surface a dead server here: mark it so refresh reconnects.
            conn.fail(self._error("unavailable", f"transport failed: {describe(exc)}", conn))
            raise UpstreamError(self.key, "unavailable", f"{what}: {describe(exc)}") from exc

    async def list_tools(self) -> list[dict[str, Any]]:
        """All tools, following nextCursor, each exactly as sent (malformed ones included).

        Entries that are not JSON objects cannot be handed over as dicts; they are skipped and
        logged. Use `wire.tool_problem` to decide which tools to expose.
        """
        tools = await self.list_all("tools/list", "tools")
        conn = self._conn
        # Only 2026-07-28 sessions use what a listing teaches them (x-mcp-header -> Mcp-Param-*
        # headers); handshake-era ones would only parse every tool with pydantic for nothing
        # (~0.3 s at 10,000 tools).
        if (
            conn is not None
            and conn.client is not None
            and self.protocol_version in MODERN_PROTOCOL_VERSIONS
        ):
            _sdk.absorb_tools(conn.client.session, tools, complete=True)
        return tools

    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        relay: Relay | None = None,
    ) -> dict[str, Any]:
        # The caller builds params afresh (never a client's _meta: the session adds its own).
        if method in SUBSCRIBING and self.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return self._subscribe(method, params or {})
        limit = timeout if timeout is not None else self.call_timeout
        raw = await self._request(method, dict(params or {}), limit, method, relay)
        return plain_result(raw)

    def _subscribe(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """resources/(un)subscribe on a 2026-07-28 connection: a change of the listen filter."""
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise UpstreamError(self.key, "protocol", f"{method} needs a uri")
        self._watch.update(method, uri)
        return {}

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        relay: Relay | None = None,
    ) -> dict[str, Any]:
        # Fresh params: only name and arguments travel upstream, never a caller's _meta.
        params: dict[str, Any] = {"name": name, "arguments": dict(arguments or {})}
        what = f"tools/call {name!r}"
        limit = timeout if timeout is not None else self.call_timeout
        try:
            raw = await self._request("tools/call", params, limit, what, relay)
        except UpstreamError as exc:
            cause = exc.__cause__
            if not (isinstance(cause, MCPError) and cause.code == types.HEADER_MISMATCH):
                raise
            # 2026-07-28: the server wants headers from a fresh listing; relist and resend once.
            await self.list_tools()
            raw = await self._request("tools/call", params, limit, what, relay)
        if raw.get("resultType") not in (None, "complete"):
            raise UpstreamError(
                self.key,
                "call_failed",
                f"{what}: server answered with result type {raw.get('resultType')!r}, "
                "which the gateway does not handle",
            )
        shaped = call_result(raw)
        if isinstance(shaped, str):
            raise UpstreamError(self.key, "protocol", f"{what}: {shaped}")
        return shaped

    # -- errors --------------------------------------------------------------------------

    def _error(self, kind: ErrorKind, reason: str, conn: _Connection | None) -> UpstreamError:
        tail = conn.stderr.tail() if conn is not None and conn.stderr is not None else ""
        if tail:
            reason = f"{reason}; stderr: {tail}"
        return UpstreamError(self.key, kind, reason)


def _on_asyncio() -> bool:
    """adopted_stdio drives pipes with asyncio; under another anyio backend the SDK spawns."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


__all__ = ["MAX_TOOL_PAGES", "McpUpstream"]
