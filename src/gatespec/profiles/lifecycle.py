"""What every profile's runtime does over its upstreams: the protocol the CLI and the
registry drive (ServedRuntime)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol, runtime_checkable

from gatespec.core import CatalogListing
from gatespec.upstream import ProgressCallback, UpstreamPool, UpstreamStatus

__all__ = ["CompactListing", "ServedRuntime"]


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
