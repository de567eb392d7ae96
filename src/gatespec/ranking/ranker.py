"""The ranker behind tool_browse(query) and the search profile: BM25F fused with a sentence
embedding model (gatespec.ranking.fusion says how).

Built once per catalog snapshot. The lexical index is ready at once; the semantic index may
still be encoding a large catalog the first time (gatespec.ranking.semantic), and until it is
done, or when the model is unavailable, the ranking is lexical. :attr:`Ranker.status` says
which, in words.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from gatespec.ranking.bm25 import Bm25Index
from gatespec.ranking.documents import Document, embedding_text
from gatespec.ranking.encoder import EncoderStatus, load_encoder
from gatespec.ranking.fusion import (
    DEFAULT_PARAMS,
    FusionParams,
    clauses,
    demote_duplicates,
    fuse,
    interleave,
    ordered,
)
from gatespec.ranking.semantic import SemanticIndex, SemanticRows
from gatespec.ranking.vector_cache import VectorCache
from gatespec_surface.budgets import QUERY_MAX_CHARS

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Ranker", "rank_parts"]

# Each clause list is cut to this depth before interleaving: deeper ranks of one clause
# never outrank the first ranks of another.
_DEPTH = 50


class Ranker:
    """Hybrid ranking over one set of documents; thread-safe once built."""

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
        self.lexical = Bm25Index(docs)
        self.semantic: SemanticIndex | SemanticRows | None = None
        if not semantic:
            self.encoder_status = EncoderStatus(False, "lexical ranking only (semantic=False)")
            return
        encoder, self.encoder_status = load_encoder()
        if encoder is not None and docs:
            self.semantic = SemanticIndex(
                [embedding_text(d) for d in docs],
                encoder,
                cache if cache is not None else VectorCache(),
                background=background,
            )

    def __len__(self) -> int:
        return len(self.lexical)

    def restricted(self, ids: Collection[str]) -> Ranker:
        """A ranker over the documents in `ids` only, ranking exactly as one built from them
        would (its own BM25 statistics, the same embeddings), without encoding anything again:
        what an identity that may see only those tools is ranked by (AM-ACCESS-NO-LEAK)."""
        keep = [i for i, doc in enumerate(self.docs) if doc.id in ids]
        out = Ranker([self.docs[i] for i in keep], semantic=False, params=self.params)
        out.encoder_status = self.encoder_status
        if self.semantic is not None:
            out.semantic = SemanticRows(self.semantic, keep)
        return out

    @property
    def status(self) -> str:
        """One line for start-up and `gatespec catalog`: which ranking serves queries."""
        if self.semantic is not None and not self.semantic.ready:
            return "lexical ranking while the semantic index is built"
        return self.encoder_status.detail

    @property
    def hybrid(self) -> bool:
        return self.semantic is not None and self.semantic.ready

    def search_counted(
        self, query: str, k: int = 10, only: Collection[str] | None = None
    ) -> tuple[list[tuple[str, float]], int]:
        """The top `k` tools as (id, score), best first, and how many tools matched at all;
        with `only`, among the tools whose ids it holds (a namespace filter).

        The query is cut to browse.query_max_chars characters. Scores are rounded to 4
        decimals and strictly decrease down the list, so ordering by score then id (§2.5)
        keeps this order."""
        if k <= 0 or not query or query.isspace():
            return [], 0
        allowed = None
        if only is not None:
            allowed = {i for i, doc_id in enumerate(self.lexical.ids) if doc_id in only}
        query = query[:QUERY_MAX_CHARS]
        parts = self.parts(query)
        semantic = self.semantic if self.hybrid else None
        sims = semantic.similarities(parts) if semantic is not None else None
        return rank_parts(
            [self.lexical.scores(part) for part in parts],
            sims,
            self.lexical.ids,
            semantic.vectors if semantic is not None else None,
            self.params,
            k,
            allowed,
        )

    def parts(self, query: str) -> list[str]:
        """What is ranked for a query: the query cut to browse.query_max_chars, then its
        clauses when it has several."""
        query = query[:QUERY_MAX_CHARS]
        if not self.params.split_clauses:
            return [query]
        return [query, *clauses(query, self.params.max_clauses)]


def rank_parts(
    lexical: Sequence[dict[int, float]],
    sims: np.ndarray | None,
    ids: Sequence[str],
    vectors: np.ndarray | None,
    params: FusionParams,
    k: int,
    allowed: Collection[int] | None = None,
) -> tuple[list[tuple[str, float]], int]:
    """Ranker.search_counted from each part's BM25 scores and cosine similarities (bench/
    retrieval.py calls this directly to cross-validate `params` without re-encoding); with
    `allowed`, only those positions are ranked and counted."""
    scored = [
        fuse(scores, sims[n] if sims is not None else None, params)
        for n, scores in enumerate(lexical)
    ]
    if allowed is not None:
        scored = [{i: s for i, s in part.items() if i in allowed} for part in scored]
    matched = set().union(*scored)
    if not matched:
        return [], 0
    lists = [ordered(s, ids, _DEPTH) for s in scored]
    order = interleave(lists) if len(lists) > 1 else lists[0]
    order = demote_duplicates(order, vectors, params.duplicate_similarity)[:k]
    return _monotone(order, scored[0], ids), len(matched)


def _monotone(
    order: Sequence[int], scores: dict[int, float], ids: Sequence[str]
) -> list[tuple[str, float]]:
    """(id, score) down `order`: each the full query's fused score, lowered where needed so
    that sorting by score descending then id ascending (§2.5) gives `order` back (a clause's
    tool interleaved high can score lower on the whole query than tools below it)."""
    out: list[tuple[str, float]] = []
    for i in order:
        score = round(scores.get(i, 0.0), 4)
        if out:
            above_id, above = out[-1]
            if score > above or (score == above and ids[i] < above_id):
                score = above if ids[i] > above_id else round(above - 1e-4, 4)
        out.append((ids[i], score + 0.0))
    return out
