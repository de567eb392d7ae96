"""Tool embeddings cached on disk, keyed by model id and the sha256 of the text encoded.

A restart or a catalog refresh re-encodes only tools whose text changed. The store is one
SQLite file (stdlib ``sqlite3``: atomic writes, safe across processes) under the user's cache
directory: ``$GATESPEC_CACHE_DIR``, else ``$XDG_CACHE_HOME/gatespec``, else
``~/.cache/gatespec``. Any failure to read or write it is logged and the gateway goes on
without the cache: the cache may make ranking slower to get ready, never wrong or down.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

__all__ = ["VectorCache", "cache_dir", "content_key"]

log = logging.getLogger(__name__)

_FILE = "embeddings.sqlite3"
_CHUNK = 500  # keys per SELECT: under SQLite's bound-parameter limit


def cache_dir() -> Path:
    explicit = os.environ.get("GATESPEC_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "gatespec"


def content_key(text: str) -> bytes:
    """The cache key of one encoded text (the model id is the other half of the key)."""
    return hashlib.sha256(text.encode("utf-8")).digest()


class VectorCache:
    """model id + content key -> vector bytes (float32, little-endian)."""

    def __init__(self, directory: Path | None = None) -> None:
        self.path = (directory or cache_dir()) / _FILE
        self._broken = False

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=10)
        conn.execute(
            "CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, key BLOB NOT NULL, "
            "vector BLOB NOT NULL, PRIMARY KEY (model, key)) WITHOUT ROWID"
        )
        return conn

    def _failed(self, action: str, exc: Exception) -> None:
        if not self._broken:
            log.warning(
                "embedding cache %s: %s failed (%s); going on without it", self.path, action, exc
            )
        self._broken = True

    def get_many(self, model: str, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        """The cached vectors among `keys` (missing ones are absent)."""
        if self._broken or not keys:
            return {}
        found: dict[bytes, bytes] = {}
        try:
            with self._connect() as conn:
                for start in range(0, len(keys), _CHUNK):
                    chunk = list(keys[start : start + _CHUNK])
                    marks = ",".join("?" * len(chunk))
                    rows = conn.execute(
                        f"SELECT key, vector FROM vectors WHERE model = ? AND key IN ({marks})",
                        [model, *chunk],
                    )
                    found.update(rows)
            conn.close()
        except (sqlite3.Error, OSError) as exc:
            self._failed("reading", exc)
        return found

    def put_many(
        self, model: str, items: Mapping[bytes, bytes] | Iterable[tuple[bytes, bytes]]
    ) -> None:
        pairs = list(items.items() if isinstance(items, Mapping) else items)
        if self._broken or not pairs:
            return
        try:
            with self._connect() as conn:
                conn.executemany(
                    "INSERT OR REPLACE INTO vectors (model, key, vector) VALUES (?, ?, ?)",
                    [(model, k, v) for k, v in pairs],
                )
            conn.close()
        except (sqlite3.Error, OSError) as exc:
            self._failed("writing", exc)
