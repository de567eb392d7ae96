"""BM25F over tool name, namespace, description and input-schema property names and descriptions.

Build once per catalog snapshot, then ``search`` many times. The index is an inverted index
(term -> postings) whose posting weights are fully precomputed at build time (idf, per-field
length normalisation and tf saturation), so a query only touches the postings of its own
terms. The postings live in two flat numpy arrays (document positions and weights, one slice
per term): a query adds each of its terms' slices into one dense score vector, with no Python
loop over documents, and the index of a large catalog is a few compact arrays rather than
millions of Python objects. numpy is imported on first use: a Ranker builds its index only
when it ranks its first query.
"""

from __future__ import annotations

import gc
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING

from gatespec.ranking.documents import Document
from gatespec.ranking.text import exact_name_keys, name_key, tokenize

if TYPE_CHECKING:
    import numpy as np

__all__ = ["DEFAULT_FIELD_WEIGHTS", "FIELDS", "Bm25Index", "best"]


# Searchable fields. "exact" is the whole tool name as a single term, matched only by a query
# word that spells the full name ("create_issue", "github/create_issue").
FIELDS: tuple[str, ...] = ("name", "namespace", "description", "fields", "field_text", "exact")

# Chosen on bench/retrieval.py's dev sets (field_text, the property descriptions: issue 13);
# see bench/results/retrieval.md.
DEFAULT_FIELD_WEIGHTS: Mapping[str, float] = MappingProxyType(
    {
        "name": 2.0,
        "namespace": 1.0,
        "description": 1.0,
        "fields": 0.5,
        "field_text": 0.3,
        "exact": 4.0,
    }
)


def _counts(terms: list[str]) -> dict[str, int]:
    counts = dict.fromkeys(terms, 1)
    return counts if len(counts) == len(terms) else Counter(terms)


class _TermNumbers(dict[str, int]):
    """term -> its number, numbering a term on first sight (0, 1, 2, ...)."""

    def __missing__(self, term: str) -> int:
        number = self[term] = len(self)
        return number


