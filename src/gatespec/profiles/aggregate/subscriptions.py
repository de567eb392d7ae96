"""Which sessions are subscribed to which namespaced resource URI. Many sessions may subscribe
to one resource; the upstream is subscribed once, while at least one of them is."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio


class Subscribers:
    """namespaced URI -> the sessions subscribed to it."""

    def __init__(self) -> None:
        self._sessions: dict[str, set[str]] = {}
        self._changing = anyio.Lock()

    async def change(
        self, uri: str, session: str, on: bool, upstream: Callable[[], Awaitable[object]]
    ) -> None:
        """Subscribe (on) or unsubscribe `session`; `upstream()` (un)subscribes upstream when
        `session` is the first to subscribe or the last to leave."""
        async with self._changing:
            sessions = self._sessions.setdefault(uri, set())
            first, last = not sessions and on, sessions == {session} and not on
            if first or last:
                await upstream()
            if on:
                sessions.add(session)
            else:
                sessions.discard(session)
                if not sessions:
                    del self._sessions[uri]

    def of(self, uri: str) -> frozenset[str]:
        """The sessions subscribed to `uri`."""
        return frozenset(self._sessions.get(uri, ()))

    def uris_of(self, session: str) -> list[str]:
        """The URIs `session` is subscribed to."""
        return [uri for uri, sessions in self._sessions.items() if session in sessions]

    def drop(self, gone: Callable[[str], bool]) -> None:
        """Forget every URI for which `gone(uri)` holds (its server left the config)."""
        for uri in [u for u in self._sessions if gone(u)]:
            del self._sessions[uri]
