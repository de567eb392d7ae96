"""Many upstreams: concurrent start with per-server isolation, status, refresh and calls.

One failing, crashing or hanging server never takes the others down: each connects under its
own timeout, its failure is recorded with a reason, and `refresh()` or `revive()` retries it
later. An upstream counts as connected once its handshake AND its first complete tool listing
succeed. The tools an upstream last listed stay while it is down, so a call to one is answered
"unavailable", not "no such tool" (AM-UNAVAILABLE-NOT-MISSING). `start(first_ready=True)`
returns as soon as one upstream is connected and settles the others in the background
(AM-SERVE-FIRST-READY). `reconfigure()` adds, removes and replaces servers while serving
(AM-REGISTRY-RELOAD); a call in flight to a server that goes away ends with an "unavailable"
UpstreamError saying so.

Task ownership: connections live in a task group hosted by its own task (see `_host`), opened
by `__aenter__` or `start()` and closed by `aclose()`; on asyncio these may be called from any
task and at any cancel-scope depth. `async with UpstreamPool(...) as pool:` is the tidy form.
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Self

import anyio
from anyio.abc import TaskGroup
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from gatespec.config import (
    DEFAULT_CALL_TIMEOUT,
    DEFAULT_CONNECT_CONCURRENCY,
    DEFAULT_CONNECT_TIMEOUT,
    GatewayConfig,
    ServerConfig,
)
from gatespec.observe.tracing import upstream_span
from gatespec.upstream._host import TaskHost
from gatespec.upstream.base import NotificationCallback, ToolsChangedCallback, Upstream
from gatespec.upstream.errors import UpstreamError
from gatespec.upstream.factory import create_upstream

if TYPE_CHECKING:
    from gatespec.metrics import Metrics
    from gatespec.runtime_contract import Relay

logger = logging.getLogger(__name__)

_RETIRE_POLL = 0.05  # seconds between looks at a replaced connection's calls still in flight

StatusState = Literal["pending", "connected", "failed"]
ProgressCallback = Callable[[str, str, int, int], Awaitable[None] | None]
"""progress(key, state, done, total): called as each upstream settles during start/refresh."""
SettledCallback = Callable[[str], Awaitable[None] | None]
"""on_settled(key): an upstream settled in the background (connected or failed)."""


class UpstreamStatus(NamedTuple):
    key: str
    state: StatusState  # pending: not started yet (or connecting)
    reason: str | None  # why it failed; None when connected or pending


@dataclass(frozen=True)
class Reconfigured:
    """What `reconfigure` changed, by server key."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    replaced: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.replaced)


