"""Tool embeddings cached on disk, keyed by model id and the sha256 of the text encoded.

A restart or a catalog refresh re-encodes only tools whose text changed. Two stores under the
user's cache directory (``$GATESPEC_CACHE_DIR``, else ``$XDG_CACHE_HOME/gatespec``, else
``~/.cache/gatespec``):

* one SQLite file (stdlib ``sqlite3``: atomic writes, safe across processes), one row per
  tool text: what a changed catalog takes its unchanged tools from;
* one numpy file per whole catalog (named by the hash of every tool's key, in order): a
  restart on an unchanged catalog reads its matrix in one go (10,000 tools: ~15 MB, a few
  ms) instead of 10,000 rows. Only the most recently used few are kept.

Any failure to read or write them is logged and the gateway goes on without the cache: the
cache may make ranking slower to get ready, never wrong or down.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

__all__ = ["VectorCache", "cache_dir", "catalog_key", "content_key"]

log = logging.getLogger(__name__)

_FILE = "embeddings.sqlite3"
_CHUNK = 500  # keys per SELECT: under SQLite's bound-parameter limit
_CATALOGS = "catalogs"
_KEEP_CATALOGS = 8  # whole-catalog matrices kept (most recently used first)


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


def catalog_key(keys: Sequence[bytes]) -> str:
    """The name of a whole catalog's matrix: the hash of its tools' content keys, in order."""
    digest = hashlib.sha256()
    for key in keys:
        digest.update(key)
    return digest.hexdigest()[:32]


class VectorCache:
    """model id + content key -> vector bytes (float32, little-endian)."""

    def __init__(self, directory: Path | None = None) -> None:
        self.path = (directory or cache_dir()) / _FILE
        self._catalogs = self.path.parent / _CATALOGS
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

    # ---------------------------------------------------------------- whole catalogs

    def _matrix_path(self, model: str, catalog: str) -> Path:
        return self._catalogs / f"{model}-{catalog}.npy"

    def get_matrix(self, model: str, catalog: str, rows: int, dim: int) -> np.ndarray | None:
        """The cached (rows, dim) float32 matrix of one catalog, or None."""
        import numpy as np

        path = self._matrix_path(model, catalog)
        if self._broken or not path.is_file():
            return None
        try:
            matrix = np.load(path, allow_pickle=False)
            os.utime(path)  # recently used: kept by the pruning in put_matrix
        except (OSError, ValueError) as exc:
            self._failed("reading", exc)
            return None
        if matrix.shape != (rows, dim) or matrix.dtype != np.float32:
            return None
        return matrix

    def put_matrix(self, model: str, catalog: str, matrix: np.ndarray) -> None:
        """Store one catalog's matrix (atomically: written aside, then renamed), keeping only
        the most recently used few."""
        import numpy as np

        if self._broken:
            return
        try:
            self._catalogs.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self._catalogs, suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as fh:
                    np.save(fh, matrix, allow_pickle=False)
                os.replace(tmp, self._matrix_path(model, catalog))
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
            kept = sorted(self._catalogs.glob("*.npy"), key=_mtime, reverse=True)
            for old in kept[_KEEP_CATALOGS:]:
                old.unlink(missing_ok=True)
        except OSError as exc:
            self._failed("writing", exc)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:  # pruned by another process meanwhile
        return 0.0
