"""What a state backend shares between gateway replicas, and the protocol both backends meet.

Per-caller state lives behind two narrow interfaces, keyed by the caller's scope (its identity
and the session key its transport carries, gatespec.runtime_contract.Caller.scope):

- ArtifactBackend: artifacts behind tool_view handles. tool_execute's result firewall writes
  through a synchronous `writer()` (it runs inside the envelope builder); the runtime then
  `flush`es what it wrote, so a shared backend stores every artifact of a call in one round
  trip before the handles reach the client.
- SeenCardBackend: cache-stable seen-sets and frozen cards (seed 000 §5). `load` gives a
  SeenCards (for the ids one browse shows) to arrange that browse with; `save` stores what
  that browse changed and says whether another replica froze one of the same cards first (then
  the browse is arranged again over the stored state, so every replica emits the content first
  stored).

Events: a replica whose upstream announced a tools change publishes "tools_changed"; the others
re-list their upstreams, and tell their own listening clients if their catalog changed.

StateUnavailable is what a backend raises when its store cannot be reached; the runtime turns
it into a typed answer (gatespec.state.effects), never an exception across the MCP boundary.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from gatespec.artifacts import Artifact
    from gatespec.seen_cards import SeenCards

__all__ = [
    "ArtifactBackend",
    "ArtifactWriter",
    "SeenCardBackend",
    "StateBackend",
    "StateUnavailable",
]


class StateUnavailable(RuntimeError):
    """The shared state store cannot be reached (or did not answer in time)."""


class ArtifactWriter(Protocol):
    """What the result firewall writes artifacts through (gatespec.firewall._Envelope)."""

    max_total_bytes: int

    def fits(self, size: int) -> bool: ...

    def put(
        self,
        data: bytes,
        media_type: str,
        label: str,
        uri: str | None = None,
        owner: str | None = None,
    ) -> dict[str, Any]: ...


class ArtifactBackend(Protocol):
    def writer(self) -> ArtifactWriter:
        """A writer for one call's artifacts (flush it before showing the handles)."""
        ...

    async def flush(self, writer: ArtifactWriter) -> None:
        """Store what `writer` holds (nothing to do when it wrote through)."""
        ...

    async def get(self, handle: object, owner: str | None) -> Artifact:
        """The artifact, or VIEW_FAILED saying why not (malformed, unknown, expired, evicted)."""
        ...


class SeenCardBackend(Protocol):
    async def load(self, scope: str, ids: Sequence[str]) -> SeenCards:
        """The scope's session as far as `ids` (the cards one browse shows) are concerned: a
        shared store reads those entries only, so a browse costs the same however much the
        session has seen."""
        ...

    async def save(self, scope: str, session: SeenCards) -> bool:
        """Store what changed in `session`; False when another writer froze one of its new
        cards first (load again and re-arrange)."""
        ...

    async def record_seen(self, scope: str, tool_id: str) -> None:
        """§5.1: a hydration (explicit, or tool_execute's implicit one) succeeded."""
        ...


class StateBackend(Protocol):
    name: str  # "memory" or "redis"

    @property
    def artifacts(self) -> ArtifactBackend: ...

    @property
    def seen_cards(self) -> SeenCardBackend: ...

    async def ping(self) -> None:
        """StateUnavailable unless the store answers (readiness)."""
        ...

    async def commit_execute(self, scope: str, seen: str | None, writer: ArtifactWriter) -> None:
        """What one tool_execute leaves behind: `seen` recorded as seen (cache_stable) and the
        artifacts `writer` holds stored, in one round trip for a shared store."""
        ...

    async def publish(self, event: str) -> None:
        """Tell the other replicas (a shared backend's pub/sub; nothing in memory)."""
        ...

    async def follow(self, on_event: Callable[[str], Awaitable[None]]) -> None:
        """Run `on_event` for every event another replica publishes, until cancelled (returns
        at once when there are no other replicas to hear from)."""
        ...

    async def aclose(self) -> None: ...
