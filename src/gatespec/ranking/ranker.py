"""The ranker behind tool_browse(query) and the search profile: BM25F fused with a sentence
embedding model (gatespec.ranking.fusion says how).

Built once per catalog snapshot. The lexical index is built on the first query (it brings
numpy, ~8-16 MiB resident: a catalog only browsed by path, or listed by the transparent
profile, never needs it) and is ready at once. The semantic half costs
memory (the model: ~130 MB) and time (loading it; encoding a new catalog), so nothing of it is
loaded until a query asks for a ranking: the first query starts a worker thread that loads the
model and builds the semantic index (gatespec.ranking.semantic), and queries are ranked
lexically until it is ready. A gateway that is only browsed by path, or whose profile ranks no
queries, never loads the model. :attr:`Ranker.status` says which ranking serves queries.

Those worker threads are stopped and joined before the interpreter shuts down (`stop_workers`,
run at exit): one still inside onnxruntime when the interpreter finalises was ended in the
middle of C++ code, and the process aborted ("terminate called without an active exception",
exit -6; issue 22 #10). A worker stops between two chunks of encoding.
"""

from __future__ import annotations

import atexit
import functools
import logging
import threading
import time
import weakref
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from gatespec.ranking.bm25 import Bm25Index, best
from gatespec.ranking.documents import Document, embedding_text
from gatespec.ranking.encoder import EncoderStatus
from gatespec.ranking.fusion import DEFAULT_PARAMS, FusionParams, feedback, fuse
from gatespec.ranking.learned import fusion_for
from gatespec.ranking.loading import availability, load_encoder
from gatespec.ranking.memory import load_memory, memory_applies
from gatespec.ranking.semantic import SemanticIndex, build_index
from gatespec.ranking.vector_cache import VectorCache
from gatespec_surface.budgets import QUERY_MAX_CHARS

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Ranker", "fused_scores", "rank_scores", "top_scores"]

log = logging.getLogger(__name__)

STOP_TIMEOUT = 30.0  # seconds the exit waits for a worker to reach a point where it can stop
_stopping = threading.Event()
_workers: set[threading.Thread] = set()
_workers_lock = threading.Lock()


def stop_workers(timeout: float = STOP_TIMEOUT) -> None:
    """Stop the model's worker threads and wait for them (at exit; tests may call it)."""
    _stopping.set()
    with _workers_lock:
        workers = list(_workers)
    deadline = time.monotonic() + timeout
    for worker in workers:
        worker.join(max(0.0, deadline - time.monotonic()))
        if worker.is_alive():  # pragma: no cover - a model load that never returns
            log.warning("the embedding model's thread did not stop within %.0f s", timeout)


atexit.register(stop_workers)


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
        self.docs = tuple(docs)
        self._lexical: Bm25Index | None = None  # built on the first query (`lexical`)
        # A restricted ranker (see restricted()): the ranker whose semantic half it shares,
        # and which of that ranker's rows are its documents.
        self._base: tuple[Ranker, list[int]] | None = None
        self._rows: SemanticIndex | None = None
        self._cache = cache
        self._semantic: SemanticIndex | None = None
        self._done = threading.Event()  # set once the semantic half is ready or given up
        self._started = False
        self._lock = threading.Lock()
        self._memory_pairs: tuple[np.ndarray, np.ndarray] | None = None  # (_recall)
        if not semantic:
            self._status = EncoderStatus(False, "lexical ranking only (semantic=False)")
        else:
            self._status = availability()
        self._docs = docs if self._status.on else []  # what the worker will encode
        if not self._docs:
            self._done.set()
        elif not background:
            self._started = True
            _build(weakref.ref(self))

    def __len__(self) -> int:
        return len(self.docs)

    @property
    def lexical(self) -> Bm25Index:
        """The BM25F index, built on first use (once, whichever thread asks first)."""
        if self._lexical is None:
            with self._lock:
                if self._lexical is None:
                    self._lexical = Bm25Index(self.docs)
        return self._lexical

    @functools.cached_property
    def _positions(self) -> dict[str, int]:
        """Each document id's position (built on the first namespace-filtered query)."""
        return {doc_id: i for i, doc_id in enumerate(self.lexical.ids)}

    def restricted(self, ids: Collection[str]) -> Ranker:
        """A ranker over the documents in `ids` only, ranking exactly as one built from them
        would (its own BM25 statistics, the same embeddings) and sharing this ranker's semantic
        half, nothing encoded again: what an identity that may see only those tools is ranked
        by (AM-ACCESS-NO-LEAK)."""
        keep = [i for i, doc in enumerate(self.docs) if doc.id in ids]
        out = Ranker([self.docs[i] for i in keep], semantic=False, params=self.params)
        out._base = (self, keep)
        return out

    # ------------------------------------------------------------------ the semantic half

    def _start(self) -> None:
        """Load the model and build the semantic index on a worker thread (once)."""
        with self._lock:
            if self._started:
                return
            self._started = True
        worker = threading.Thread(
            target=_run_worker, args=(weakref.ref(self),), name="gatespec-embed", daemon=True
        )
        with _workers_lock:
            _workers.add(worker)
        worker.start()

    def _settle(self, index: SemanticIndex | None, status: EncoderStatus) -> None:
        self._semantic, self._status = index, status
        self._docs = []  # the texts are encoded (or never will be): free them
        self._done.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the semantic half is ready or given up (True), or `timeout` passes.
        Starts it if no query has yet."""
        if self._base is not None:
            return self._base[0].wait(timeout)
        if not self._done.is_set():
            self._start()
        return self._done.wait(timeout)

    @property
    def semantic(self) -> SemanticIndex | None:
        """The semantic index once it is ready, else None."""
        if self._base is None:
            return self._semantic
        base, keep = self._base
        if self._rows is None and base.semantic is not None:
            self._rows = base.semantic.rows(keep)
        return self._rows

    @property
    def hybrid(self) -> bool:
        return self.semantic is not None

    @property
    def status(self) -> str:
        """One line for `gatespec rank` and logs: which ranking serves queries, and why."""
        if self._base is not None:
            return self._base[0].status
        if self._status.on and self._semantic is None:
            if self._started:
                return "lexical ranking while the semantic index is built"
            return self._status.detail  # available; loads on the first query
        return self._status.detail

    # ------------------------------------------------------------------ querying

    def search_counted(
        self, query: str, k: int = 10, only: Collection[str] | None = None
    ) -> tuple[list[tuple[str, float]], int]:
        """The top `k` tools as (id, score), best first, and how many tools matched at all;
        with `only`, among the tools whose ids it holds (a namespace filter).

        The query is cut to browse.query_max_chars characters. Scores are rounded to 4
        decimals; ties are ordered by id (§2.5). The first query starts loading the semantic
        half."""
        if k <= 0 or not query or query.isspace():
            return [], 0
        semantic = self.semantic
        if semantic is None:
            source = self._base[0] if self._base is not None else self
            if not source._done.is_set():
                source._start()
        query = query[:QUERY_MAX_CHARS]
        cosine = recall = None
        if semantic is not None:
            query_v = semantic.encoder.encode([query], query=True)
            cosine = semantic.against(query_v)[0]
            recall = self._recall(query_v[0], semantic)
        allowed = None
        if only is not None:  # positions looked up per id of `only`: no pass over every tool
            positions = self._positions
            allowed = sorted(positions[i] for i in only if i in positions)
        vectors = semantic.vectors if semantic is not None else None
        params = fusion_for(self.params, semantic.encoder) if semantic is not None else self.params
        return rank_scores(
            self.lexical.scores(query),
            cosine,
            self.lexical.ids,
            params,
            k,
            allowed,
            vectors,
            recall,
        )

    def _recall(self, query_v: np.ndarray, semantic: SemanticIndex) -> np.ndarray | None:
        """The tool memory's addition to each tool's score (gatespec.ranking.memory), or None:
        switched off, not shipped, no tool of this catalog in it, or queries not encoded by
        the shipped model. Loaded, and this catalog's tools looked up, on the first query."""
        if not memory_applies(semantic.encoder):
            return None
        memory = load_memory()
        if memory is None:
            return None
        if self._memory_pairs is None:
            self._memory_pairs = memory.rows_for(self.docs)
        return memory.recall(query_v, len(self.docs), self._memory_pairs)


