"""Cache-stable browsing (§5): per client session, cards seen before come first, byte-identical.

A session's seen-set holds every card id it was shown (or tool it hydrated successfully). On each
browse the seen cards are re-emitted first, sorted by id, with the exact content they had when
first emitted (score included); then the marker card, only when there are both seen and new
cards (§5.3); then the new cards sorted by id. That makes the start of every response a byte-
stable prefix a client can put a prompt-cache breakpoint after.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, TypeVar

from gatespec.cards import order_cards
from gatespec_surface.budgets import (
    CACHE_MARKER_DESCRIPTION,
    CACHE_MARKER_ID,
    CACHE_MARKER_KIND,
    CACHE_MARKER_NAME,
    CACHE_NEW_ORDER,
    CACHE_SEEN_ORDER,
)

__all__ = ["DEFAULT_MAX_SESSIONS", "SeenCards", "SeenCardStore", "marker_card"]

T = TypeVar("T")
Card = dict[str, Any]

# How many sessions a store keeps before forgetting the least recently used (a runtime limit,
# not a surface bound: a forgotten session simply starts again with nothing seen).
DEFAULT_MAX_SESSIONS: Final = 256


def marker_card() -> Card:
    """§5.1: the internal card marking the boundary between seen and new cards."""
    return {
        "id": CACHE_MARKER_ID,
        "name": CACHE_MARKER_NAME,
        "description": CACHE_MARKER_DESCRIPTION,
        "tags": [],
        "kind": CACHE_MARKER_KIND,
        "namespace": "",
        "has_schema": False,
        "cost_hint": 0.0,
        "side_effects": False,
    }


def _copy(card: Mapping[str, Any]) -> Card:
    # Cards are flat apart from the tags list: this copy shares nothing mutable.
    return {**card, "tags": list(card.get("tags", []))}


class SeenCards:
    """The seen-set and first-sighting cards of one client session."""

    __slots__ = ("_seen", "_frozen", "_lock", "_dirty")

    def __init__(
        self, seen: Iterable[str] = (), frozen: Mapping[str, Mapping[str, Any]] | None = None
    ) -> None:
        # seen/frozen: a state saved elsewhere (a shared state backend), to go on from.
        self._seen: set[str] = set(seen)
        self._frozen: dict[str, Card] = {k: _copy(v) for k, v in (frozen or {}).items()}
        self._seen.update(self._frozen)
        self._lock = threading.Lock()
        self._dirty: set[str] = set()  # ids seen or frozen since construction

    def changes(self) -> dict[str, Card | None]:
        """What changed since construction: each id newly seen or first frozen, with its
        frozen content (None: seen through hydration, never shown yet)."""
        with self._lock:
            return {i: self._frozen.get(i) for i in sorted(self._dirty)}

    def __contains__(self, card_id: object) -> bool:
        return card_id in self._seen

    @property
    def seen(self) -> frozenset[str]:
        return frozenset(self._seen)

    def arrange(self, cards: Sequence[Mapping[str, Any]]) -> list[Card]:
        """Seen cards (frozen, by id), the marker when both parts are non-empty, then new cards
        (by id); the new ones become seen with their current content frozen."""
        with self._lock:
            current: dict[str, Mapping[str, Any]] = {}
            for card in cards:
                card_id = card["id"]
                if card_id != CACHE_MARKER_ID:
                    current.setdefault(card_id, card)
            seen: list[Card] = []
            new: list[Card] = []
            for card_id, card in current.items():
                if card_id in self._seen:
                    if card_id not in self._frozen:
                        # hydrated but never shown: this browse is its first sighting
                        self._frozen[card_id] = _copy(card)
                        self._dirty.add(card_id)
                    seen.append(self._frozen[card_id])
                else:
                    frozen = self._frozen[card_id] = _copy(card)
                    new.append(frozen)
                    self._seen.add(card_id)
                    self._dirty.add(card_id)
            out = [_copy(c) for c in order_cards(seen, CACHE_SEEN_ORDER)]
            if seen and new:
                out.append(marker_card())
            out += [_copy(c) for c in order_cards(new, CACHE_NEW_ORDER)]
            return out

    def record_hydrated(self, tool_id: str) -> None:
        """§5.1: a successful hydration makes the tool seen (call only after success, §5.5)."""
        with self._lock:
            if tool_id not in self._seen:
                self._seen.add(tool_id)
                self._dirty.add(tool_id)

    def hydrate(self, hydrate: Callable[[str], T], tool_id: str) -> T:
        """Run `hydrate(tool_id)` and record the tool as seen only if it succeeds (§5.5).
        A HydrationResult names the canonical id, which is what is recorded: the caller may
        have passed a wire name."""
        result = hydrate(tool_id)
        canonical = result.get("tool_id") if isinstance(result, Mapping) else None
        self.record_hydrated(canonical if isinstance(canonical, str) else tool_id)
        return result


class SeenCardStore:
    """Each client session's SeenCards by opaque key, keeping at most `max_sessions` (least recently used go first)."""

    def __init__(self, max_sessions: int = DEFAULT_MAX_SESSIONS) -> None:
        if max_sessions < 1:
            raise ValueError("max_sessions must be at least 1")
        self._max = max_sessions
        self._sessions: OrderedDict[str, SeenCards] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> SeenCards:
        """The seen cards of session `key`, created on first use."""
        with self._lock:
            session = self._sessions.get(key)
            if session is None:
                session = self._sessions[key] = SeenCards()
                while len(self._sessions) > self._max:
                    self._sessions.popitem(last=False)
            else:
                self._sessions.move_to_end(key)
            return session

    def drop(self, key: str) -> None:
        with self._lock:
            self._sessions.pop(key, None)

    def __contains__(self, key: object) -> bool:
        return key in self._sessions

    def __len__(self) -> int:
        return len(self._sessions)
