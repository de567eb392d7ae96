"""A small deterministic lexical router for ``tool_browse(query=...)``.

Seed 000 §3.1 routes queries "through Router.route" without defining it; this
is the implementation's own scorer (README "Readings"): no ML, no randomness.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_WORD = re.compile(r"[A-Za-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def terms(text: str) -> set[str]:
    """Lower-case word terms; camelCase and snake_case split; a plural ``s``
    is dropped from words longer than three letters."""
    out: set[str] = set()
    for word in _WORD.findall(_CAMEL.sub(" ", text or "")):
        w = word.lower()
        if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.add(w)
    return out


def score(query: str, name_text: Iterable[str], body_text: Iterable[str]) -> float:
    """Fraction of distinct query terms found, a term in the tool's name /
    namespace / id counting 1.0 and one only in description / tags 0.5.
    Rounded to 4 decimals so equal inputs give byte-identical scores."""
    q = terms(query)
    if not q:
        return 0.0
    name_terms: set[str] = set()
    for t in name_text:
        name_terms |= terms(t)
    body_terms: set[str] = set()
    for t in body_text:
        body_terms |= terms(t)
    total = 0.0
    for t in q:
        if t in name_terms:
            total += 1.0
        elif t in body_terms:
            total += 0.5
    return round(total / len(q), 4)
