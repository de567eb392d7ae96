"""Pages of a merged list, with an opaque cursor (AM-AGGREGATE-LISTING).

The first request of a list broadcasts and merges; when the result is longer than a page, it
is kept as a snapshot and the rest is served from it, so a client's pages stay consistent
while upstreams change. A cursor names its list, snapshot and offset, base64url-encoded (opaque
to clients, but not a secret: a forged one finds no snapshot). A snapshot belongs to the
identity it was merged for (its visible entries, AM-ACCESS-NO-LEAK): another identity's cursor
is answered as an unknown one. Snapshots expire after the spec's TTL and at most
`MAX_SNAPSHOTS` are kept.
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from gatespec_surface.descriptors import AGGREGATE_CURSOR_TTL_SECONDS, AGGREGATE_PAGE_SIZE

__all__ = ["CursorInvalid", "Pages"]

MAX_SNAPSHOTS: Final = 64  # merged lists a gateway keeps for clients walking their pages


class CursorInvalid(ValueError):
    """The cursor is malformed, of another list, unknown or expired."""


@dataclass(frozen=True)
class _Snapshot:
    method: str
    entries: list[dict[str, Any]]
    created: float
    owner: str  # the identity key it was merged for


class Pages:
    def __init__(
        self,
        page_size: int | None = None,
        ttl: float = AGGREGATE_CURSOR_TTL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.page_size = page_size or AGGREGATE_PAGE_SIZE
        self.ttl = ttl
        self.clock = clock
        self._snapshots: OrderedDict[str, _Snapshot] = OrderedDict()

    def first(
        self, method: str, entries: list[dict[str, Any]], owner: str = ""
    ) -> tuple[list[Any], str | None]:
        """The first page of a list freshly merged for `owner`, and the cursor of the next (or
        None)."""
        if len(entries) <= self.page_size:
            return entries, None
        self._expire()
        snapshot_id = secrets.token_hex(8)
        self._snapshots[snapshot_id] = _Snapshot(method, entries, self.clock(), owner)
        while len(self._snapshots) > MAX_SNAPSHOTS:
            self._snapshots.popitem(last=False)
        return entries[: self.page_size], self._cursor(method, snapshot_id, self.page_size)

    def next(self, method: str, cursor: str, owner: str = "") -> tuple[list[Any], str | None]:
        """The page a cursor of `owner`'s points at, and the cursor of the one after (or
        None)."""
        snapshot_id, offset = self._decode(method, cursor)
        self._expire()
        snapshot = self._snapshots.get(snapshot_id)
        if snapshot is None or snapshot.owner != owner:
            raise CursorInvalid(
                "the cursor's list has expired or is unknown: list again from the start"
            )
        end = offset + self.page_size
        more = end < len(snapshot.entries)
        page = snapshot.entries[offset:end]
        return page, (self._cursor(method, snapshot_id, end) if more else None)

    def _expire(self) -> None:
        now = self.clock()
        for key in [k for k, s in self._snapshots.items() if now - s.created > self.ttl]:
            del self._snapshots[key]

    @staticmethod
    def _cursor(method: str, snapshot_id: str, offset: int) -> str:
        raw = json.dumps({"l": method, "s": snapshot_id, "o": offset}, separators=(",", ":"))
        return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")

    @staticmethod
    def _decode(method: str, cursor: str) -> tuple[str, int]:
        try:
            padded = cursor + "=" * (-len(cursor) % 4)
            doc = json.loads(base64.urlsafe_b64decode(padded.encode()))
            snapshot_id, offset, listed = doc["s"], doc["o"], doc["l"]
        except (ValueError, binascii.Error, KeyError, TypeError):
            raise CursorInvalid(f"{cursor[:40]!r} is not a cursor this gateway issued") from None
        if listed != method or not isinstance(snapshot_id, str) or not isinstance(offset, int):
            raise CursorInvalid(f"the cursor belongs to {listed!r}, not {method}")
        if offset < 0:
            raise CursorInvalid("the cursor's offset is negative")
        return snapshot_id, offset
