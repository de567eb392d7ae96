"""The semantic half of the ranker: one unit vector per tool, cosine similarity per query.

Building takes the vectors of unchanged tools from the cache (memory, then disk) and encodes
the rest. A few missing tools are encoded at once; more than ``SYNC_LIMIT`` (a first start on
a large catalog: ~10 ms per tool on 2 cores) are encoded on a background thread with a
progress bar on stderr, and until they are done :meth:`SemanticIndex.similarities` returns
None so the ranker serves the lexical ranking. Vectors are written to the disk cache as they
are made, so an interrupted first run keeps its progress.
"""

from __future__ import annotations

import sys
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from gatespec.ranking.encoder import DIM, MiniLmEncoder
from gatespec.ranking.vector_cache import VectorCache, content_key

if TYPE_CHECKING:
    import numpy as np

__all__ = ["SYNC_LIMIT", "SemanticIndex", "SemanticRows", "notify"]

SYNC_LIMIT = 64  # tools encoded before the index is returned (about half a second)
_CHUNK = 64  # tools per background step: progress and cache writes happen per step

# The vectors of the last index built in this process: a refresh usually changes a handful
# of tools, and this spares the disk (or stands in for it when it cannot be written).
_recent: dict[tuple[str, bytes], bytes] = {}
_recent_lock = threading.Lock()
# One background encode at a time: a refresh during a first encode waits for it and then
# finds most of its vectors already cached, instead of encoding them a second time.
_encode_lock = threading.Lock()


def notify(message: str) -> None:
    """Start-up messages about the semantic index go to stderr (stdout may be MCP's)."""
    print(f"gatespec: {message}", file=sys.stderr, flush=True)


