"""What `serve` and `catalog` share: this process as a link of the chain of configs, the
runtime built while the stdio upstreams start, its upstreams started with progress shown, and
no upstream left running however the command ends."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from gatespec import chain, spawn
from gatespec.cli.output import say
from gatespec.cli.progress import Progress
from gatespec.config import DEFAULT_CONNECT_CONCURRENCY, GatewayConfig
from gatespec.profiles import registry
from gatespec.rank_cli import ranking_status

# The server layer, the upstream layer and the MCP SDK are imported only once the stdio
# upstreams have been started (gatespec.spawn), so their start-up overlaps the SDK's import.
if TYPE_CHECKING:
    from gatespec.profiles.lifecycle import ServedRuntime
    from gatespec.upstream import UpstreamStatus

    RuntimeFactory = Callable[[GatewayConfig, str], ServedRuntime]
    """(config, profile) -> an unstarted runtime; tests inject fakes through main(runtime_factory=)."""


def link(config: str | None) -> contextlib.AbstractContextManager[None]:
    """This process as a link of the chain of gatespec configs (gatespec.chain)."""
    return chain.entered(Path(config)) if config else contextlib.nullcontext()


@contextlib.contextmanager
def upstreams_stopped() -> Iterator[None]:
    """However the command ends, no stdio upstream it started is left running."""
    try:
        yield
    finally:
        spawn.discard_early()


def runtime(factory: RuntimeFactory | None, config: GatewayConfig, profile: str) -> ServedRuntime:
    """Start the stdio upstreams, then build the runtime (importing the SDK meanwhile)."""
    spawn.spawn_early(config.servers.values(), DEFAULT_CONNECT_CONCURRENCY)
    return (factory or registry.profile_named(profile).runtime)(config, profile)


def stubs(config: GatewayConfig) -> frozenset[str]:
    """The upstreams that are stubs (a captured tool list; calls echoed), not servers."""
    return frozenset(key for key, s in config.servers.items() if s.transport == "stub")


async def start(
    runtime: ServedRuntime,
    total: int,
    stubs: frozenset[str] = frozenset(),
    *,
    first_ready: bool = False,
) -> list[UpstreamStatus]:
    """Start the upstreams: all of them (catalog), or, to serve, until the first is ready
    (AM-SERVE-FIRST-READY: the others join as they connect)."""
    if total == 0:
        say("no upstream servers configured (the catalog is empty)")
    progress = Progress(runtime.pool, total, stubs=stubs)
    statuses = await runtime.start(progress=progress, first_ready=first_ready)
    if total:
        progress.finish(statuses)
    if registry.profile_named(runtime.profile).ranks:
        say(f"ranking: {ranking_status()}")  # never silent about running without the model
    return statuses
