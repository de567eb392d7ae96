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
import errno
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
from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from gatespec import chain, spawn
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
from gatespec.upstream.oversized import MALFORMED_CODE, OVERSIZED_CODE
from gatespec.upstream.relay import InFlight
from gatespec.upstream.transports import StderrTail, open_transport
from gatespec.upstream.wire import call_result, plain_result

if TYPE_CHECKING:
    from gatespec.runtime_contract import Relay

logger = logging.getLogger(__name__)

MAX_TOOL_PAGES: Final = MAX_PAGES
CLIENT_INFO: Final = types.Implementation(name="gatespec", version="0.1.0")
_LISTEN_BACKOFF_MAX: Final = 30.0


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
        # Resource URIs the gateway subscribed to; on a 2026-07-28 connection they ride the
        # subscriptions/listen filter, which is re-listened whenever the set changes.
        self._watched: set[str] = set()
        self._watch_changed = anyio.Event()

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
                except _HandshakeClosed:
                    if _refused_as_loop(conn):
                        raise
                    # Auto mode's probe may have killed a handshake-era server: retry plainly.
                    logger.info("upstream %r closed during the probe; retrying legacy", self.key)
                    await self._serve(conn, "legacy")
        except Exception as exc:  # every failure is recorded; nothing escapes into the group
            if conn.error is None and not conn.closing:
                kind, reason = self._classify(exc, handshake=not conn.ready.is_set())
                if _refused_as_loop(conn):
                    kind, reason = "loop", _LOOP_REASON
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
            leaf = _root_cause(exc)
            if (
                mode == "auto"
                and isinstance(leaf, MCPError)
                and leaf.code == types.CONNECTION_CLOSED
            ):
                raise _HandshakeClosed from exc
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
            streams = advertises or _announces_more(caps)
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
        """Hold a 2026-07-28 subscriptions/listen stream open for list changes and the
        subscribed resources' updates; re-listen when the subscribed set changes."""
        delay = 1.0
        while True:
            try:
                caps = client.server_capabilities
                tools = bool(caps.tools and caps.tools.list_changed)
                changed = self._watch_changed
                async with client.listen(
                    tools_list_changed=tools,
                    prompts_list_changed=bool(caps.prompts and caps.prompts.list_changed),
                    resources_list_changed=bool(caps.resources and caps.resources.list_changed),
                    resource_subscriptions=sorted(self._watched),
                ) as sub:
                    if tools and sub.honored.tools_list_changed:
                        conn.list_changed = "subscription"
                    delay = 1.0
                    if await _events_until(sub, changed, self.key):
                        return  # graceful close by the server: it will not send more
                    continue  # the subscribed set changed: listen again with the new filter
            except ListenNotSupportedError:
                return
            except (SubscriptionLost, MCPError, TimeoutError) as exc:
                logger.debug("upstream %r listen lost: %r", self.key, exc)
            await anyio.sleep(delay)
            delay = min(delay * 2, _LISTEN_BACKOFF_MAX)
            conn.changed.set()  # no replay: refetch after re-listening

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
            conn.fail(self._error("unavailable", f"transport failed: {_describe(exc)}", conn))
            raise UpstreamError(self.key, "unavailable", f"{what}: {_describe(exc)}") from exc

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
        if method in _SUBSCRIBING and self.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return self._watch(method, params or {})
        limit = timeout if timeout is not None else self.call_timeout
        raw = await self._request(method, dict(params or {}), limit, method, relay)
        return plain_result(raw)

    def _watch(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """resources/(un)subscribe on a 2026-07-28 connection: a change of the listen filter."""
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise UpstreamError(self.key, "protocol", f"{method} needs a uri")
        before = set(self._watched)
        if method == "resources/subscribe":
            self._watched.add(uri)
        else:
            self._watched.discard(uri)
        if self._watched != before:
            changed, self._watch_changed = self._watch_changed, anyio.Event()
            changed.set()
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

    def _classify(self, exc: BaseException, handshake: bool) -> tuple[ErrorKind, str]:
        """Turn a connection failure (often an exception group) into a kind and a reason."""
        leaf = _root_cause(exc)
        cfg = self.config
        shown = cfg.written  # never the expanded values (gatespec.secrets)
        target = shown.target()
        start: ErrorKind = "start_failed" if handshake else "unavailable"
        if isinstance(leaf, FileNotFoundError):
            # POSIX spawn reports a bad cwd with the executable as filename: look ourselves.
            if cfg.cwd is not None and not cfg.cwd.is_dir():
                return "start_failed", f"working directory not found: {cfg.cwd}"
            return "start_failed", f"command not found: {shown.command}"
        if isinstance(leaf, PermissionError):
            return "start_failed", f"cannot execute {shown.command}: permission denied"
        if isinstance(leaf, httpx2.HTTPStatusError):
            status = leaf.response.status_code
            return start, f"{shown.url} answered HTTP {status} {leaf.response.reason_phrase}"
        if isinstance(leaf, httpx2.TimeoutException):
            return "timeout", f"{shown.url}: HTTP timeout ({_describe(leaf)})"
        if isinstance(leaf, httpx2.ConnectError):
            return start, f"cannot connect to {shown.url}: {_describe(leaf)} (connection refused?)"
        if isinstance(leaf, httpx2.HTTPError):
            return start, f"{shown.url}: {_describe(leaf)}"
        if isinstance(leaf, MCPError):
            if leaf.code == types.CONNECTION_CLOSED:
                what = "server exited" if cfg.kind.local_process else "connection closed"
                phase = "during the MCP handshake" if handshake else ""
                return start, f"{what} {phase}".strip() + f" ({target})"
            if leaf.code == types.REQUEST_TIMEOUT:
                return "timeout", f"handshake timed out: {leaf.message}"
            return start, f"handshake rejected: error {leaf.code}: {leaf.message}"
        if isinstance(leaf, ValidationError):
            return "protocol", f"invalid handshake result: {_first_line(leaf)}"
        if isinstance(leaf, OSError):
            detail = errno.errorcode.get(leaf.errno or 0, "")
            return (
                "start_failed",
                f"cannot start {target}: {leaf.strerror or leaf} {detail}".strip(),
            )
        if isinstance(leaf, RuntimeError) and "protocol version" in str(leaf):
            return "protocol", str(leaf)
        return start, f"{type(leaf).__name__}: {leaf}"


_LOOP_REASON: Final = (
    "refused: this upstream is gatespec serving a config that a gatespec above it already "
    "serves (it would start itself again); remove it from the config"
)


def _refused_as_loop(conn: _Connection) -> bool:
    """Whether the connection's process is a gatespec that refused to join a loop."""
    return conn.process is not None and conn.process.poll() == chain.LOOP_EXIT_STATUS


_SUBSCRIBING: Final = ("resources/subscribe", "resources/unsubscribe")


def _announces_more(caps: types.ServerCapabilities) -> bool:
    """The server announces prompt or resource list changes, or resource updates."""
    prompts, resources = caps.prompts, caps.resources
    return bool(
        (prompts and prompts.list_changed)
        or (resources and (resources.list_changed or resources.subscribe))
    )


async def _events_until(sub: Any, changed: anyio.Event, key: str) -> bool:
    """Drain a listen stream's events (on_message routes them) until the server closes it
    (True) or `changed` is set (False)."""
    closed = False
    async with anyio.create_task_group() as tg:

        async def drain() -> None:
            nonlocal closed
            async for event in sub:
                logger.debug("upstream %r event %r", key, event)
            closed = True
            tg.cancel_scope.cancel()

        tg.start_soon(drain)
        await changed.wait()
        tg.cancel_scope.cancel()
    return closed


class _HandshakeClosed(Exception):
    """The connection closed during an auto-mode handshake (maybe killed by the probe)."""


def _on_asyncio() -> bool:
    """adopted_stdio drives pipes with asyncio; under another anyio backend the SDK spawns."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _root_cause(exc: BaseException) -> BaseException:
    """The most telling leaf of a (possibly nested) exception group, skipping cancellations."""
    cancelled = anyio.get_cancelled_exc_class()
    while isinstance(exc, BaseExceptionGroup):
        leaves = [e for e in exc.exceptions if not isinstance(e, cancelled)]
        exc = leaves[0] if leaves else exc.exceptions[0]
    if isinstance(exc, _HandshakeClosed) and exc.__cause__ is not None:
        return exc.__cause__
    return exc


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _first_line(exc: BaseException) -> str:
    lines = str(exc).splitlines()
    return " ".join(lines[:3]) if lines else type(exc).__name__


__all__ = ["MAX_TOOL_PAGES", "McpUpstream"]