class SemanticIndex:
    """Cosine similarity of queries against the embedding texts of one catalog."""

    def __init__(
        self,
        texts: Sequence[str],
        encoder: MiniLmEncoder,
        cache: VectorCache | None = None,
        *,
        background: bool = True,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        import numpy as np

        self.encoder = encoder
        self._model = encoder.model_id
        self._cache = cache
        self._keys = [content_key(t) for t in texts]
        self._ready = threading.Event()
        self._matrix: np.ndarray | None = None
        self._rows = np.zeros((len(texts), DIM), dtype=np.float32)
        missing = self._fill_cached(range(len(texts)))
        if len(missing) <= SYNC_LIMIT or not background:
            self._encode(texts, missing, progress)
            self._finish()
            return
        notify(
            f"encoding {len(missing)} of {len(texts)} tools for semantic ranking (first run; "
            "cached afterwards); ranking lexically until it is done"
        )
        worker = threading.Thread(
            target=_background,
            args=(weakref.ref(self), list(texts), missing, progress),
            name="gatespec-embed",
            daemon=True,
        )
        worker.start()

    # ------------------------------------------------------------------ building

    def _fill_cached(self, indices: Sequence[int]) -> list[int]:
        """Copy cached vectors into rows; the indices still missing."""
        import numpy as np

        found: dict[bytes, bytes] = {}
        with _recent_lock:
            for i in indices:
                vec = _recent.get((self._model, self._keys[i]))
                if vec is not None:
                    found[self._keys[i]] = vec
        rest = [self._keys[i] for i in indices if self._keys[i] not in found]
        if rest and self._cache is not None:
            found.update(self._cache.get_many(self._model, rest))
        missing = []
        for i in indices:
            vec = found.get(self._keys[i])
            if vec is None or len(vec) != DIM * 4:
                missing.append(i)
            else:
                self._rows[i] = np.frombuffer(vec, dtype=np.float32)
        return missing

    def _encode_chunk(self, texts: Sequence[str], chunk: Sequence[int]) -> None:
        """Encode rows `chunk` and cache them."""
        vectors = self.encoder.encode([texts[i] for i in chunk])
        self._rows[list(chunk)] = vectors
        if self._cache is not None:
            self._cache.put_many(
                self._model, [(self._keys[i], vectors[j].tobytes()) for j, i in enumerate(chunk)]
            )

    def _encode(
        self,
        texts: Sequence[str],
        indices: Sequence[int],
        progress: Callable[[int, int], None] | None,
    ) -> None:
        for start in range(0, len(indices), _CHUNK):
            self._encode_chunk(texts, indices[start : start + _CHUNK])
            if progress is not None:
                progress(min(start + _CHUNK, len(indices)), len(indices))

    def _finish(self) -> None:
        with _recent_lock:
            _recent.clear()
            _recent.update(
                ((self._model, k), self._rows[i].tobytes()) for i, k in enumerate(self._keys)
            )
        self._matrix = self._rows
        self._ready.set()

    # ------------------------------------------------------------------ querying

    @property
    def ready(self) -> bool:
        return self._ready.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the vectors are all there (True) or `timeout` passes (False)."""
        return self._ready.wait(timeout)

    def __len__(self) -> int:
        return len(self._keys)

    @property
    def vectors(self) -> np.ndarray | None:
        """(tools, DIM) unit vectors, or None while the index is building."""
        return self._matrix

    def similarities(self, queries: Sequence[str]) -> np.ndarray | None:
        """(len(queries), tools) cosine similarities, or None while the index is building."""
        matrix = self._matrix
        if matrix is None:
            return None
        vectors = self.encoder.encode(queries, query=True)
        sims: np.ndarray = vectors @ matrix.T
        return sims


class SemanticRows:
    """Some rows of a SemanticIndex, as an index of their own (a ranker restricted to the tools
    one identity may see): the same vectors, nothing encoded again."""

    def __init__(self, index: SemanticIndex | SemanticRows, rows: Sequence[int]) -> None:
        self._index = index
        self._rows = list(rows)

    @property
    def ready(self) -> bool:
        return self._index.ready

    def wait(self, timeout: float | None = None) -> bool:
        return self._index.wait(timeout)

    def __len__(self) -> int:
        return len(self._rows)

    @property
    def vectors(self) -> np.ndarray | None:
        matrix = self._index.vectors
        return None if matrix is None else matrix[self._rows]

    def similarities(self, queries: Sequence[str]) -> np.ndarray | None:
        sims = self._index.similarities(queries)
        return None if sims is None else sims[:, self._rows]


def _background(
    ref: weakref.ref[SemanticIndex],
    texts: list[str],
    missing: list[int],
    progress: Callable[[int, int], None] | None,
) -> None:
    """Encode `missing` for the index behind `ref`, holding it only for one step at a time:
    an index superseded by a refresh is dropped, and its encoding stops."""
    started = time.monotonic()
    with _encode_lock:
        index = ref()
        if index is None:
            return
        missing = index._fill_cached(missing)  # a build before this one may have cached them
        del index
        bar = _ProgressBar(len(missing)) if progress is None else None
        report = progress or (bar.update if bar is not None else None)
        try:
            for start in range(0, len(missing), _CHUNK):
                index = ref()
                if index is None:
                    return
                index._encode_chunk(texts, missing[start : start + _CHUNK])
                del index
                if report is not None:
                    report(min(start + _CHUNK, len(missing)), len(missing))
        finally:
            if bar is not None:
                bar.close()
        index = ref()
        if index is not None:
            index._finish()
            notify(
                f"semantic ranking ready: {len(texts)} tools "
                f"({time.monotonic() - started:.1f} s to encode {len(missing)})"
            )


class _ProgressBar:
    """tqdm on stderr while a large catalog is encoded for the first time."""

    def __init__(self, total: int) -> None:
        from tqdm import tqdm

        self._bar = tqdm(
            total=total,
            desc="gatespec: encoding tools",
            unit="tool",
            file=sys.stderr,
            mininterval=0.5 if sys.stderr.isatty() else 10.0,
            leave=False,
        )
        self._last = 0

    def update(self, done: int, total: int) -> None:
        self._bar.update(done - self._last)
        self._last = done

    def close(self) -> None:
        self._bar.close()