def _run_worker(ref: weakref.ref[Ranker]) -> None:
    try:
        _build(ref)
    finally:
        with _workers_lock:
            _workers.discard(threading.current_thread())


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
        if encoder is not None and not _stopping.is_set():
            index = build_index(
                texts, encoder, cache, alive=lambda: ref() is not None and not _stopping.is_set()
            )
    except Exception as exc:  # a broken model or cache must not stop the gateway
        log.warning("semantic ranking unavailable", exc_info=True)
        status = EncoderStatus(False, f"lexical ranking only: the semantic index failed ({exc})")
    ranker = ref()
    if ranker is not None:
        ranker._settle(index, status)


def rank_scores(
    lexical: np.ndarray,
    cosine: np.ndarray | None,
    ids: Sequence[str],
    params: FusionParams,
    k: int,
    allowed: Sequence[int] | None = None,
    vectors: np.ndarray | None = None,
    recall: np.ndarray | None = None,
) -> tuple[list[tuple[str, float]], int]:
    """Ranker.search_counted from a query's BM25 scores and cosine similarities, by position
    (bench/retrieval.py calls this directly to cross-validate `params` without re-encoding);
    with `allowed`, only those positions are ranked and counted. `vectors` (the tools' unit
    vectors, by position) are needed for params.feedback_weight to apply. `recall` (the tool
    memory's addition, gatespec.ranking.memory) is added last, so a tool it does not know
    scores as without it; which tools match stays decided by the query."""
    fused, candidates = fused_scores(lexical, cosine, params, allowed, vectors)
    return top_scores(fused, candidates, ids, k, recall)


def fused_scores(
    lexical: np.ndarray,
    cosine: np.ndarray | None,
    params: FusionParams,
    allowed: Sequence[int] | None = None,
    vectors: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Every tool's fused score (after the feedback) and the positions of the tools that
    match: rank_scores before the memory and the cut."""
    fused, matched = fuse(lexical, cosine, params)
    if allowed is not None:
        keep = matched[allowed]
        matched[:] = False
        matched[allowed] = keep
    candidates = matched.nonzero()[0]
    if len(candidates) and cosine is not None and vectors is not None:
        if params.feedback_weight > 0:
            moved = feedback(cosine, fused, candidates, vectors, params)
            fused, _ = fuse(lexical, moved, params)  # the query's own matches stay the matches
    return fused, candidates


def top_scores(
    fused: np.ndarray,
    candidates: np.ndarray,
    ids: Sequence[str],
    k: int,
    recall: np.ndarray | None = None,
) -> tuple[list[tuple[str, float]], int]:
    """The best `k` of `candidates` by `fused` (plus `recall`) as (id, score), and how many."""
    if not len(candidates):
        return [], 0
    if recall is not None:
        fused = fused + recall
    top = best(fused, candidates, ids, k)
    return [(ids[i], round(float(fused[i]), 4) + 0.0) for i in top], len(candidates)
