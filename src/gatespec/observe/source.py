"""What the status page reads of a runtime, through one small interface for every profile.

`StatusSource` is all the page needs: the upstreams' states, and per identity how many tools of
each upstream it may see and which tools were left out of the catalog. `CatalogSource` and
`AggregateSource` adapt the runtime of any profile (its registry row says which) by its public methods only (its pool, its access policy,
its catalog or listing), so the runtimes carry no code for the page.

- Catalog profiles (gateway, transparent, search): the catalog snapshot, `visible_ids` for a
  restricted identity, `excluded()` with the reasons.
- The aggregate profile: the pool's last listings, offered as the aggregate profile offers
  them (aggregate.naming), each tool checked against the policy as a tools/list entry is.

A restricted identity sees only the upstreams it may see a tool of, and no exclusions (an
excluded tool has no id the policy could be checked against, so its name could leak).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from gatespec.access import AccessPolicy, Identity, Subject

if TYPE_CHECKING:
    from gatespec.profiles.aggregate.naming import Naming

__all__ = ["AggregateSource", "CatalogSource", "StatusSource", "ToolCounts", "UpstreamState"]


@dataclass(frozen=True)
class ToolCounts:
    """What one identity may see of the catalog."""

    restricted: bool
    by_upstream: dict[str, int]  # config key -> tools it may see (visible upstreams only)
    excluded: list[tuple[str, str, str]] = field(default_factory=list)  # server, tool, reason


@dataclass(frozen=True)
class UpstreamState:
    name: str  # the config key
    state: str  # connected, failed, reconnecting (failed, being retried) or pending
    error: str | None  # why it is down (the last failure, also while it is retried)


class StatusSource(Protocol):
    profile: str

    def upstreams(self) -> list[UpstreamState]: ...

    def tools(self, identity: Identity) -> ToolCounts: ...


class _Base:
    def __init__(self, runtime: Any) -> None:
        self.runtime = runtime
        self.profile: str = str(getattr(runtime, "profile", "?"))
        # its states and remembered failures (imported here: gatespec.server's transports
        # import this package for their routes)
        from gatespec.server.health import Health

        self._health = Health(runtime)

    @property
    def policy(self) -> AccessPolicy:
        policy = getattr(self.runtime, "policy", None)
        return policy if isinstance(policy, AccessPolicy) else AccessPolicy.open()

    def upstreams(self) -> list[UpstreamState]:
        """Each upstream's state as /readyz words it (server.health: a failed upstream being
        retried is "reconnecting", with its last failure)."""
        _, not_ready = self._health.upstreams()
        down = {row["upstream"]: row for row in not_ready}
        out = []
        for status in self.runtime.pool.statuses():
            row = down.get(status.key)
            if row is None:
                out.append(UpstreamState(status.key, "connected", None))
            else:
                failed = row["state"] in ("failed", "reconnecting")
                out.append(
                    UpstreamState(status.key, row["state"], row["reason"] if failed else None)
                )
        return out


class CatalogSource(_Base):
    """gateway, transparent, search: one catalog snapshot (gatespec.runtime)."""

    def tools(self, identity: Identity) -> ToolCounts:
        catalog = self.runtime.catalog
        restricted = self.policy.restricted(identity)
        visible = self.runtime.visible_ids(identity) if restricted else None
        counts: dict[str, int] = {}
        if not restricted:
            counts = {status.key: 0 for status in self.runtime.pool.statuses()}
        for item in catalog.items():
            if visible is None or item.id in visible:
                server = str(item.metadata.get("server", item.namespace))
                counts[server] = counts.get(server, 0) + 1
        if restricted:
            return ToolCounts(True, counts)
        excluded = [(e.server, e.name, e.reason) for e in self.runtime.excluded()]
        return ToolCounts(False, counts, excluded)


class AggregateSource(_Base):
    """aggregate: the pool's last tools/list of each upstream, as the profile offers it."""

    def tools(self, identity: Identity) -> ToolCounts:
        # The aggregate profile's own egress rule (which names it can offer, and why not).
        from gatespec.profiles.aggregate.naming import LISTS, offer

        kind = LISTS["tools/list"]
        restricted = self.policy.restricted(identity)
        check = self.policy.check(identity)
        servers: Mapping[str, str] = self.runtime.servers  # server key -> config key
        listed = self.runtime.pool.tools()
        counts: dict[str, int] = {}
        excluded: list[tuple[str, str, str]] = []
        for server, config_key in servers.items():
            offered = offer(kind, server, listed.get(config_key, []), self.runtime.naming)
            shown = [
                entry
                for entry in offered.entries
                if not restricted or check(_tool_subject(server, entry, self.runtime.naming))
            ]
            if shown or not restricted:
                counts[config_key] = len(shown)
            excluded += [(config_key, u.name, u.reason) for u in offered.unoffered]
        return ToolCounts(restricted, counts, [] if restricted else excluded)


def _tool_subject(server: str, entry: Mapping[str, Any], naming: Naming) -> Subject:
    """As the aggregate profile checks a tools/list entry: "server:name" in the server's
    namespace."""
    _, name = naming.split(str(entry["name"]), False)
    return Subject.tool(server, f"{server}:{name}", entry.get("annotations"))
