"""Description truncation (§2.4 under AM-TRUNC-CHAR-BOUNDARY, budgets.yaml `truncation`).

1. Collapse white space, line breaks included, to single spaces: a card description is one line.
2. Within budget: emit verbatim.
3. Else: the longest prefix ending at a sentence terminator whose own token count fits.
4. Else: the longest prefix of whole characters with at most budget - 1 tokens, plus the
   ellipsis; while that still exceeds the budget, the prefix loses one character at a time.

Deterministic and pure: the same text and budget always give the same string.

Cost. Counting every prefix would be quadratic, so two facts about BPE bound the search:
a prefix far past the point where the text's encoding already holds budget + _SLACK tokens
cannot fit (pre-tokenisation of a prefix differs from the whole text's only around the cut),
and a prefix's count can dip as it grows only inside the word at the cut (_DIP_WINDOW
characters). The tests check both against a brute-force reference that counts every prefix.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from gatespec.tokens import count_tokens, encode, encoder
from gatespec_surface.budgets import (
    COLLAPSE_WHITESPACE,
    ELLIPSIS,
    SENTENCE_TERMINATORS,
    TERMINATORS_NEEDING_SPACE,
)
from gatespec_surface.validators import LINE_BREAKS

__all__ = ["PROBE_CHARS_PER_TOKEN", "collapse_whitespace", "truncate_description"]

_SLACK = 8  # tokens past the budget still searched (see the module docstring)
_DIP_WINDOW = 8  # characters past a binary-search answer still searched
# More characters per token than prose averages (~4): a probe this long per token of budget
# almost always holds the tokens the search needs; when it does not, the whole text is encoded.
PROBE_CHARS_PER_TOKEN = 8
_TERMINATORS = frozenset(SENTENCE_TERMINATORS)
# A sentence ends at one terminator character (_ends_sentence looks at one character).
_TERMINATOR_CHAR = re.compile("|".join(re.escape(t) for t in sorted(_TERMINATORS) if len(t) == 1))
_NEED_SPACE = frozenset(TERMINATORS_NEEDING_SPACE)


def collapse_whitespace(text: str) -> str:
    """One line: runs of white space (U+2028/U+2029 included) become one space, ends trimmed."""
    if COLLAPSE_WHITESPACE:
        return " ".join(text.split())
    for brk in LINE_BREAKS:  # the card stays single-line even without collapsing
        text = text.replace(brk, " ")
    return text


def truncate_description(text: str, budget_tokens: int) -> str:
    """`text` as one line of at most `budget_tokens` tokens (§2.4). A budget below one token
    leaves nothing to say, so the result is empty."""
    text = collapse_whitespace(text)
    if budget_tokens <= 0 or not text:
        return ""
    # Encode a probe first: a long description needs only its first budget + _SLACK tokens.
    probe = text[: PROBE_CHARS_PER_TOKEN * (budget_tokens + _SLACK)]
    tokens = encode(probe)
    whole = len(probe) == len(text)
    if not whole and len(tokens) <= budget_tokens + _SLACK:
        tokens = encode(text)  # unusually long tokens
        whole = True
    if whole and len(tokens) <= budget_tokens:
        return text
    raw = text.encode("utf-8")

    def horizon(n_tokens: int) -> int:
        """Characters covered by the first n tokens of the text (a character split between
        tokens counts as not covered)."""
        covered = len(encoder().decode_bytes(tokens[:n_tokens]))
        return len(raw[:covered].decode("utf-8", errors="ignore"))

    sentence = _sentence_prefix(text, budget_tokens, horizon(budget_tokens + _SLACK))
    if sentence is not None:
        return sentence
    return _hard_cut(text, budget_tokens, horizon(budget_tokens - 1 + _SLACK))


def _sentence_prefix(text: str, budget: int, limit: int) -> str | None:
    """The longest prefix ending at a terminator that fits, or None."""
    # Only the positions just after a terminator character can end a sentence: find those
    # with one regex scan rather than testing every character in Python.
    stop = min(limit + 1, len(text))
    candidates = [m.end() for m in _TERMINATOR_CHAR.finditer(text, 0, stop)]
    for end in reversed(candidates):
        if _ends_sentence(text, end):
            prefix = text[:end]
            if count_tokens(prefix) <= budget:
                return prefix
    return None


def _ends_sentence(text: str, end: int) -> bool:
    """Does text[:end] end at a sentence end (AM-SENTENCE-ENDS)?"""
    ch = text[end - 1]
    if ch not in _TERMINATORS:
        return False
    return ch not in _NEED_SPACE or end == len(text) or text[end].isspace()


def _hard_cut(text: str, budget: int, limit: int) -> str:
    """The longest character prefix with at most budget - 1 tokens, plus the ellipsis."""
    keep = _longest_prefix(lambda k: count_tokens(text[:k]) <= budget - 1, min(limit, len(text)))
    while True:  # the ellipsis may not merge as hoped: shrink until the result fits
        result = text[:keep] + ELLIPSIS
        if count_tokens(result) <= budget:
            return result
        if keep == 0:
            return ""
        keep -= 1


def _longest_prefix(fits: Callable[[int], bool], hi: int) -> int:
    """The largest k in [0, hi] with fits(k), given fits(0) and counts that grow with k
    except for dips inside one word."""
    if fits(hi):
        return hi
    lo, up = 0, hi  # fits(lo) and not fits(up)
    while up - lo > 1:
        mid = (lo + up) // 2
        if fits(mid):
            lo = mid
        else:
            up = mid
    best = lo
    for k in range(lo + 2, min(hi, lo + _DIP_WINDOW) + 1):
        if fits(k):
            best = k
    return best
