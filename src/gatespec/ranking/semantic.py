"""The semantic half of the ranker: one unit vector per tool, cosine similarity per query.

:func:`build_index` gathers a catalog's vectors, cheapest source first: the whole catalog's
matrix from the cache (one file), then the last index built in this process (a refresh
changes a handful of tools), then the per-tool disk cache, and encodes only what is left
(~10 ms per tool on 2 cores), writing each chunk to the disk cache as it goes, so an
interrupted first run keeps its progress. The ranker runs it on a worker thread
(gatespec.ranking.ranker) and ranks lexically until it is done.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from gatespec.ranking.encoder import DIM, MiniLmEncoder
from gatespec.ranking.vector_cache import VectorCache, catalog_key, content_key

if TYPE_CHECKING:
    import numpy as np

__all__ = ["SemanticIndex", "build_index", "forget_recent", "notify"]

_CHUNK = 64  # tools per encoding step: progress and cache writes happen per step
_BAR_FROM = 4 * _CHUNK  # a first encode of at least this many tools shows a progress bar

# The last index built in this process: (model id, key -> row, matrix). Holds the matrix the
# serving index already holds (no copy), so a refresh finds its unchanged tools here even
# when the disk cache cannot be written.
_recent: tuple[str, dict[bytes, int], np.ndarray] | None = None
_recent_lock = threading.Lock()
# One build at a time: a refresh during a first encode waits for it and then finds most of
# its vectors cached, instead of encoding them a second time.
_build_lock = threading.Lock()


def notify(message: str) -> None:
    """Messages about the semantic index go to stderr (stdout may be MCP's)."""
    print(f"gatespec: {message}", file=sys.stderr, flush=True)


class SemanticIndex:
    """Cosine similarity of queries against the unit vectors of one catalog's tools."""

    def __init__(self, encoder: MiniLmEncoder, vectors: np.ndarray) -> None:
        self.encoder = encoder
        self.vectors = vectors  # (tools, DIM) float32 unit rows

    def __len__(self) -> int:
        return len(self.vectors)

    def similarities(self, queries: Sequence[str]) -> np.ndarray:
        """(len(queries), tools) cosine similarities: one encode, one pass over the matrix.

        numpy's einsum, not ``@``: a product with a handful of rows goes to the BLAS, whose
        worker threads, woken right after onnxruntime's, took ~5 ms at 10,000 tools on 2
        busy cores instead of the ~1 ms one thread needs to read the 15 MB matrix."""
        return self.against(self.encoder.encode(queries, query=True))

    def against(self, queries_v: np.ndarray) -> np.ndarray:
        """(queries, tools) cosine similarities of encoded (unit) query vectors."""
        import numpy as np

        sims: np.ndarray = np.einsum("td,qd->qt", self.vectors, queries_v)
        return sims

    def rows(self, rows: Sequence[int]) -> SemanticIndex:
        """The index of some of these tools (a ranker restricted to what one identity may
        see): their vectors copied, nothing encoded again."""
        return SemanticIndex(self.encoder, self.vectors[list(rows)])


def build_index(
    texts: Sequence[str],
    encoder: MiniLmEncoder,
    cache: VectorCache | None,
    *,
    alive: Callable[[], bool] = lambda: True,
    progress: Callable[[int, int], None] | None = None,
) -> SemanticIndex | None:
    """The index of `texts`, or None when `alive()` turns false midway (the catalog it was
    for has been replaced; what was encoded so far is cached)."""
    import numpy as np

    model = encoder.model_id
    keys = [content_key(t) for t in texts]
    whole = catalog_key(keys)
    with _build_lock:
        if not alive():
            return None
        matrix = cache.get_matrix(model, whole, len(texts), DIM) if cache is not None else None
        if matrix is None:
            matrix = np.zeros((len(texts), DIM), dtype=np.float32)
            missing = _fill(matrix, model, keys, cache)
            if missing:
                started = time.monotonic()
                if not _encode(matrix, texts, keys, missing, encoder, cache, alive, progress):
                    return None
                notify(
                    f"encoded {len(missing)} of {len(texts)} tools for semantic ranking in "
                    f"{time.monotonic() - started:.1f} s (cached for the next start)"
                )
            if cache is not None:
                cache.put_matrix(model, whole, matrix)
        _remember(model, keys, matrix)
    return SemanticIndex(encoder, matrix)


def _fill(
    matrix: np.ndarray, model: str, keys: Sequence[bytes], cache: VectorCache | None
) -> list[int]:
    """Copy known vectors into `matrix` (this process's last index, then the disk); the rows
    still missing."""
    import numpy as np

    missing = list(range(len(keys)))
    with _recent_lock:
        recent = _recent
    if recent is not None and recent[0] == model:
        rows = recent[1]
        hits = [(i, rows[k]) for i, k in enumerate(keys) if k in rows]
        if hits:
            at, src = zip(*hits, strict=True)
            matrix[list(at)] = recent[2][list(src)]
            found = set(at)
            missing = [i for i in missing if i not in found]
    if missing and cache is not None:
        stored = cache.get_many(model, [keys[i] for i in missing])
        still = []
        for i in missing:
            vec = stored.get(keys[i])
            if vec is None or len(vec) != DIM * 4:
                still.append(i)
            else:
                matrix[i] = np.frombuffer(vec, dtype=np.float32)
        missing = still
    return missing


def _encode(
    matrix: np.ndarray,
    texts: Sequence[str],
    keys: Sequence[bytes],
    missing: Sequence[int],
    encoder: MiniLmEncoder,
    cache: VectorCache | None,
    alive: Callable[[], bool],
    progress: Callable[[int, int], None] | None,
) -> bool:
    """Encode rows `missing` chunk by chunk, caching each; False if stopped by `alive`."""
    bar = _ProgressBar(len(missing)) if progress is None and len(missing) >= _BAR_FROM else None
    report = progress or (bar.update if bar is not None else None)
    try:
        for start in range(0, len(missing), _CHUNK):
            if not alive():
                return False
            chunk = list(missing[start : start + _CHUNK])
            vectors = encoder.encode([texts[i] for i in chunk])
            matrix[chunk] = vectors
            if cache is not None:
                cache.put_many(
                    encoder.model_id, [(keys[i], vectors[j].tobytes()) for j, i in enumerate(chunk)]
                )
            if report is not None:
                report(min(start + _CHUNK, len(missing)), len(missing))
    finally:
        if bar is not None:
            bar.close()
    return True


def _remember(model: str, keys: Sequence[bytes], matrix: np.ndarray) -> None:
    global _recent
    with _recent_lock:
        _recent = (model, {k: i for i, k in enumerate(keys)}, matrix)


def forget_recent() -> None:
    """Drop this process's last index (tests: as after a restart)."""
    global _recent
    with _recent_lock:
        _recent = None


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
