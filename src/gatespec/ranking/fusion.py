"""Fusing the lexical and the semantic ranking, and spreading a long task over its needs.

Array functions over every tool's scores at once (numpy; no Python loop over the tools),
shared by the ranker and bench/retrieval.py's cross-validation (so the parameters chosen there
are the ones this code runs with).

* :func:`fuse`: ``w * bm25 / max(bm25) + (1 - w) * max(cosine, 0)`` per tool. A tool is a
  match when it shares a term with the query or its cosine reaches ``min_similarity`` (so a
  nonsense query still matches nothing). Linear fusion of max-normalised BM25 beat reciprocal
  rank fusion on every dev set (bench/results/retrieval.md).
* :func:`clauses`: a long task split into its sentences and "then"-steps; each clause is ranked
  on its own and the lists are interleaved (:func:`interleave`), so every step of a task gets
  a place near the top instead of ten variants of its loudest step. Only tasks of at least
  ``FusionParams.split_min_clauses`` clauses are split.
* :func:`demote_duplicates`: a tool whose embedding is almost identical to one ranked above it
  (the same tool served by two servers) moves below the distinct ones.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "DEFAULT_PARAMS",
    "FusionParams",
    "clauses",
    "demote_duplicates",
    "fuse",
    "interleave",
]


@dataclass(frozen=True)
class FusionParams:
    """How the two rankings combine. Defaults chosen by cross-validation on the dev sets
    (bench/retrieval.py; the folds and their spread are in bench/results/retrieval.md)."""

    lexical_weight: float = 0.2  # w above; 1 - w goes to the cosine similarity
    min_similarity: float = 0.3  # a tool with no shared term matches from this cosine on
    duplicate_similarity: float = 0.95  # at or above this cosine to a higher tool: demoted
    split_min_clauses: int = 0  # split a task of at least this many clauses; 0: never
    max_clauses: int = 6  # bounds the work of one pasted task


DEFAULT_PARAMS = FusionParams()

# Sentence ends (not the dots of "a.pdf" or "www.x.com"), line breaks, and step words.
_CLAUSE_SPLIT = re.compile(
    r"(?<=[.!?;。！？；])\s+|\s*\n+\s*|,?\s+(?:and then|then|after that|afterwards|finally)\s+",
    re.IGNORECASE,
)
_MIN_CLAUSE_CHARS = 12


def clauses(query: str, limit: int) -> list[str]:
    """The clauses of a multi-step query (at most `limit`), or [] when it has only one."""
    parts = [p.strip(" ,.") for p in _CLAUSE_SPLIT.split(query) if p]
    parts = [p for p in parts if len(p) >= _MIN_CLAUSE_CHARS]
    return parts[:limit] if len(parts) > 1 else []


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


def interleave(lists: Sequence[Sequence[int]]) -> list[int]:
    """Round-robin over ranked lists, each position once: the first of every list, then the
    second of every list, and so on."""
    out: list[int] = []
    seen: set[int] = set()
    for depth in range(max((len(x) for x in lists), default=0)):
        for ranked in lists:
            if depth < len(ranked) and ranked[depth] not in seen:
                seen.add(ranked[depth])
                out.append(ranked[depth])
    return out


def demote_duplicates(
    order: Sequence[int], vectors: np.ndarray | None, threshold: float, k: int
) -> list[int]:
    """The first `k` of `order` once every near-duplicate of a tool above it is moved after
    the distinct tools. Stops reading `order` once it has `k` distinct tools."""
    if vectors is None or threshold > 1.0 or len(order) < 2:
        return list(order[:k])
    rows = vectors[list(order)]
    kept: list[int] = []  # positions in `order`
    later: list[int] = []
    for pos in range(len(order)):
        if kept and float((rows[kept] @ rows[pos]).max()) >= threshold:
            later.append(order[pos])
        else:
            kept.append(pos)
            if len(kept) == k:
                break
    return ([order[p] for p in kept] + later)[:k]