class Bm25Index:
    """BM25F over the fields of :class:`Document`.

    For a term ``t`` and document ``d`` the field-weighted, length-normalised frequency is
    ``tf~ = sum_f w_f * tf_f / (1 - b + b * len_f / avglen_f)`` and the document's score is
    ``sum_t idf(t) * tf~ * (k1 + 1) / (k1 + tf~)`` with ``idf = ln(1 + (N - df + 0.5) /
    (df + 0.5))``. A term repeated in the query counts once. Scores are rounded to 4
    decimals; equal scores are ordered by document id.

    ``field_weights`` overrides some of :data:`DEFAULT_FIELD_WEIGHTS` (weight 0 drops a
    field); ``stemming=False`` turns off stemming (:func:`gatespec.ranking.text.tokenize`). The index is immutable after construction and
    ``search`` is safe to call from several threads.
    """

    __slots__ = ("_ids", "_slices", "_docs", "_weights", "_stemming", "k1", "b", "field_weights")

    def __init__(
        self,
        docs: Sequence[Document],
        *,
        k1: float = 1.2,
        b: float = 0.75,
        field_weights: Mapping[str, float] | None = None,
        stemming: bool = True,
    ) -> None:
        if k1 < 0:
            raise ValueError("k1 must be >= 0")
        if not 0.0 <= b <= 1.0:
            raise ValueError("b must be in [0, 1]")
        weights = dict(DEFAULT_FIELD_WEIGHTS)
        if field_weights is not None:
            unknown = [f for f in field_weights if f not in weights]
            if unknown:
                raise ValueError(f"unknown field(s) {unknown}; expected some of {FIELDS}")
            weights.update({f: float(w) for f, w in field_weights.items()})
        if any(w < 0 for w in weights.values()):
            raise ValueError("field weights must be >= 0")
        self.k1 = float(k1)
        self.b = float(b)
        self.field_weights: Mapping[str, float] = MappingProxyType(weights)
        self._stemming = stemming

        docs = tuple(docs)  # iterated once per field: accept any iterable
        ids: list[str] = []
        seen: set[str] = set()
        for doc in docs:
            if doc.id in seen:
                raise ValueError(f"duplicate document id {doc.id!r}")
            seen.add(doc.id)
            ids.append(doc.id)
        self._ids: tuple[str, ...] = tuple(ids)

        gc_was_enabled = gc.isenabled()
        gc.disable()  # the build allocates many small, acyclic objects: skip GC passes
        try:
            self._slices, self._docs, self._weights = self._build(docs, weights)
        finally:
            if gc_was_enabled:
                gc.enable()

    def _build(
        self, docs: Sequence[Document], weights: Mapping[str, float]
    ) -> tuple[dict[str, tuple[int, int]], np.ndarray | None, np.ndarray | None]:
        n_docs = len(docs)
        # Pass 1, per field: each document's term counts and its BM25F scale
        # w_f / (1 - b + b * len / avglen). Description first: it is the largest field.
        fields: list[tuple[list[dict[str, int]], list[float]]] = []
        for f in ("description", "name", "namespace", "fields", "field_text", "exact"):
            w = weights[f]
            if w <= 0:
                continue
            counts, lengths = self._field_counts(docs, f)
            avg = (sum(lengths) / n_docs) if n_docs else 0.0
            b = 0.0 if f == "exact" or avg <= 0 else self.b
            # An empty field has no terms to scale (and would divide by zero when b = 1).
            scales = [w / (1.0 - b + b * n / avg) if n else 0.0 for n in lengths]
            fields.append((counts, scales))

        # Pass 2: per document, the field-weighted normalised tf (tf~) of each of its terms,
        # appended to three flat lists (term number, document, tf~): C-level extends, no
        # per-term lists. Documents are visited in order.
        numbers = _TermNumbers()
        term_of: list[int] = []
        doc_of: list[int] = []
        tfw_of: list[float] = []
        if fields:
            (first_counts, first_scales), rest = fields[0], fields[1:]
            for i in range(n_docs):
                scale = first_scales[i]
                tfw = {term: tf * scale for term, tf in first_counts[i].items()}
                for counts, scales in rest:
                    scale = scales[i]
                    for term, tf in counts[i].items():
                        tfw[term] = tfw.get(term, 0.0) + tf * scale
                term_of += map(numbers.__getitem__, tfw)
                tfw_of += tfw.values()
                doc_of += [i] * len(tfw)
        if not numbers:  # no terms (the gateway's empty start-up catalog): no arrays, no numpy
            return {}, None, None

        # Pass 3: group the postings by term (a stable sort keeps each term's documents in
        # order) and fold idf and tf saturation into one precomputed weight per posting:
        # term -> (start, stop) in the two flat arrays.
        import numpy as np

        k1 = self.k1
        terms = np.array(term_of, dtype=np.int32)
        order = np.argsort(terms, kind="stable")
        df = np.bincount(terms, minlength=len(numbers)).tolist()
        idf = np.array(  # math.log per term, as ever: scores do not move by a float ulp
            [math.log(1.0 + (n_docs - d + 0.5) / (d + 0.5)) * (k1 + 1.0) for d in df]
        )
        tfw_sorted = np.array(tfw_of, dtype=np.float64)[order]
        posting_weights = idf[terms[order]] * tfw_sorted / (k1 + tfw_sorted)
        postings = np.array(doc_of, dtype=np.int32)[order]
        stops = np.cumsum(df).tolist()
        slices = {term: (stops[n] - df[n], stops[n]) for term, n in numbers.items()}
        return slices, postings, posting_weights

    def _field_counts(
        self, docs: Sequence[Document], field: str
    ) -> tuple[list[dict[str, int]], list[int]]:
        """Term counts and term totals of one field, per document."""
        stemming = self._stemming
        if field == "exact":
            keys = [name_key(d.name) for d in docs]
            return [{k: 1} if k else {} for k in keys], [1 if k else 0 for k in keys]
        if field in ("description", "field_text"):  # long text: no uniqueness check
            terms = [tokenize(getattr(d, field), stemming=stemming) for d in docs]
            return [Counter(ts) for ts in terms], [len(ts) for ts in terms]
        if field == "name":
            terms = [tokenize(d.name, stemming=stemming) for d in docs]
        else:
            # Namespaces and property-name lists repeat across tools: do each distinct one
            # once and share the (read-only) count dicts.
            memo: dict[object, tuple[dict[str, int], int]] = {}
            counts: list[dict[str, int]] = []
            lengths: list[int] = []
            for d in docs:
                value: str | tuple[str, ...] = (
                    d.namespace if field == "namespace" else tuple(d.fields)
                )
                hit = memo.get(value)
                if hit is None:
                    if isinstance(value, str):
                        ts = tokenize(value, stemming=stemming)
                    else:
                        ts = [t for prop in value for t in tokenize(prop, stemming=stemming)]
                    hit = memo[value] = (_counts(ts), len(ts))
                counts.append(hit[0])
                lengths.append(hit[1])
            return counts, lengths
        return [_counts(ts) for ts in terms], [len(ts) for ts in terms]

    def __len__(self) -> int:
        return len(self._ids)

    def query_terms(self, query: str) -> list[str]:
        """The distinct index terms a query is matched on, in query order."""
        terms = tokenize(query, stemming=self._stemming)
        if self.field_weights["exact"] > 0:
            terms.extend(exact_name_keys(query))
        return list(dict.fromkeys(terms))

    def search(self, query: str, k: int = 10) -> list[tuple[str, float]]:
        """Top ``k`` documents as ``(id, score)``, best first, ties by id ascending.

        Only documents sharing at least one term with the query are returned, so there may
        be fewer than ``k``. An empty or whitespace-only query (or ``k <= 0``) gives ``[]``.
        """
        return self.search_counted(query, k)[0]

    def scores(self, query: str) -> np.ndarray:
        """Unrounded score of every document by position (float64; 0 where no query term
        occurs: a document that shares a term always scores above 0)."""
        import numpy as np

        out = np.zeros(len(self._ids), dtype=np.float64)
        docs, weights = self._docs, self._weights
        if docs is None or weights is None:
            return out
        for term in self.query_terms(query):
            span = self._slices.get(term)
            if span is not None:
                # A term lists each document once, so this fancy-indexed add is exact.
                out[docs[span[0] : span[1]]] += weights[span[0] : span[1]]
        return out

    @property
    def ids(self) -> tuple[str, ...]:
        """Document ids by position (the positions of :meth:`scores`)."""
        return self._ids

    def search_counted(self, query: str, k: int = 10) -> tuple[list[tuple[str, float]], int]:
        """``search`` plus how many documents matched at all (for "k of N" answers), without
        ranking the ones past k."""
        if k <= 0 or not query or query.isspace() or not self._slices:
            return [], 0
        scores = self.scores(query)
        matched = (scores > 0).nonzero()[0]
        if not len(matched):
            return [], 0
        top = best(scores, matched, self._ids, k)
        return [(self._ids[i], round(float(scores[i]), 4) + 0.0) for i in top], len(matched)


def best(scores: np.ndarray, candidates: np.ndarray, ids: Sequence[str], k: int) -> list[int]:
    """The best `k` of `candidates` (positions into `scores`): score rounded to 4 decimals
    descending, then id ascending (§2.5's order of the cards a query answers with).

    argpartition finds the k-th best score without sorting the rest; only the candidates
    that can reach it after rounding (a handful, plus any tied at the cut) are sorted in
    Python, with Python's own rounding, so the order is exactly that of the reported scores."""
    values = scores[candidates]
    if len(candidates) > k:
        kth = values[values.argpartition(len(values) - k)[len(values) - k]]
        keep = values >= kth - 1e-4  # the margin keeps ties at the cut (after rounding)
        candidates, values = candidates[keep], values[keep]
    ranked = sorted(
        zip(candidates.tolist(), values.tolist(), strict=True),
        key=lambda pair: (-round(pair[1], 4), ids[pair[0]]),
    )
    return [i for i, _ in ranked[:k]]
