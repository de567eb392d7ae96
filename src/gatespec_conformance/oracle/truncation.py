"""Description truncation by brute force, read from seed 000 §2.4 and its amendments:

1. the description is one line: white space runs collapse to one space (budgets.yaml
   COLLAPSE_WHITESPACE);
2. within budget: verbatim;
3. else the longest prefix ending at a sentence end that fits (AM-SENTENCE-ENDS: ".", "!", "?"
   before white space or the end; the full-width terminators anywhere);
4. else the longest prefix of whole characters with at most budget - 1 tokens, then the
   ellipsis; while that exceeds the budget, one character fewer (AM-TRUNC-CHAR-BOUNDARY).

Every prefix is counted: slow and obviously right, which is what an oracle should be.
"""

from __future__ import annotations

from gatespec_conformance.tokens import count_tokens
from gatespec_surface.budgets import (
    COLLAPSE_WHITESPACE,
    ELLIPSIS,
    SENTENCE_TERMINATORS,
    TERMINATORS_NEEDING_SPACE,
)

__all__ = ["one_line", "sentence_ends", "truncate"]


def one_line(text: str) -> str:
    return " ".join(text.split()) if COLLAPSE_WHITESPACE else text


def sentence_ends(text: str) -> list[int]:
    """Lengths of the prefixes of `text` that end a sentence (AM-SENTENCE-ENDS)."""
    out = []
    for i, ch in enumerate(text, start=1):
        if ch not in SENTENCE_TERMINATORS:
            continue
        if ch not in TERMINATORS_NEEDING_SPACE or i == len(text) or text[i].isspace():
            out.append(i)
    return out


def truncate(text: str, budget: int) -> str:
    text = one_line(text)
    if budget <= 0 or not text:
        return ""
    if count_tokens(text) <= budget:
        return text
    fitting = [i for i in sentence_ends(text) if count_tokens(text[:i]) <= budget]
    if fitting:
        return text[: max(fitting)]
    keep = max(k for k in range(len(text) + 1) if count_tokens(text[:k]) <= budget - 1)
    while keep >= 0:
        cut = text[:keep] + ELLIPSIS
        if count_tokens(cut) <= budget:
            return cut
        keep -= 1
    return ""
