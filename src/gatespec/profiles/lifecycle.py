"""What every profile's runtime does over its upstreams, written once: start, refresh,
keep reconnecting, follow other replicas, reconfigure, close (UpstreamLifecycle), and the
protocol the CLI and the registry drive (ServedRuntime).

A runtime says what follows each event through its hooks: the catalog runtime rebuilds its
catalog (gatespec.runtime), the aggregate registry announces the lists that changed
(profiles.aggregate.runtime)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, Protocol, runtime_checkable

from gatespec.config import GatewayConfig
from gatespec.runtime_contract import CatalogListing
from gatespec.state import StateBackend
from gatespec.upstream import (
    ProgressCallback,
    Reconfigured,
    UpstreamPool,
    UpstreamStatus,
    keep_connected,
)
from gatespec_surface.errors import GatewayError

__all__ = ["CompactListing", "ServedRuntime", "UpstreamLifecycle"]


class UpstreamLifecycle(ABC):
    """The lifecycle of a runtime's upstream pool and state backend."""

    pool: UpstreamPool
    state: StateBackend  # shared with the other replicas, or this process's memory
    refresh_interval: float  # the cap of a failed upstream's reconnect backoff (0: never)
    # AM-SERVE-FIRST-READY: start may return once one upstream is ready, the others joining
    # as they connect (a rule of the catalog profiles).
    serves_first_ready: ClassVar[bool] = True

    # ------------------------------------------------------------ hooks

    @abstractmethod
    async def _started(self) -> None:
        """The upstreams have started (or, first_ready, the first of them)."""

    @abstractmethod
    async def _changed(self) -> None:
        """Upstreams came, went or re-listed: what the runtime serves may have changed."""

    @abstractmethod
    async def _tools_changed(self, key: str) -> None:
        """Upstream `key` announced that its tools changed."""

    @abstractmethod
    async def _peer_event(self, event: str) -> None:
        """Another replica published `event` (or "resync": events may have been missed)."""

    @abstractmethod
    async def _reconfigured(self, config: GatewayConfig, changed: Reconfigured) -> None:
        """The pool serves `config`'s servers now (`changed` says which changed)."""

    def _admit(self, config: GatewayConfig) -> None:
        """Refuse a config before the pool is touched (raise); every config by default."""
        return None

    async def _close_upstreams(self) -> None:
        await self.pool.aclose()

    # ------------------------------------------------------------ the lifecycle

    async def start(
        self, progress: ProgressCallback | None = None, *, first_ready: bool = False
    ) -> list[UpstreamStatus]:
        """Connect every upstream (failures are isolated and reported); with `first_ready`
        (where the profile serves first-ready), return once one upstream is ready."""
        self.pool.on_tools_changed = self._upstream_tools_changed
        first_ready = first_ready and self.serves_first_ready
        statuses = await self.pool.start(
            progress=progress,
            first_ready=first_ready,
            on_settled=self._settled if first_ready else None,
        )
        await self._started()
        return statuses

    async def refresh(self, progress: ProgressCallback | None = None) -> list[UpstreamStatus]:
        """Reconnect failed upstreams, re-list every one."""
        statuses = await self.pool.refresh(progress=progress)
        await self._changed()
        return statuses

    async def keep_upstreams(self) -> None:
        """While serving: retry each upstream that failed to start or died since, on its own
        (gatespec.upstream.revive). Returns at once when refresh_interval is 0."""
        await keep_connected(self.pool, self.refresh_interval, self._settled)

    async def follow_peers(self) -> None:
        """While serving: hear the events another replica publishes (gatespec.state). Returns
        at once without a shared backend."""
        await self.state.follow(self._peer_event)

    async def reconfigure(self, config: GatewayConfig) -> Reconfigured:
        """Serve the servers of a changed config (AM-REGISTRY-RELOAD): connect added ones,
        close removed ones, replace changed ones."""
        self._admit(config)
        changed = await self.pool.reconfigure(config.servers)
        await self._reconfigured(config, changed)
        return changed

    async def aclose(self) -> None:
        try:
            await self._close_upstreams()
        finally:
            await self.state.aclose()

    async def _settled(self, key: str) -> None:
        """An upstream connected (or failed) in the background."""
        try:
            await self._changed()
        except GatewayError:
            pass  # the runtime logged it; what it served before stays

    async def _upstream_tools_changed(self, key: str) -> None:
        await self._tools_changed(key)
        # Other replicas may not hear from this upstream themselves (gatespec.state.base).
        await self.state.publish("tools_changed")


class ServedRuntime(Protocol):
    """A profile's runtime as the command line serves it (gatespec.runtime.ProxyRuntime for
    the catalog profiles, profiles.aggregate.AggregateRuntime for the aggregate one)."""

    profile: str  # the exposure profile served (profiles.yaml), its registry row's name
    pool: UpstreamPool

    async def start(
        self, progress: ProgressCallback | None = None, *, first_ready: bool = False
    ) -> list[UpstreamStatus]: ...

    async def keep_upstreams(self) -> None: ...

    async def aclose(self) -> None: ...

    def add_catalog_listener(self, callback: Callable[[], Awaitable[None]]) -> None: ...

    def catalog_listing(self) -> CatalogListing | Awaitable[CatalogListing]: ...


@runtime_checkable
class CompactListing(Protocol):
    """A runtime that offers seed 001's listTools(compact=true) (`gatespec catalog --compact`)."""

    async def compact_listing(self) -> list[dict[str, Any]]: ...
