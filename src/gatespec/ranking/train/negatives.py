"""Hard negatives from BM25: the tools the lexical ranker puts highest that are not gold.

These are what the fused ranker confuses with the right tool (a shared word, a sibling
tool of the same server), so the contrastive loss sees them beside the gold tools instead of
only random ones, which are easy to tell apart.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from gatespec.ranking.bm25 import Bm25Index

__all__ = ["candidates", "hard_negatives"]


def hard_negatives(index: Bm25Index, query: str, gold: Sequence[str], n: int) -> list[int]:
    """Positions (in `index`) of the `n` best BM25 matches of `query` outside `gold`."""
    gold_set = set(gold)
    out = []
    for doc_id, _score in index.search(query, n + len(gold_set)):
        if doc_id not in gold_set:
            out.append(doc_id)
        if len(out) == n:
            break
    pos = {d: i for i, d in enumerate(index.ids)}
    return [pos[d] for d in out]


def candidates(
    index: Bm25Index,
    query: str,
    gold: Sequence[str],
    hard: int,
    easy: int,
    rng: random.Random,
) -> tuple[list[int], list[int]]:
    """(positions of the gold tools, positions of the negatives): `hard` BM25 negatives then
    up to `easy` random ones, none of them gold and none twice."""
    pos = {d: i for i, d in enumerate(index.ids)}
    gold_pos = [pos[g] for g in gold if g in pos]
    negatives = hard_negatives(index, query, gold, hard)
    taken = set(gold_pos) | set(negatives)
    pool = [i for i in range(len(index.ids)) if i not in taken]
    negatives += rng.sample(pool, min(easy, len(pool)))
    return gold_pos, negatives
