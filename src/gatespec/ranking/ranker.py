"""The ranker behind tool_browse(query) and the search profile: BM25F fused with a sentence
embedding model (gatespec.ranking.fusion says how).

Built once per catalog snapshot. The lexical index is ready at once. The semantic half costs
memory (the model: ~120 MB) and time (loading it; encoding a new catalog), so nothing of it is
loaded until a query asks for a ranking: the first query starts a worker thread that loads the
model and builds the semantic index (gatespec.ranking.semantic), and queries are ranked
lexically until it is ready. A gateway that is only browsed by path, or whose profile ranks no
queries, never loads the model. :attr:`Ranker.status` says which ranking serves queries.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gatespec.ranking.bm25 import Bm25Index, best
from gatespec.ranking.documents import Document, embedding_text
from gatespec.ranking.encoder import EncoderStatus, availability, load_encoder
from gatespec.ranking.fusion import (
    DEFAULT_PARAMS,
    FusionParams,
    clauses,
    demote_duplicates,
    fuse,
    interleave,
)
from gatespec.ranking.semantic import SemanticIndex, build_index
from gatespec.ranking.vector_cache import VectorCache
from gatespec_surface.budgets import QUERY_MAX_CHARS

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Ranker", "rank_parts"]

log = logging.getLogger(__name__)

# Each clause list (and the list near-duplicates are demoted in) is cut to this depth: deeper
# ranks of one clause never outrank the first ranks of another.
_DEPTH = 50


class Ranker:
    """Hybrid ranking over one set of documents; thread-safe once built.

    `semantic=False` ranks lexically only. `background=False` loads the model and builds the
    semantic index before returning (`gatespec rank`, benchmarks) instead of on the first
    query."""

    def __init__(
        self,
        docs: Sequence[Document],
        *,
        semantic: bool = True,
        background: bool = True,
        params: FusionParams = DEFAULT_PARAMS,
        cache: VectorCache | None = None,
    ) -> None:
        docs = list(docs)
        self.params = params
        self.lexical = Bm25Index(docs)
        self._docs = docs
        self._cache = cache
        self._semantic: SemanticIndex | None = None
        self._done = threading.Event()  # set once the semantic half is ready or given up
        self._started = False
        self._lock = threading.Lock()
        if not semantic:
            self._status = EncoderStatus(False, "lexical ranking only (semantic=False)")
        else:
            self._status = availability()
        if not self._status.on or not docs:
            self._done.set()
        elif not background:
            self._started = True
            _build(weakref.ref(self))

    def __len__(self) -> int:
        return len(self.lexical)

    # ------------------------------------------------------------------ the semantic half

    def _start(self) -> None:
        """Load the model and build the semantic index on a worker thread (once)."""
        with self._lock:
            if self._started:
                return
            self._started = True
        threading.Thread(
            target=_build, args=(weakref.ref(self),), name="gatespec-embed", daemon=True
        ).start()

    def _settle(self, index: SemanticIndex | None, status: EncoderStatus) -> None:
        self._semantic, self._status = index, status
        self._docs = []  # the texts are encoded (or never will be): free them
        self._done.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the semantic half is ready or given up (True), or `timeout` passes.
        Starts it if no query has yet."""
        if not self._done.is_set():
            self._start()
        return self._done.wait(timeout)

    @property
    def semantic(self) -> SemanticIndex | None:
        """The semantic index once it is ready, else None."""
        return self._semantic

    @property
    def hybrid(self) -> bool:
        return self._semantic is not None

    @property
    def status(self) -> str:
        """One line for `gatespec rank` and logs: which ranking serves queries, and why."""
        if self._status.on and self._semantic is None:
            if self._started:
                return "lexical ranking while the semantic index is built"
            return self._status.detail  # available; loads on the first query
        return self._status.detail

    # ------------------------------------------------------------------ querying

    def search_counted(self, query: str, k: int = 10) -> tuple[list[tuple[str, float]], int]:
        """The top `k` tools as (id, score), best first, and how many tools matched at all.

        The query is cut to browse.query_max_chars characters. Scores are rounded to 4
        decimals and strictly decrease down the list, so ordering by score then id (§2.5)
        keeps this order. The first query starts loading the semantic half."""
        if k <= 0 or not query or query.isspace():
            return [], 0
        semantic = self._semantic
        if semantic is None and not self._done.is_set():
            self._start()
        parts = self.parts(query)
        sims = semantic.similarities(parts) if semantic is not None else None
        return rank_parts(
            [self.lexical.scores(part) for part in parts],
            sims,
            self.lexical.ids,
            semantic.vectors if semantic is not None else None,
            self.params,
            k,
        )

    def parts(self, query: str) -> list[str]:
        """What is ranked for a query: the query cut to browse.query_max_chars, then its
        clauses when it has at least params.split_min_clauses of them."""
        query = query[:QUERY_MAX_CHARS]
        need = self.params.split_min_clauses
        if need <= 0:
            return [query]
        steps = clauses(query, self.params.max_clauses)
        return [query, *steps] if len(steps) >= need else [query]


