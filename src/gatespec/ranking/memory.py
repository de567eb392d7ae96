"""Tool memory: what the dev queries of a known tool looked like (document expansion from known
queries, in the manner of doc2query, applied only to tools seen in the development data).

For every tool enough dev queries asked for (5 or more, chosen), the memory holds a fingerprint
of the tool (a hash of its name and description, so a renamed or re-described tool is unseen)
and the prototype(s) of the shipped model's vectors of those queries. At query time a catalog
tool whose fingerprint is in memory gets ``weight * (best cosine of the query to its prototypes
- centre)`` added to its fused score, after the fusion and the feedback; every other tool scores
exactly as without the memory. The centre makes it two-sided: a known tool whose past queries
look like this one is raised, one whose past queries do not is lowered (query-to-query cosines
run higher than query-to-tool ones, so an uncentred addition raised every known tool above the
unseen ones and lost on the by-server split). It helps only catalogs holding tools that appeared
in the training catalogs.

Built by ``python -m gatespec.ranking.train --memory`` (gatespec.ranking.train.memory_cv) from
the dev queries only, every choice by cross-validation (docs/tool_memory.md); shipped in the
wheel as ``tool_memory.npz``; loaded on the first ranked query that needs it, from the package
(never downloaded). ``GATESPEC_MEMORY=off`` (or `gatespec rank --no-memory`) turns it off. It
applies only when queries are encoded by the shipped model (its prototypes are that model's
vectors), not with the learned query tower.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from gatespec.ranking.documents import Document

__all__ = [
    "MEMORY_FILE",
    "OFF_ENV",
    "ToolMemory",
    "fingerprint",
    "load_memory",
    "memory_applies",
    "prototypes",
    "shift",
    "switched_off",
]

OFF_ENV = "GATESPEC_MEMORY"
MEMORY_FILE = Path(__file__).with_name("tool_memory.npz")

log = logging.getLogger(__name__)


def switched_off() -> bool:
    return os.environ.get(OFF_ENV, "").strip().lower() in ("0", "off", "false", "no")


def fingerprint(name: str, description: str) -> str:
    """A tool's identity for the memory: sha256 of its name and description, Unicode NFC and
    each run of white space made one space (the only changes that leave the meaning alone).
    Case, punctuation, digits and every word count."""

    def norm(text: str) -> str:
        return " ".join(unicodedata.normalize("NFC", text).split())

    return hashlib.sha256(f"{norm(name)}\n{norm(description)}".encode()).hexdigest()[:32]


def prototypes(vectors: np.ndarray, k: int) -> np.ndarray:
    """Up to `k` unit prototypes of some query vectors: their normalised centroid for k = 1,
    else spherical k-means (deterministic: farthest-point start, 10 rounds)."""
    import numpy as np

    def unit(m: np.ndarray) -> np.ndarray:
        norms = np.linalg.norm(m, axis=1, keepdims=True)
        return m / np.maximum(norms, 1e-12)

    vectors = np.asarray(vectors, dtype=np.float32)
    if k <= 1 or len(vectors) <= 1:
        return unit(vectors.mean(axis=0, keepdims=True))
    k = min(k, len(vectors))
    centres = [vectors[0]]
    for _ in range(1, k):
        nearest = np.max(vectors @ np.stack(centres).T, axis=1)
        centres.append(vectors[int(nearest.argmin())])
    c = unit(np.stack(centres))
    for _ in range(10):
        owner = (vectors @ c.T).argmax(axis=1)
        c = unit(
            np.stack(
                [vectors[owner == j].mean(axis=0) if (owner == j).any() else c[j] for j in range(k)]
            )
        )
    return c


@dataclass(frozen=True)
class ToolMemory:
    """Fingerprints, their prototypes (rows of `vectors`; `owner[i]` is row i's fingerprint
    position) and the weight and centre chosen with them."""

    fingerprints: tuple[str, ...]
    owner: np.ndarray  # (rows,) int32
    vectors: np.ndarray  # (rows, DIM) unit rows
    weight: float
    centre: float

    @classmethod
    def build(
        cls,
        queries: Mapping[str, Sequence[np.ndarray]] | Mapping[str, np.ndarray],
        k: int,
        weight: float,
        centre: float,
    ) -> ToolMemory:
        """From each fingerprint's query vectors (fingerprints sorted: a reproducible file)."""
        import numpy as np

        fps = sorted(queries)
        protos = [prototypes(np.asarray(queries[f]), k) for f in fps]
        owner = np.concatenate([np.full(len(p), i, dtype=np.int32) for i, p in enumerate(protos)])
        return cls(tuple(fps), owner, np.concatenate(protos).astype(np.float32), weight, centre)

    def save(self, path: Path) -> None:
        import numpy as np

        with path.open("wb") as fh:  # np.savez_compressed stamps no time: byte-reproducible
            np.savez_compressed(
                fh,
                fingerprints=np.array(self.fingerprints),
                owner=self.owner,
                vectors=self.vectors.astype(np.float16),
                weight=np.array(self.weight, dtype=np.float64),
                centre=np.array(self.centre, dtype=np.float64),
            )

    @classmethod
    def load(cls, path: Path) -> ToolMemory:
        import numpy as np

        with np.load(path, allow_pickle=False) as z:
            return cls(
                tuple(str(f) for f in z["fingerprints"]),
                z["owner"].astype(np.int32),
                z["vectors"].astype(np.float32),
                float(z["weight"]),
                float(z["centre"]),
            )

    def rows_for(self, docs: Sequence[Document]) -> tuple[np.ndarray, np.ndarray]:
        """(tool positions, memory rows) pairing each of `docs` found in memory with each of
        its prototypes: what :meth:`recall` reads."""
        import numpy as np

        where = {f: i for i, f in enumerate(self.fingerprints)}
        by_fp: dict[int, list[int]] = {}
        for row, fp in enumerate(self.owner.tolist()):
            by_fp.setdefault(fp, []).append(row)
        tools: list[int] = []
        rows: list[int] = []
        for t, doc in enumerate(docs):
            fp = where.get(fingerprint(doc.name, doc.description))
            for row in by_fp.get(fp, ()) if fp is not None else ():
                tools.append(t)
                rows.append(row)
        return np.array(tools, dtype=np.intp), np.array(rows, dtype=np.intp)

    def best(
        self, query: np.ndarray, size: int, pairs: tuple[np.ndarray, np.ndarray]
    ) -> np.ndarray:
        """Each of `size` tools' best cosine of one unit query vector to its prototypes;
        -inf for tools not in memory."""
        import numpy as np

        tools, rows = pairs
        # Every prototype once (a few thousand rows), then picked: a catalog that repeats known
        # tools would otherwise gather (copy) their rows on every query. einsum, not @: see
        # SemanticIndex.similarities.
        sims = np.einsum("rd,d->r", self.vectors, query.astype(np.float32))
        out = np.full(size, -np.inf)
        np.maximum.at(out, tools, sims[rows].astype(np.float64))
        return out

    def recall(
        self, query: np.ndarray, size: int, pairs: tuple[np.ndarray, np.ndarray]
    ) -> np.ndarray | None:
        """What the memory adds to each of `size` tools' fused scores for one unit query
        vector: weight * (best cosine to the tool's prototypes - centre); exactly 0 for tools
        not in memory. None when no tool of the catalog is (nothing to add)."""
        if not len(pairs[0]):
            return None
        return shift(self.best(query, size, pairs), self.weight, self.centre)


