"""Fusing the lexical and the semantic ranking.

``w * bm25 / max(bm25) + (1 - w) * max(cosine, 0)`` per tool, over every tool at once (numpy;
no Python loop over the tools). A tool is a match when it shares a term with the query or its
cosine reaches ``min_similarity`` (so a nonsense query still matches nothing). Linear fusion
of max-normalised BM25 beat reciprocal rank fusion on every dev set.

Shared by the ranker and bench/retrieval.py's cross-validation, so the parameters chosen there
are the ones this code runs with. Splitting a long task into clauses (ranked one by one and
interleaved) and demoting near-duplicate tools were tried and dropped: neither helped on
held-out queries of any set, and both cost BFCL hit@5 (bench/results/retrieval_ablation.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

__all__ = ["DEFAULT_PARAMS", "FusionParams", "fuse"]


@dataclass(frozen=True)
class FusionParams:
    """How the two rankings combine. The weight was chosen by cross-validation on the dev sets
    (bench/retrieval.py; every fold chose 0.2)."""

    lexical_weight: float = 0.2  # w above; 1 - w goes to the cosine similarity
    min_similarity: float = 0.3  # a tool with no shared term matches from this cosine on


DEFAULT_PARAMS = FusionParams()


def fuse(
    lexical: np.ndarray, cosine: np.ndarray | None, params: FusionParams
) -> tuple[np.ndarray, np.ndarray]:
    """(fused score of every tool, boolean mask of the tools that match), by position.

    `lexical` is every tool's BM25 score (0 where no term is shared), `cosine` its cosine
    similarity to the query, or None for the lexical ranking alone (then the BM25 order, on
    the same 0..1 scale)."""
    import numpy as np

    shares = lexical > 0
    top = float(lexical.max(initial=0.0))
    lex = lexical / top if top > 0 else lexical
    if cosine is None:
        return lex, shares
    w = params.lexical_weight
    fused = w * lex + (1.0 - w) * np.maximum(cosine, 0.0)
    return fused, shares | (cosine >= params.min_similarity)
