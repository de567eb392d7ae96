"""Whether a description a client received is its upstream description truncated per §2.4, at
either level. The budget is the implementation's (a card line leaves it less room than the
80-token cap): the judge only asks that nothing the rules prefer would have fit in as many
tokens as the implementation used.

* ``spec``: sentence ends per AM-SENTENCE-ENDS ("." "!" "?" before white space or the end,
  full-width terminators anywhere), a hard cut at a character boundary (AM-TRUNC-CHAR-BOUNDARY).
* ``seed``: §2.4 as written: any ".", "!" or "?" ends a candidate prefix.
"""

from __future__ import annotations

from typing import Any, Final

from gatespec_conformance.oracle.truncation import one_line, sentence_ends
from gatespec_conformance.rules import SEED, SPEC, Finding, Rule
from gatespec_conformance.tokens import count_tokens
from gatespec_surface.budgets import BANNED_STRINGIFIED, ELLIPSIS, TERMINATORS_NEEDING_SPACE
from gatespec_surface.validators import LINE_BREAKS

__all__ = ["truncation_findings"]

_ONE_LINE: Final = Rule("the description holds a line break", ("CARD-DESCRIPTION-SINGLE-LINE",))
_NOT_TEXT: Final = Rule("the description is not text", ("CARD-DESCRIPTION-SINGLE-LINE",))
_NOT_A_CUT: Final = Rule(
    "neither verbatim, a sentence prefix, nor a hard cut ending in the ellipsis",
    ("TRUNC-VERBATIM-WITHIN-BUDGET", "TRUNC-SENTENCE-PREFIX", "TRUNC-HARD-CUT-ELLIPSIS"),
)
_SENTENCE: Final = {
    "spec": Rule(
        "a longer sentence prefix would have fit",
        ("TRUNC-SENTENCE-PREFIX",),
        SPEC,
        amended_by=("AM-SENTENCE-ENDS",),
    ),
    "seed": Rule("a longer sentence prefix would have fit", ("TRUNC-SENTENCE-PREFIX",), SEED),
}
_HARD_CUT: Final = {
    "spec": Rule(
        "hard cut although a sentence prefix fits",
        ("TRUNC-SENTENCE-PREFIX", "TRUNC-HARD-CUT-ELLIPSIS"),
        SPEC,
        amended_by=("AM-SENTENCE-ENDS",),
    ),
    "seed": Rule(
        "hard cut although a sentence prefix fits",
        ("TRUNC-SENTENCE-PREFIX", "TRUNC-HARD-CUT-ELLIPSIS"),
        SEED,
    ),
}


_BANNED_CUT: Final = Rule(
    "not cut before the stringified banned field",
    ("CARD-NO-SCHEMAS", "TRUNC-SENTENCE-PREFIX"),
    SPEC,
    amended_by=("AM-BANNED-IN-DESCRIPTION",),
)


def _banned_at(text: str) -> int | None:
    starts = [m.start() for p in BANNED_STRINGIFIED if (m := p.search(text)) is not None]
    return min(starts) if starts else None


def _seed_ends(text: str) -> list[int]:
    """§2.4 as written: a prefix ending at ".", "!" or "?" anywhere."""
    return [i for i, ch in enumerate(text, start=1) if ch in TERMINATORS_NEEDING_SPACE]


_SEED_CUT: Final = Rule(
    "cut as §2.4 is written, where the amended rules cut elsewhere",
    ("TRUNC-SENTENCE-PREFIX", "TRUNC-HARD-CUT-ELLIPSIS"),
    SPEC,
    amended_by=("AM-SENTENCE-ENDS", "AM-TRUNC-CHAR-BOUNDARY"),
)
_AMENDED_CUT: Final = Rule(
    "cut where only the amended rules allow (a full-width or spaced sentence end, or a "
    "character-boundary hard cut)",
    ("TRUNC-SENTENCE-PREFIX", "TRUNC-HARD-CUT-ELLIPSIS"),
    SEED,
    amended_by=("AM-SENTENCE-ENDS", "AM-TRUNC-CHAR-BOUNDARY"),
)


def truncation_findings(
    full: str | None, shown: Any, level: str, room: int | None = None
) -> list[Finding]:
    """The rules `shown` breaks as the truncation of `full` (white space compared collapsed).
    A cut one level allows and the other does not is reported as resting on the amendments
    that make the difference. `room` is what the rest of the card's line leaves below the
    target, when known: with none left, an empty description is the only cut that fits."""
    if shown == "" and room is not None and room <= 0:
        return []
    cut = _banned_at(full or "")
    if cut is not None:
        # §2.2 bans the content "in any form" without saying how to take it out: the seed
        # judges only that it is gone (cards/banned); the spec cuts before it and then
        # truncates (AM-BANNED-IN-DESCRIPTION).
        if level == "seed":
            return []
        source = (full or "")[:cut].rstrip() + ELLIPSIS
        found = _findings(source, shown, "spec")
        return [Finding(_BANNED_CUT, f.detail, f.example) for f in found]
    found = _findings(full, shown, level)
    other = "spec" if level == "seed" else "seed"
    if found and not _findings(full, shown, other):
        return [Finding(_AMENDED_CUT if level == "seed" else _SEED_CUT, "", shown)]
    return found


def _findings(full: str | None, shown: Any, level: str) -> list[Finding]:
    if not isinstance(shown, str):
        return [Finding(_NOT_TEXT, type(shown).__name__, shown)]
    if any(b in shown for b in LINE_BREAKS):
        return [Finding(_ONE_LINE, "", shown)]
    text, got = one_line(full or ""), " ".join(shown.split())
    if got == text:
        return []
    ends = _seed_ends(text) if level == "seed" else sentence_ends(text)
    tokens = count_tokens(got)
    if got and got.endswith(ELLIPSIS) and text.startswith(got[: -len(ELLIPSIS)].rstrip()):
        fits = [i for i in ends if count_tokens(text[:i]) <= tokens]
        if fits:
            return [Finding(_HARD_CUT[level], repr(text[: max(fits)]), got)]
        return []
    if got and text.startswith(got) and len(got) in set(ends):
        longer = [i for i in ends if i > len(got) and count_tokens(text[:i]) <= tokens]
        if longer:
            return [Finding(_SENTENCE[level], repr(text[: max(longer)]), got)]
        return []
    return [Finding(_NOT_A_CUT, "the description was dropped" if not got else "", got)]
