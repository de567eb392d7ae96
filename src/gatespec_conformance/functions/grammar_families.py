"""Layer-1 families of the grammars: drawn valid and invalid values of each grammar, judged
by grammar_match, with what the seeds' own patterns accept (--level seed) and which
amendment or extension an answer rests on."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from hypothesis import strategies as st

from gatespec_conformance.functions.family import Draw, Family, constant, plain
from gatespec_conformance.rules import seed_value
from gatespec_surface import strategies as s
from gatespec_surface.grammars import GRAMMARS

__all__ = [
    "GRAMMAR_EXTENSIONS",
    "grammar_amendments",
    "grammar_extension",
    "grammar_families",
    "grammar_value",
]


_GRAMMAR_VALUES: Final[dict[str, Callable[[str], st.SearchStrategy[str] | None]]] = {
    "valid": s.valid,
    "invalid": s.invalid,
    "cap": s.over_cap,
}

# Grammars that exist only by an amendment, or only as gatespec's own choice (no seed states
# them): their cases are skipped at --level seed with this reason.
GRAMMAR_EXTENSIONS: Final = {
    "view_selector": "tool_view's selector syntax is gatespec's; seed 000 §4.2 defers it to #34",
    "artifact_handle": "artifact handles are opaque in the seeds; their syntax is gatespec's",
}
# Grammars whose *rejections* rest on an amendment or on gatespec's own choice: a value the
# spec rejects may be one the seed accepts (the seed's path has no depth or length cap, its
# tags no character set). Their valid values are valid under the seed too.
_REJECTIONS_AMENDED: Final = {
    "path": ("AM-PATH-BOUNDS",),
    "server_key": ("AM-NAMESPACE-FROM-CONFIG",),
    "aggregate_name": ("AM-NAMESPACE-FROM-CONFIG", "AM-WIRE-NAME"),
    "wire_name": ("AM-WIRE-NAME",),
}
_REJECTIONS_UNSTATED: Final = {
    "tag": "seed 000 §2.1 bounds a tag's length only; its character set is gatespec's",
}


def _star(segment: str | None) -> str | None:
    return None if segment is None else f"(?:{segment})|\\*"


def grammar_amendments(g: str, kind: str) -> tuple[str, ...]:
    """Amendments an answer of grammar `g` rests on: none for a valid value, the grammar's own
    for a rejection (kind "invalid" or "cap")."""
    return _REJECTIONS_AMENDED.get(g, ()) if kind != "valid" else ()


def grammar_extension(g: str, kind: str) -> str:
    """Why no seed states the answer for a value of grammar `g` ("" when one does)."""
    if g in GRAMMAR_EXTENSIONS:
        return GRAMMAR_EXTENSIONS[g]
    if kind == "invalid":  # a "cap" value is over the seed's own length bound
        return _REJECTIONS_UNSTATED.get(g, "")
    return ""


# Seed 000 §3.2's own productions, as the generated seed facts hold them:
#   path    = "/" [ segment ( "/" segment )* ]   (the root segment also a §1.1 namespace)
#   segment = ( [a-z0-9] [a-z0-9_-]{0,63} ) | "*"
# S000-PATH-SEGMENT's `value` leaves out the "*" its own statement (and §3.2) has: added here.
_SEED_PATTERNS: Final[dict[str, str]] = {
    g: pattern
    for g, pattern in (
        ("path", seed_value(("S000-PATH-GRAMMAR",), None)),
        ("path_segment", _star(seed_value(("S000-PATH-SEGMENT",), None))),
    )
    if pattern is not None
}
# Where a grammar's rejection of a value its seed production accepts comes from.
_SEED_ACCEPTS_AMENDED: Final = {"path": ("AM-PATH-BOUNDS",), "path_segment": ("AM-PATH-BOUNDS",)}
# A grammar whose trailing-newline rejection no requirement of its own check ids carries under
# AM-FULLMATCH: the requirement that does.
_FULLMATCH_RULES: Final = {"path_segment": ("ERROR-PATH-INVALID",)}
_TAG_SEED_MAX: Final = int(seed_value(("S000-CARD-TAG-MAX-CHARS",), 24))


@dataclass(frozen=True)
class GrammarValue:
    """What one grammar_match case rests on: the amendments its expected answer rests on, why
    no seed states it ("" when one does), and the requirements it evidences (None: those of
    its check ids)."""

    amended: tuple[str, ...]
    extension: str
    requirements: tuple[str, ...] | None = None


def _fullmatch_requirements(g: str, check_ids: tuple[str, ...]) -> tuple[str, ...]:
    from gatespec_conformance.report import requirements_for

    refs = requirements_for(check_ids)
    # the grammar's own statement (unless an amendment changed it: a path's AM-PATH-BOUNDS),
    # and the requirement that says the whole value must match (AM-FULLMATCH)
    own = [r.id for r in refs if r.id.endswith("-GRAMMAR") and not r.amended_by]
    found = tuple([*own, *(r.id for r in refs if r.amended_by == "AM-FULLMATCH")])
    return found or _FULLMATCH_RULES.get(g, tuple(r.id for r in refs))


def grammar_value(g: str, kind: str, value: Any, check_ids: tuple[str, ...] = ()) -> GrammarValue:
    """Judge one value of grammar `g` (kind "valid", "invalid" or "cap") by what the seed says
    of it, not by its grammar alone:

    * path, path_segment: a value the spec rejects but seed 000 §3.2's own production accepts
      (a path past AM-PATH-BOUNDS's 256 characters or depth, "*" mid-path, "*" as a segment)
      rests on AM-PATH-BOUNDS (skipped at --level seed); one §3.2 rejects too is the seed's
      own rejection, judged at both levels;
    * tag: seed 000 §2.1 states only "each ≤ 24 chars", so a longer tag breaks
      CARD-TAG-MAX-24-CHARS and nothing else, while a shorter one rejected for its characters
      ("-x", "Read-Only") rests on AM-TAG-GRAMMAR alone (no seed requirement);
    * a value the grammar accepts but for a final "\n" (what re.match with `$` lets through)
      is charged to the requirement that says "the whole value" (AM-FULLMATCH), not to the
      grammar's other rules (a path's AM-PATH-BOUNDS bounds).
    """
    if kind == "valid" or not isinstance(value, str):
        return GrammarValue(grammar_amendments(g, kind), grammar_extension(g, kind))
    newline = value.endswith("\n") and g in GRAMMARS and GRAMMARS[g].accepts(value[:-1])
    if g == "tag":
        if len(value) > _TAG_SEED_MAX:
            return GrammarValue((), "", ("CARD-TAG-MAX-24-CHARS",))
        return GrammarValue(("AM-TAG-GRAMMAR",), _REJECTIONS_UNSTATED["tag"], ())
    if g in _SEED_PATTERNS:
        if re.fullmatch(_SEED_PATTERNS[g], value):
            return GrammarValue(_SEED_ACCEPTS_AMENDED[g], grammar_extension(g, kind))
        reqs = _fullmatch_requirements(g, check_ids) if newline else None
        return GrammarValue((), grammar_extension(g, kind), reqs)
    reqs = _fullmatch_requirements(g, check_ids) if newline else None
    return GrammarValue(grammar_amendments(g, kind), grammar_extension(g, kind), reqs)


def _grammar_draw(g: str, kind: str) -> Draw:
    values = _GRAMMAR_VALUES[kind](g)
    assert values is not None
    return plain(values.map(lambda value: {"grammar": g, "value": value}))


@dataclass(frozen=True)
class _ValueJudge:
    """grammar_value for one grammar family's cases, as its Family callbacks."""

    g: str
    kind: str
    check_ids: tuple[str, ...]

    def _of(self, inp: dict[str, Any]) -> GrammarValue:
        return grammar_value(self.g, self.kind, inp["value"], self.check_ids)

    def requirements(self, _label: str, inp: dict[str, Any]) -> tuple[str, ...] | None:
        return self._of(inp).requirements

    def extension(self, _label: str, inp: dict[str, Any]) -> str:
        return self._of(inp).extension

    def amended(self, _label: str, inp: dict[str, Any]) -> tuple[str, ...]:
        return self._of(inp).amended


def grammar_families() -> list[Family]:
    """valid, invalid and (where the syntax can pass the length cap) cap, for every grammar:
    the strategy's own claim is the expected answer."""
    out: list[Family] = []
    for g, info in GRAMMARS.items():
        answers_by_kind: dict[str, dict[str, Any]] = {
            "valid": {"ok": True},
            "invalid": {"error": info.error.value},
        }
        if s.over_cap(g) is not None:
            answers_by_kind["cap"] = answers_by_kind["invalid"]
        for kind, answer in answers_by_kind.items():
            judged = _ValueJudge(g, kind, (f"grammar.{g}.{kind}",))
            out.append(
                Family(
                    f"grammar_match/{g}/{kind}",
                    "grammar_match",
                    (f"grammar.{g}.{kind}",),
                    functools.partial(_grammar_draw, g, kind),
                    functools.partial(constant, answer),
                    amended_by=grammar_amendments(g, kind),
                    requirements=judged.requirements,
                    case_extension=judged.extension,
                    case_amended=judged.amended,
                )
            )
    return out