class UpstreamPool:
    """All configured upstreams of a gateway."""

    def __init__(
        self,
        configs: Mapping[str, ServerConfig] | Iterable[ServerConfig],
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        *,
        max_concurrency: int = DEFAULT_CONNECT_CONCURRENCY,
        on_tools_changed: ToolsChangedCallback | None = None,
        upstream_factory: Callable[..., Upstream] = create_upstream,
    ) -> None:
        items = list(configs.values()) if isinstance(configs, Mapping) else list(configs)
        self.connect_timeout = connect_timeout
        self.call_timeout = call_timeout
        self.on_tools_changed = on_tools_changed
        # (key, method, params) of the notifications a registry follows (base.FOLLOWED_...)
        self.on_notification: NotificationCallback | None = None
        self._factory = upstream_factory
        self._upstreams: dict[str, Upstream] = {}
        for config in items:
            if config.key in self._upstreams:
                raise ValueError(f"duplicate upstream key {config.key!r}")
            self._upstreams[config.key] = self._create(config)
        self._tools: dict[str, list[dict[str, Any]]] = {}
        self._failures: dict[str, UpstreamError] = {}
        self._list_locks = {key: anyio.Lock() for key in self._upstreams}
        # Cancel scopes of the calls in flight, per key: a server that goes away ends them.
        self._calls: dict[str, set[anyio.CancelScope]] = {}
        self.metrics: Metrics | None = None  # tool calls timed per upstream (gatespec.metrics)
        self._cycle_lock = anyio.Lock()  # one start/refresh at a time
        self._settling: set[str] = set()  # keys being settled in the background
        self._limiter = anyio.CapacityLimiter(max(1, max_concurrency))
        self._host = TaskHost()  # the task group every upstream connection runs in

    def _create(self, config: ServerConfig) -> Upstream:
        upstream = self._factory(
            config,
            connect_timeout=self.connect_timeout,
            call_timeout=self.call_timeout,
            on_tools_changed=self._upstream_changed,
        )
        upstream.on_notification = self._notified
        return upstream

    async def _notified(self, key: str, method: str, params: dict[str, Any]) -> None:
        if self.on_notification is not None and self._upstreams.get(key) is not None:
            await _maybe_await(self.on_notification(key, method, params))

    @classmethod
    def from_config(cls, config: GatewayConfig, **kwargs: Any) -> UpstreamPool:
        """A pool for a loaded config, with its gateway timeouts."""
        return cls(
            config.servers,
            connect_timeout=config.options.connect_timeout,
            call_timeout=config.options.call_timeout,
            **kwargs,
        )

    # -- lifecycle -----------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        await self._open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _open(self) -> TaskGroup:
        return await self._host.open()

    async def start(
        self,
        progress: ProgressCallback | None = None,
        *,
        first_ready: bool = False,
        on_settled: SettledCallback | None = None,
    ) -> list[UpstreamStatus]:
        """Connect every upstream concurrently; returns when each is connected or failed, or,
        with `first_ready`, as soon as one is connected (or all failed): the others go on in
        the background, each passed to `on_settled` when it settles."""
        await self._open()
        if not first_ready:
            async with self._cycle_lock:
                await self._settle_all(list(self._upstreams), progress, relist_only=set())
            return self.statuses()
        keys = [key for key in self._upstreams if key not in self._settling]
        ready = anyio.Event()
        done = 0

        async def settled(key: str) -> None:
            nonlocal done
            done += 1
            if progress is not None:
                await _maybe_await(progress(key, self.status(key).state, done, len(keys)))
            if self.status(key).state == "connected" or done == len(keys):
                ready.set()
            if on_settled is not None:
                await _maybe_await(on_settled(key))

        for key in keys:
            self._settle_soon(key, settled)
        if keys:
            await ready.wait()
        return self.statuses()

    def revive(self, key: str, on_settled: SettledCallback | None = None) -> bool:
        """Start reconnecting an upstream that is down, in the background; False when it is
        connected, already being settled, refused as a loop (gatespec.chain), or the pool is
        not open."""
        if self._upstreams[key].connected or key in self._settling:
            return False
        error = self.error(key)
        if error is not None and error.kind == "loop":
            return False  # gatespec on a config up this chain: it would refuse again
        return self._settle_soon(key, on_settled)

    def _settle_soon(self, key: str, after: SettledCallback | None) -> bool:
        group = self._host.task_group
        if group is None:
            return False
        self._settling.add(key)

        async def settle() -> None:
            try:
                async with self._limiter:
                    await self._settle(key, relist_only=False)
            finally:
                self._settling.discard(key)
            if after is not None:
                try:
                    await _maybe_await(after(key))
                except Exception:
                    logger.exception("after settling %r", key)

        group.start_soon(settle, name=f"settle {key}")
        return True

    async def refresh(self, progress: ProgressCallback | None = None) -> list[UpstreamStatus]:
        """Reconnect failed or dead upstreams and re-list the tools of every upstream."""
        await self._open()
        async with self._cycle_lock:
            live = {key for key, up in self._upstreams.items() if up.connected}
            await self._settle_all(list(self._upstreams), progress, relist_only=live)
        return self.statuses()

    async def aclose(self) -> None:
        """Close every upstream (concurrently) and the pool's task group."""
        async with anyio.create_task_group() as tg:
            for upstream in self._upstreams.values():
                tg.start_soon(self._close_quietly, upstream)
        self._tools.clear()
        await self._host.close()

    @staticmethod
    async def _close_quietly(upstream: Upstream) -> None:
        try:
            await upstream.close()
        except Exception:
            logger.exception("closing upstream %r failed", upstream.key)

    # -- connecting ----------------------------------------------------------------------

    async def _settle_all(
        self, keys: list[str], progress: ProgressCallback | None, relist_only: set[str]
    ) -> None:
        keys = [key for key in keys if key not in self._settling]  # settling in the background
        total, done = len(keys), 0

        async def settle(key: str) -> None:
            nonlocal done
            self._settling.add(key)  # revive() leaves it alone meanwhile
            try:
                async with self._limiter:
                    await self._settle(key, relist_only=key in relist_only)
            finally:
                self._settling.discard(key)
            done += 1
            if progress is not None:
                await _maybe_await(progress(key, self.status(key).state, done, total))

        async with anyio.create_task_group() as tg:
            for key in keys:
                tg.start_soon(settle, key, name=f"settle {key}")

    async def _settle(self, key: str, relist_only: bool) -> None:
        """Bring one upstream to connected-and-listed, or record why not."""
        upstream = self._upstreams[key]
        if relist_only:
            try:
                await self._relist(key)
                self._failures.pop(key, None)
                return
            except UpstreamError as exc:
                if upstream.connected:  # alive but the listing failed: that is the failure
                    await self._fail(key, upstream, exc)
                    return
                # it died under us: fall through to a reconnect (its last listing stays)
        try:
            await upstream.connect(await self._open())
            await self._relist(key)
        except UpstreamError as exc:
            await self._fail(key, upstream, exc)
            return
        except Exception as exc:  # a bug in one upstream must not abort the others
            logger.exception("upstream %r failed unexpectedly", key)
            await self._fail(key, upstream, UpstreamError(key, "start_failed", repr(exc)))
            return
        self._failures.pop(key, None)

    async def _fail(self, key: str, upstream: Upstream, error: UpstreamError) -> None:
        self._failures[key] = error  # its last listing stays (AM-UNAVAILABLE-NOT-MISSING)
        logger.warning("%s", error)
        if upstream.connected:  # connected but unusable (listing failed): free it
            await self._close_quietly(upstream)

    async def _relist(self, key: str) -> None:
        lock = self._list_locks.get(key)
        if lock is None:  # removed by a reload while a background settle was connecting it
            raise UpstreamError(
                key, "unavailable", f"Server {key} was removed from the configuration"
            )
        async with lock:
            tools = await self._upstreams[key].list_tools()
            self._tools[key] = tools

    async def _upstream_changed(self, key: str) -> None:
        """An upstream announced a tool-list change: re-list it, then tell our listener."""
        upstream = self._upstreams.get(key)
        if upstream is None or not upstream.connected:
            return
        try:
            await self._relist(key)
        except UpstreamError as exc:
            logger.warning("re-listing %r after list_changed failed: %s", key, exc)
            return
        if self.on_tools_changed is not None:
            try:
                await _maybe_await(self.on_tools_changed(key))
            except Exception:
                logger.exception("on_tools_changed callback failed for %r", key)

    # -- queries -------------------------------------------------------------------------

    @property
    def upstreams(self) -> Mapping[str, Upstream]:
        return self._upstreams

    def status(self, key: str) -> UpstreamStatus:
        upstream = self._upstreams[key]
        if upstream.connected and key in self._tools:
            return UpstreamStatus(key, "connected", None)
        if upstream.state == "failed":  # crashed or dropped after connecting
            return UpstreamStatus(key, "failed", upstream.reason)
        if key in self._failures:
            return UpstreamStatus(key, "failed", self._failures[key].reason)
        return UpstreamStatus(key, "pending", None)

    def statuses(self) -> list[UpstreamStatus]:
        """(key, state, reason) for every configured upstream, in config order."""
        return [self.status(key) for key in self._upstreams]

    def error(self, key: str) -> UpstreamError | None:
        """The typed failure behind a failed status (kind + reason)."""
        upstream = self._upstreams[key]
        if upstream.state == "failed" and upstream.error is not None:
            return upstream.error
        if upstream.connected and key in self._tools:
            return None
        return self._failures.get(key)

    def tools(self) -> dict[str, list[dict[str, Any]]]:
        """{key: tool dicts as last listed}, in config order: those of the connected upstreams
        and the last listing of any that is down (its calls are answered "unavailable")."""
        return {key: list(self._tools[key]) for key in self._upstreams if key in self._tools}

    def _live(self, key: str) -> Upstream:
        upstream = self._upstreams.get(key)
        if upstream is None:  # seed 004's wording for both
            raise UpstreamError(key, "unknown_server", f"Unknown server: {key}")
        if not upstream.connected:
            status = self.status(key)
            why = f": {status.reason}" if status.reason else f" ({status.state})"
            raise UpstreamError(key, "unavailable", f"Server {key} unavailable{why}")
        return upstream

    async def _tracked(self, key: str, work: Awaitable[dict[str, Any]]) -> dict[str, Any]:
        """Await `work`, ended with an "unavailable" UpstreamError if `key` goes away."""
        with anyio.CancelScope() as scope:
            calls = self._calls.setdefault(key, set())  # the set of this connection's calls
            calls.add(scope)
            try:
                return await work
            finally:
                calls.discard(scope)
        raise UpstreamError(
            key, "unavailable", f"Server {key} unavailable: removed from the configuration"
        )

    async def call(
        self,
        key: str,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        relay: Relay | None = None,
    ) -> dict[str, Any]:
        """Call a tool on one upstream; UpstreamError on unknown key, dead upstream, timeout,
        transport failure or a JSON-RPC error answer."""
        started = time.perf_counter()
        kind: str | None = "unavailable"
        reason: str | None = None
        try:
            upstream = self._live(key)
            with upstream_span(key, "tools/call", name):  # gatespec.observe.tracing
                result = await self._tracked(
                    key, upstream.call_tool(name, arguments, timeout, relay)
                )
            kind = None
            return result
        except UpstreamError as exc:
            kind, reason = exc.kind, exc.reason
            raise
        finally:
            if self.metrics is not None:
                self.metrics.upstream_call(key, time.perf_counter() - started, kind, reason)

    async def request(
        self,
        key: str,
        method: str,
        params: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        relay: Relay | None = None,
    ) -> dict[str, Any]:
        """Any other MCP request to one upstream (errors as for `call`)."""
        upstream = self._live(key)
        with upstream_span(key, method):
            return await self._tracked(key, upstream.request(method, params, timeout, relay))

    async def list_all(
        self, key: str, method: str, field: str, timeout: float | None = None
    ) -> list[dict[str, Any]]:
        """Every entry of one upstream's paginated list (errors as for `call`)."""
        upstream = self._live(key)
        work = upstream.list_all(method, field, timeout)
        entries: list[dict[str, Any]] = []

        async def listing() -> dict[str, Any]:
            entries.extend(await work)
            return {}

        await self._tracked(key, listing())
        if method == "tools/list":  # every listing is news for the registry
            self._tools[key] = list(entries)
        return entries

    async def set_log_level(self, level: str) -> None:
        """logging/setLevel on every connected handshake-era upstream that offers logging, in
        parallel; a failure is logged (the level is a wish, not a contract). 2026-07-28 has no
        such method: its log level travels with each request."""

        async def one(key: str) -> None:
            try:
                await self.request(key, "logging/setLevel", {"level": level})
            except UpstreamError as exc:
                logger.info("logging/setLevel on %r failed: %s", key, exc)

        async with anyio.create_task_group() as tg:
            for key, upstream in self._upstreams.items():
                modern = getattr(upstream, "protocol_version", None) in MODERN_PROTOCOL_VERSIONS
                if "logging" in self.capabilities(key) and not modern:
                    tg.start_soon(one, key)

    def capabilities(self, key: str) -> dict[str, Any]:
        """What a connected upstream offers (empty when it is not connected)."""
        upstream = self._upstreams.get(key)
        return upstream.capabilities if upstream is not None and upstream.connected else {}

    # -- registry changes ----------------------------------------------------------------

    async def reconfigure(
        self,
        configs: Mapping[str, ServerConfig],
        progress: ProgressCallback | None = None,
    ) -> Reconfigured:
        """Make the pool serve `configs`: connect new keys, close vanished ones, replace those
        whose entry changed (AM-REGISTRY-RELOAD). Calls in flight to a removed server end with
        an "unavailable" UpstreamError. A replaced server's new connection is made while the
        old one serves; calls then go to the new one, and those in flight on the old one
        finish there (within its call timeout) before it closes, so a replacement loses no
        answer. Order follows `configs`."""
        await self._open()
        async with self._cycle_lock:
            old = self._upstreams
            removed = tuple(k for k in old if k not in configs)
            replaced = tuple(k for k in configs if k in old and old[k].config != configs[k])
            added = tuple(k for k in configs if k not in old)
            for key in removed:
                for scope in self._calls.pop(key, set()):
                    scope.cancel()
                self._tools.pop(key, None)
                self._failures.pop(key, None)
            async with anyio.create_task_group() as tg:
                for key in removed:
                    tg.start_soon(self._close_quietly, old[key])
            incoming = {key: self._create(configs[key]) for key in replaced}
            listed = await self._connect_all(incoming)
            fresh = {**old}
            for key in removed:
                del fresh[key]
                self._list_locks.pop(key, None)
            host = await self._open()
            for key in replaced:  # the swap: no await from here to the assignment below
                fresh[key] = incoming[key]
                host.start_soon(self._retire, old[key], self._calls.pop(key, set()))
                outcome = listed[key]
                if isinstance(outcome, UpstreamError):
                    self._failures[key] = outcome  # its last listing stays, answered unavailable
                else:
                    self._tools[key] = outcome
                    self._failures.pop(key, None)
            for key in added:
                fresh[key] = self._create(configs[key])
                self._list_locks.setdefault(key, anyio.Lock())
            self._upstreams = {key: fresh[key] for key in configs}
            await self._settle_all(list(added), progress, relist_only=set())
        return Reconfigured(added, removed, replaced)

    async def _connect_all(
        self, upstreams: Mapping[str, Upstream]
    ) -> dict[str, list[dict[str, Any]] | UpstreamError]:
        """Connect and list each of `upstreams` (not yet serving): its tools, or why not."""
        outcomes: dict[str, list[dict[str, Any]] | UpstreamError] = {}

        async def one(key: str, upstream: Upstream) -> None:
            try:
                await upstream.connect(await self._open())
                outcomes[key] = await upstream.list_tools()
            except UpstreamError as exc:
                outcomes[key] = exc
            except Exception as exc:  # a bug in one upstream must not abort the others
                logger.exception("upstream %r failed unexpectedly", key)
                outcomes[key] = UpstreamError(key, "start_failed", repr(exc))
            if isinstance(outcomes[key], UpstreamError):
                logger.warning("%s", outcomes[key])
                await self._close_quietly(upstream)

        async with anyio.create_task_group() as tg:
            for key, upstream in upstreams.items():
                tg.start_soon(one, key, upstream)
        return outcomes

    async def _retire(self, upstream: Upstream, calls: set[anyio.CancelScope]) -> None:
        """Close a replaced connection once the calls in flight on it have ended (those still
        running after its call timeout end "unavailable")."""
        with anyio.move_on_after(upstream.call_timeout):
            while calls:
                await anyio.sleep(_RETIRE_POLL)
        for scope in list(calls):
            scope.cancel()
        await self._close_quietly(upstream)


async def _maybe_await(value: Awaitable[None] | None) -> None:
    if inspect.isawaitable(value):
        await value
