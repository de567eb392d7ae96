"""Query decomposition: a multi-step task ("find the parking near X, then suggest places
nearby and export a PDF") wants several tools, and one embedding of the whole task drifts to
whichever step dominates it. Each part of the task is ranked on its own and fused with the
whole-query ranking (gatespec.ranking.fusion.fuse_parts), so a step's tool can reach the top
five even when the whole task is worded mostly about another step.

Splitting is plain text rules (no model): sentences, and at the finer level clauses joined by
a comma, "and" or "then". A piece shorter than MIN_WORDS words rejoins its neighbour, so
"black and white" or "Berlin, Germany" stay whole.
"""

from __future__ import annotations

import re

__all__ = ["LEVELS", "MIN_WORDS", "parts"]

LEVELS = ("none", "sentences", "clauses")
MIN_WORDS = 3  # a shorter piece is not a step of a task
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])|\n+")
_CLAUSE = re.compile(r",\s+(?:and\s+)?(?:then\s+)?|\s+(?:and\s+)?then\s+|\s+and\s+", re.IGNORECASE)
# A CJK character counts as a word (those scripts put no spaces between words).
_WORD = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]|[^\W\u3040-\u30ff\u3400-\u9fff]+")


def _pieces(text: str, level: str) -> list[str]:
    out = [s.strip() for s in _SENTENCE.split(text)]
    if level == "clauses":
        out = [c.strip() for s in out for c in _CLAUSE.split(s)]
    return [p for p in out if p]


def parts(query: str, level: str, min_parts: int = 2) -> list[str]:
    """The parts of `query` at `level` ("none": no parts), or [] when there are fewer than
    `min_parts` (a one-step query is ranked whole only)."""
    if level not in LEVELS:
        raise ValueError(f"unknown split level {level!r}; expected one of {LEVELS}")
    if level == "none":
        return []
    merged: list[str] = []
    short = ""  # a piece too short to stand alone, waiting for the next
    for piece in _pieces(query, level):
        piece = f"{short} {piece}".strip() if short else piece
        if len(_WORD.findall(piece)) < MIN_WORDS:
            short = piece
            continue
        merged.append(piece)
        short = ""
    if short:
        if merged:
            merged[-1] = f"{merged[-1]} {short}"
        else:
            merged.append(short)
    return merged if len(merged) >= max(min_parts, 2) else []
