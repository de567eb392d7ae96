"""Rules: the unit layer 2 judges and charges failures to.

A check evaluates each `Rule` on its own and reports every broken one as a `Finding`, so a
failure names the requirement that rule stands for (a 70-character card name breaks
CARD-NAME-MAX-64 and nothing else) with its own minimal example.

Every rule says at which levels it applies:

* a rule the seeds state applies at both (``SEED_AND_SPEC``);
* a rule whose spec form rests on an amendment (``amended_by``) applies at ``spec``; the seed
  form, where the kit can state it, is a rule of its own that applies at ``seed``;
* a rule the spec states but no seed and no amendment does (``spec_only`` says why) applies at
  ``spec`` only, and the report says no amendment records it.

Seed-level values (bounds, code sets) come from the generated ``gatespec_surface.seed_facts``
when it exists, else from today's generated constants (`seed_value`).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from gatespec_conformance.report import Example, RequirementRef, RuleFailure, refs_for_ids
from gatespec_surface.descriptors import PROFILES
from gatespec_surface.errors import ErrorCode

__all__ = [
    "SEED",
    "SEED_AND_SPEC",
    "SPEC",
    "Finding",
    "Rule",
    "applies",
    "charged_to",
    "failures_at",
    "recorded",
    "seed_value",
    "with_facts",
]

SEED: Final = frozenset({"seed"})
SPEC: Final = frozenset({"spec"})
SEED_AND_SPEC: Final = frozenset({"seed", "spec"})


@dataclass(frozen=True)
class Rule:
    cause: str  # the same for every check that breaks it: the report groups by it
    requirements: tuple[str, ...] = ()
    levels: frozenset[str] = SEED_AND_SPEC
    amended_by: tuple[str, ...] = ()  # amendments its (spec) form rests on
    spec_only: str = ""  # why no seed states it, when no amendment records it either

    def refs(self, fallback: Sequence[RequirementRef] = ()) -> tuple[RequirementRef, ...]:
        return refs_for_ids(self.requirements) if self.requirements else tuple(fallback)


@dataclass(frozen=True)
class Finding:
    """One broken rule in one check: what exactly was wrong, and the smallest example."""

    rule: Rule
    detail: str = ""
    example: Any = None  # the offending part (the report shows it as "got")


def charged_to(finding: Finding, *amendment_ids: str) -> Finding:
    """`finding` as a rule of --level spec resting on `amendment_ids` too: what it checks in
    that case only an amendment states (the seed-level run leaves the case alone)."""
    rule = finding.rule
    amended = tuple(dict.fromkeys([*rule.amended_by, *amendment_ids]))
    return replace(finding, rule=replace(rule, levels=SPEC, amended_by=amended, spec_only=""))


def applies(rule: Rule, level: str) -> bool:
    return level in rule.levels


def failures_at(
    findings: Iterable[Finding],
    level: str,
    fallback: Sequence[RequirementRef],
    case_input: Any = None,
    expected: Any = None,
) -> tuple[tuple[RuleFailure, ...], tuple[str, ...]]:
    """(the RuleFailures of the findings that apply at `level`, the amendments behind them)."""
    out: list[RuleFailure] = []
    behind: list[str] = []
    for f in findings:
        if not applies(f.rule, level):
            continue
        reason = f"{f.rule.cause}: {f.detail}" if f.detail else f.rule.cause
        example = Example(case_input, expected, f.example)
        out.append(
            RuleFailure(
                f.rule.refs(fallback),
                f.rule.cause,
                reason,
                example,
                f.rule.amended_by,
                f.rule.spec_only,
            )
        )
        behind += f.rule.amended_by
    return tuple(out), tuple(dict.fromkeys(behind))


# ------------------------------------------------------------------ seed facts


def _seed_facts() -> Any:
    try:
        return importlib.import_module("gatespec_surface.seed_facts").SEED_FACTS
    except (ImportError, AttributeError):
        return {}


def _fact(fact_ids: Sequence[str]) -> Any:
    facts = _seed_facts()
    return next((facts[i] for i in fact_ids if i in facts), None)


def seed_value(fact_ids: Sequence[str], fallback: Any) -> Any:
    """What the seed itself states for the first of `fact_ids` the generated SEED_FACTS holds,
    else `fallback` (today's generated constant)."""
    fact = _fact(fact_ids)
    return fact.value if fact is not None else fallback


def recorded(*amendment_ids: str) -> tuple[str, ...]:
    """Those of `amendment_ids` the spec records (amendments.yaml), in order."""
    from gatespec_surface.requirements import AMENDMENTS

    return tuple(a for a in amendment_ids if a in AMENDMENTS)


def with_facts(rule: Rule, *fact_ids: str) -> Rule:
    """`rule` resting on the amendments the seed facts name for it: once the spec records the
    decision as an amendment, the rule stops being spec-only."""
    fact = _fact(fact_ids)
    amended = tuple(getattr(fact, "amended_by", ()) or ())
    if not amended:
        return rule
    return replace(
        rule, amended_by=tuple(dict.fromkeys([*rule.amended_by, *amended])), spec_only=""
    )


# Seed 002's "Error shape": the six codes a gateway or proxy meta-tool may answer with.
# (SEED_FACTS ids tried in order; until the lead's seed_facts lands, every spec code.)
SEED_CODE_FACTS: Final = ("S002-ERROR-CODE-UNION",)
SEED_META_TOOL_CODES: Final = frozenset(seed_value(SEED_CODE_FACTS, [c.value for c in ErrorCode]))


# The seeds a profile's design comes from (seed 000 §4.1/§4.2 and seed 002's "Runtime modes").
# A requirement of another seed (001's registry gateway) is one the spec applies to the profile:
# --level seed leaves it out, --level spec reports it as the spec's decision.
PROFILE_SEEDS: Final = {name: p.seeds for name, p in PROFILES.items()}


def foreign_seeds(requirement_ids: Sequence[str], profile: str) -> tuple[str, ...]:
    """The other seeds behind requirements none of which comes from the profile's own seeds
    (empty when one does, or when there are none)."""
    from gatespec_surface.requirements import REQUIREMENTS

    seeds = [REQUIREMENTS[r].seed for r in requirement_ids if r in REQUIREMENTS]
    own = PROFILE_SEEDS.get(profile, ())
    if not seeds or any(s in own for s in seeds):
        return ()
    return tuple(sorted(set(seeds)))