def _build(ref: weakref.ref[Ranker]) -> None:
    """Load the model and build the semantic index of the ranker behind `ref`, holding it
    only for moments: a ranker dropped by a catalog refresh stops the encoding."""
    ranker = ref()
    if ranker is None:
        return
    texts = [embedding_text(d) for d in ranker._docs]
    cache = ranker._cache if ranker._cache is not None else VectorCache()
    del ranker
    index: SemanticIndex | None = None
    try:
        encoder, status = load_encoder()
        if encoder is not None:
            index = build_index(texts, encoder, cache, alive=lambda: ref() is not None)
    except Exception as exc:  # a broken model or cache must not stop the gateway
        log.warning("semantic ranking unavailable", exc_info=True)
        status = EncoderStatus(False, f"lexical ranking only: the semantic index failed ({exc})")
    ranker = ref()
    if ranker is not None:
        ranker._settle(index, status)


def rank_parts(
    lexical: Sequence[np.ndarray],
    sims: np.ndarray | None,
    ids: Sequence[str],
    vectors: np.ndarray | None,
    params: FusionParams,
    k: int,
) -> tuple[list[tuple[str, float]], int]:
    """Ranker.search_counted from each part's BM25 scores and cosine similarities (bench/
    retrieval.py calls this directly to cross-validate `params` without re-encoding)."""
    scored = [
        fuse(scores, sims[n] if sims is not None else None, params)
        for n, scores in enumerate(lexical)
    ]
    matched = scored[0][1]
    for _, mask in scored[1:]:
        matched = matched | mask
    total = int(matched.sum())
    if not total:
        return [], 0
    demote = vectors is not None and params.duplicate_similarity <= 1.0
    depth = _DEPTH if demote or len(scored) > 1 else k
    lists = [best(fused, mask.nonzero()[0], ids, depth) for fused, mask in scored]
    order = interleave(lists) if len(lists) > 1 else lists[0]
    order = demote_duplicates(order, vectors, params.duplicate_similarity, k)
    return _monotone(order, scored[0][0], ids), total


def _monotone(
    order: Sequence[int], scores: np.ndarray, ids: Sequence[str]
) -> list[tuple[str, float]]:
    """(id, score) down `order`: each the full query's fused score, lowered where needed so
    that sorting by score descending then id ascending (§2.5) gives `order` back (a clause's
    tool interleaved high can score lower on the whole query than tools below it)."""
    out: list[tuple[str, float]] = []
    for i in order:
        score = round(float(scores[i]), 4)
        if out:
            above_id, above = out[-1]
            if score > above or (score == above and ids[i] < above_id):
                score = above if ids[i] > above_id else round(above - 1e-4, 4)
        out.append((ids[i], score + 0.0))
    return out
