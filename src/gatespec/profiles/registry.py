"""The registry of exposure profiles: one row per profile the spec defines, keyed by the
generated names (gatespec_surface.PROFILE_NAMES), saying how the profile is served.

A row names its runtime factory, its MCP server builder, whether it ranks queries (the CLI
reports the ranker's state) and whether it offers seed 001's compact tool list. What a
profile lists and which meta-tools it has is the spec's (gatespec_surface.descriptors.PROFILES).
This is the one place that picks behaviour by profile name: anywhere else asks the row.

Importable before the MCP SDK (the CLI checks arguments with it): factories and builders
import their modules when called.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar

from gatespec_surface import PROFILE_NAMES

if TYPE_CHECKING:
    from gatespec.access import Identity
    from gatespec.config import GatewayConfig
    from gatespec.observe.source import StatusSource
    from gatespec.profiles.aggregate.runtime import AggregateRuntime
    from gatespec.profiles.lifecycle import ServedRuntime
    from gatespec.runtime import ProxyRuntime
    from gatespec.server.catalog_server import GatewayServer

__all__ = ["PROFILES", "SERVED", "Profile", "UnknownProfile", "build_server", "profile_named"]

R = TypeVar("R", bound="ServedRuntime")


class UnknownProfile(ValueError):
    """A profile name the registry has no row for."""


@dataclass(frozen=True)
class ServerOptions:
    """A server's name, and who calls when the transport says nothing (see
    gatespec.server.build_server): the keywords every profile's builder takes."""

    name: str
    fallback_session: str
    fallback_identity: Identity

    def keywords(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass(frozen=True)
class Profile(Generic[R]):
    """How one profile is served."""

    name: str
    runtime: Callable[[GatewayConfig, str], R]  # (config, profile name) -> an unstarted runtime
    server: Callable[[R, ServerOptions], GatewayServer]  # its MCP server over that runtime
    status: Callable[[R], StatusSource]  # what the status page reads of that runtime
    ranks: bool  # it ranks queries over the catalog (browse, search)
    compact_listing: bool = False  # it offers seed 001's listTools(compact=true)


# -- the catalog profiles (gateway, transparent, search): one ProxyRuntime each


def _catalog_runtime(config: GatewayConfig, profile: str) -> ProxyRuntime:
    from gatespec.runtime import ProxyRuntime

    return ProxyRuntime.from_config(config, profile=profile)


def _catalog_server(runtime: ProxyRuntime, options: ServerOptions) -> GatewayServer:
    from gatespec.server.catalog_server import build_server

    return build_server(runtime, **options.keywords())


def _catalog_status(runtime: ProxyRuntime) -> StatusSource:
    from gatespec.observe.source import CatalogSource

    return CatalogSource(runtime)


# -- the aggregate profile (profiles/aggregate)


def _aggregate_runtime(config: GatewayConfig, profile: str) -> AggregateRuntime:
    from gatespec.profiles.aggregate.runtime import AggregateRuntime

    return AggregateRuntime.from_config(config)


def _aggregate_server(runtime: AggregateRuntime, options: ServerOptions) -> GatewayServer:
    from gatespec.profiles.aggregate.server import build_aggregate_server

    return build_aggregate_server(runtime, **options.keywords())


def _aggregate_status(runtime: AggregateRuntime) -> StatusSource:
    from gatespec.observe.source import AggregateSource

    return AggregateSource(runtime)


_ROWS: Final = (  # each row typed on its own: its runtime must be a ServedRuntime
    Profile("gateway", _catalog_runtime, _catalog_server, _catalog_status, ranks=True),
    Profile("transparent", _catalog_runtime, _catalog_server, _catalog_status, ranks=True),
    Profile("search", _catalog_runtime, _catalog_server, _catalog_status, ranks=True),
    Profile(
        "aggregate",
        _aggregate_runtime,
        _aggregate_server,
        _aggregate_status,
        ranks=False,
        compact_listing=True,
    ),
)

PROFILES: Final[Mapping[str, Profile[Any]]] = {row.name: row for row in _ROWS}
# The profiles the runtime serves, in the spec's order.
SERVED: Final[tuple[str, ...]] = tuple(name for name in PROFILE_NAMES if name in PROFILES)
# A spec profile without a row (or a row the spec does not define) fails at import, so a new
# profile cannot be half-added.
if set(PROFILES) != set(PROFILE_NAMES):
    raise RuntimeError(
        f"the profile registry {sorted(PROFILES)} does not match the spec's {sorted(PROFILE_NAMES)}"
    )


def profile_named(name: str) -> Profile[Any]:
    """The row of profile `name`; UnknownProfile when there is none."""
    row = PROFILES.get(name)
    if row is None:
        raise UnknownProfile(f"profile {name!r} is not served (served: {', '.join(SERVED)})")
    return row


def compact_lister() -> Profile[Any]:
    """The profile whose runtime offers the compact tool list (`gatespec catalog --compact`)."""
    return next(row for row in _ROWS if row.compact_listing)


def build_server(
    runtime: ServedRuntime,
    *,
    name: str = "gatespec",
    fallback_session: str = "local",
    fallback_identity: Identity | None = None,
) -> GatewayServer:
    """The MCP server of `runtime.profile` over `runtime` (fallback_identity: the local
    identity unless given)."""
    from gatespec.access import LOCAL

    identity = LOCAL if fallback_identity is None else fallback_identity
    options = ServerOptions(name, fallback_session, identity)
    return profile_named(runtime.profile).server(runtime, options)
