"""The in-process state backend: today's behaviour, and the default. State lives in this
process's memory (bounded, least recently used first); nothing survives a restart and no other
replica sees it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from gatespec.artifacts import Artifact, ArtifactStore
from gatespec.seen_cards import SeenCards, SeenCardStore
from gatespec.state.base import ArtifactWriter

__all__ = ["MemoryArtifacts", "MemorySeenCards", "MemoryState"]


class MemoryArtifacts:
    def __init__(self, store: ArtifactStore | None = None) -> None:
        self.store = store if store is not None else ArtifactStore()  # an empty store is falsy

    def writer(self) -> ArtifactWriter:
        return self.store  # writes through: nothing to flush

    async def flush(self, writer: ArtifactWriter) -> None:
        return None

    async def get(self, handle: object, owner: str | None) -> Artifact:
        return self.store.get(handle, owner)


class MemorySeenCards:
    def __init__(self, store: SeenCardStore | None = None) -> None:
        self.store = store if store is not None else SeenCardStore()

    async def load(self, scope: str, ids: Sequence[str]) -> SeenCards:
        return self.store.get(scope)  # the live session: arranging it is saving it

    async def save(self, scope: str, session: SeenCards) -> bool:
        return True

    async def record_seen(self, scope: str, tool_id: str) -> None:
        self.store.get(scope).record_hydrated(tool_id)


class MemoryState:
    name = "memory"

    def __init__(self, artifacts: ArtifactStore | None = None) -> None:
        self.artifacts = MemoryArtifacts(artifacts)
        self.seen_cards = MemorySeenCards()

    async def ping(self) -> None:
        return None

    async def commit_execute(self, scope: str, seen: str | None, writer: ArtifactWriter) -> None:
        if seen is not None:
            await self.seen_cards.record_seen(scope, seen)
        # the writer wrote through: the artifacts are stored already

    async def publish(self, event: str) -> None:
        return None  # no other replica shares this process's state

    async def follow(self, on_event: Callable[[str], Awaitable[None]]) -> None:
        return None

    async def aclose(self) -> None:
        return None