def shift(best: np.ndarray, weight: float, centre: float) -> np.ndarray:
    """weight * (best - centre) where `best` is finite (a tool in memory), else 0."""
    import numpy as np

    known = np.isfinite(best)
    out = np.zeros(len(best))
    out[known] = weight * (best[known] - centre)
    return out


def memory_applies(encoder: object) -> bool:
    """Whether `encoder` encodes queries as the shipped model does (the prototypes are that
    model's vectors): not with the learned query tower (int8 arithmetic of the same model is
    close enough; its cosine to the float vectors is ~0.99)."""
    from gatespec.ranking.learned import LearnedQueries

    return not (isinstance(encoder, LearnedQueries) and encoder.lexical_weight is not None)


_lock = threading.Lock()
_loaded: list[ToolMemory | None] = []


def load_memory() -> ToolMemory | None:
    """The shipped memory, read once from the package on first use; None when switched off,
    absent (an install without it) or unreadable. Never downloads anything."""
    if switched_off():
        return None
    with _lock:
        if not _loaded:
            memory = None
            if MEMORY_FILE.is_file():
                try:
                    memory = ToolMemory.load(MEMORY_FILE)
                except Exception:  # a broken file costs the memory, not the ranking
                    log.warning("the tool memory is unreadable", exc_info=True)
            _loaded.append(memory)
        return _loaded[0]
