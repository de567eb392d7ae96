"""The cases layer 1 sends: every shipped vector case, plus reproducibly drawn cases from the
families (see functions.py for the reproducibility rules), and what each case is at a level.

At ``--level spec`` a case expects the spec's answer. At ``--level seed`` a case whose expected
answer rests on an amendment expects the seed's own answer when one is recorded (a vector's
``seed_expect``), and is skipped naming the amendment otherwise; a case about something no seed
states (a gatespec extension) is skipped saying so.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from typing import Any, Final

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed

from gatespec_conformance import DEFAULT_MAX_EXAMPLES
from gatespec_conformance.functions.families import Draw, Family, Property, families
from gatespec_conformance.functions.grammar_families import grammar_value
from gatespec_conformance.oracle import seed_answers
from gatespec_conformance.report import (
    CheckResult,
    Example,
    Outcome,
    RequirementRef,
    RuleFailure,
    amendments,
    refs_for_ids,
    requirements_for,
)
from gatespec_surface import strategies as s
from gatespec_surface import vectors as v
from gatespec_surface.errors import ErrorCode
from gatespec_surface.grammars import is_tool_id

SUITE: Final = "functions"


@dataclass(frozen=True)
class Case:
    name: str
    function: str
    input: dict[str, Any]
    expect: dict[str, Any]  # {"ok": value} | {"error": CODE} | {"property": what it says}
    check_ids: tuple[str, ...]
    requirements: tuple[RequirementRef, ...] = field(default=())
    group: str = ""  # failures are summarised per group ("": the name's parent)
    prop: Property | None = None  # the ok answer must have this property
    label: str = ""  # how a drawn input was made (a failure cause names it)
    expect_amended: tuple[str, ...] = ()  # amendments the expected answer rests on
    seed_expect: dict[str, Any] | None = None  # the seed's own answer, when recorded
    # What the seed itself states of the answer, as a property, where its exact answer rests
    # on an amendment (truncation: a single line and §2.4's terminators; annotations: a float)
    seed_prop: Property | None = None
    seed_form: bool = False  # judged by the seed's own answer (at --level seed)
    # Other answers the seed also permits, accepted at --level seed (an error code where the
    # seed can be read both ways, as for a bare namespace:name id: AM-BARE-TOOL-ID).
    seed_accepts: tuple[dict[str, Any], ...] = ()
    accepts: tuple[dict[str, Any], ...] = ()  # set at --level seed from seed_accepts
    extension: str = ""  # why no seed states what this case checks ("" when one does)
    skip: str = ""  # set at a level where this case is not judged: why
    description: str = ""

    @property
    def requirement_ids(self) -> tuple[str, ...]:
        return tuple(r.id for r in self.requirements)

    @property
    def amended_by(self) -> tuple[str, ...]:
        return amendments(self.requirements, self.expect_amended)

    def at_level(self, level: str) -> Case:
        """This case as `level` judges it (see the module docstring)."""
        if level == "spec":
            return self
        if self.extension:
            return replace(self, skip=f"not a seed statement: {self.extension}")
        if self.expect_amended:
            seed = replace(self, accepts=self.seed_accepts, seed_form=True)
            if self.seed_expect is not None:
                return replace(seed, expect=self.seed_expect, prop=None)
            if self.seed_prop is not None:
                expect = {"property": self.seed_prop.says}
                return replace(seed, expect=expect, prop=self.seed_prop)
            if self.seed_accepts and set(self.expect_amended) == {"AM-BARE-TOOL-ID"}:
                return seed  # the spec's answer, or the other one the seed permits
            shown = ", ".join(self.expect_amended)
            return replace(self, skip=f"amended by {shown}; the seed's own answer is not stated")
        return self

    def result(
        self,
        outcome: Outcome,
        reason: str = "",
        got: Any = None,
        duration: float = 0.0,
        cause: str = "",
    ) -> CheckResult:
        """This case's CheckResult; a failure carries (input, expected, got), charged to the
        case's own requirements under a cause that names how its input was made."""
        example = Example(self.input, self.expect, got) if outcome is Outcome.FAIL else None
        failures: tuple[RuleFailure, ...] = ()
        if outcome is Outcome.FAIL:
            cause = cause or reason
            failures = (
                RuleFailure(
                    self.requirements,
                    f"{self.label}: {cause}" if self.label else cause,
                    reason,
                    example,
                    # the expected answer's amendments, unless the seed's own answer judged it
                    () if self.seed_form else self.expect_amended,
                ),
            )
        return CheckResult(
            self.name,
            outcome,
            self.requirements,
            self.check_ids,
            reason,
            example,
            duration,
            self.group,
            self.amended_by,
            failures,
        )


# ------------------------------------------------------------------ vector cases


def _vector_docs() -> Iterator[tuple[str, dict[str, Any]]]:
    root = resources.files(v)
    for filename in v.VECTOR_FILES:
        yield filename, json.loads(root.joinpath(filename).read_text(encoding="utf-8"))


def _vector_check_ids(stem: str, case: dict[str, Any]) -> list[str]:
    ids = [f"vectors.{stem}"]
    # A grammar vector that is one of the spec's own examples evidences grammar.<g>.examples.
    if case["function"] == "grammar_match":
        g, value = case["input"]["grammar"], case["input"]["value"]
        if value in s.SPEC_VALID.get(g, ()) or value in s.SPEC_INVALID.get(g, ()):
            ids.append(f"grammar.{g}.examples")
    return ids


def _vector_amendments(
    case: dict[str, Any], requirements: tuple[RequirementRef, ...]
) -> tuple[tuple[str, ...], str]:
    """(amendments the vector's expected answer rests on, why no seed states it). A vector
    that records its own `amended_by` is taken at its word; otherwise a grammar vector is
    judged like the drawn cases of its grammar, and any other one rests on every amendment
    of its requirements (at --level seed it is skipped rather than judged unfairly)."""
    extension = ""
    if case["function"] == "grammar_match":
        g = case["input"]["grammar"]
        kind = "valid" if "ok" in case["expect"] else "invalid"
        judged = grammar_value(g, kind, case["input"]["value"])
        extension = judged.extension
        if "amended_by" not in case:
            return judged.amended, extension
        # the vector's own list, and what the seed's production says of the value (a path
        # past AM-PATH-BOUNDS's cap that §3.2 accepts rests on it even when the vector says [])
        return tuple(dict.fromkeys([*case["amended_by"], *judged.amended])), extension
    if "amended_by" in case:
        return tuple(case["amended_by"]), extension
    return tuple(dict.fromkeys(r.amended_by for r in requirements if r.amended_by)), extension


BARE_TOOL_ID: Final = "AM-BARE-TOOL-ID"
_CATALOG_ERROR: Final = {"error": ErrorCode.CATALOG_ERROR.value}


def bare_tool_id(function: str, inp: dict[str, Any]) -> bool:
    """Whether the case is about a tool_id with neither version nor hash8 (namespace:name):
    seed 000 §1.1's grammar admits it, §1.3 says adapters "MUST emit hash8" without a version,
    so a reading that refuses it is one the seed permits too; AM-BARE-TOOL-ID decides."""
    if function == "format_tool_id":
        parts = inp.get("parts")
        return (
            isinstance(parts, dict)
            and not parts.get("version")
            and not parts.get("hash8")
            and is_tool_id(f"{parts.get('namespace')}:{parts.get('name')}")
        )
    if function == "grammar_match" and inp.get("grammar") != "tool_id":
        return False
    if function not in ("grammar_match", "parse_tool_id"):
        return False
    value = inp.get("value")
    return isinstance(value, str) and is_tool_id(value) and not ({"@", "#"} & set(value))


def _bare(case: Case) -> Case:
    """A bare-id case: its expectation rests on AM-BARE-TOOL-ID too, and at --level seed the
    refusal (CATALOG_ERROR) is accepted besides the grammar's answer."""
    if not bare_tool_id(case.function, case.input) or "ok" not in case.expect:
        return case
    amended = tuple(dict.fromkeys([*case.expect_amended, BARE_TOOL_ID]))
    return replace(case, expect_amended=amended, seed_accepts=(_CATALOG_ERROR,))


def _seed_answers(
    case: dict[str, Any],
) -> tuple[dict[str, Any] | None, tuple[dict[str, Any], ...]]:
    """(the seed's own answer, the other answers a seed permits) of a vector: its
    `seed_expect`, or where the seeds disagree the first of its `seed_expect_any` and the rest
    (seed 001's server1_myTool is server1/myTool, seed 004's Principle 5 refuses it)."""
    several = case.get("seed_expect_any")
    if several:
        return several[0], tuple(several[1:])
    return case.get("seed_expect"), ()


def _seed_prop(function: str, inp: dict[str, Any]) -> Property | None:
    found = seed_answers.seed_property(function, inp)
    return Property(*found) if found is not None else None


def vector_cases() -> list[Case]:
    """Every shipped vector case, in file order, with a unique hierarchical name. A case that
    lists its own `requirements` is charged to them; otherwise to those of its file's checks."""
    out: list[Case] = []
    seen: set[str] = set()
    for filename, doc in _vector_docs():
        stem = filename.removesuffix(".json")
        for case in doc["cases"]:
            name = f"{SUITE}/{case['function']}/vectors/{stem}/{case['name']}"
            base, n = name, 1
            while name in seen:  # a vector file may repeat a case name
                n += 1
                name = f"{base}~{n}"
            seen.add(name)
            ids = _vector_check_ids(stem, case)
            listed = case.get("requirements")
            if case["function"] == "grammar_match":  # what the seed says of this one value
                g, value = case["input"]["grammar"], case["input"]["value"]
                kind = "valid" if "ok" in case["expect"] else "invalid"
                judged = grammar_value(g, kind, value, (f"grammar.{g}.{kind}",)).requirements
                listed = judged if judged is not None else listed
            refs = refs_for_ids(listed) if listed is not None else requirements_for(ids)
            amended, extension = _vector_amendments(case, refs)
            out.append(
                _bare(
                    Case(
                        name,
                        case["function"],
                        case["input"],
                        case["expect"],
                        tuple(ids),
                        refs,
                        f"{SUITE}/{case['function']}/vectors/{stem}",
                        expect_amended=amended,
                        seed_expect=_seed_answers(case)[0],
                        seed_accepts=_seed_answers(case)[1],
                        seed_prop=_seed_prop(case["function"], case["input"]),
                        extension=extension,
                        description=str(case.get("description", "")),
                    )
                )
            )
    return out


def family_seed(seed: int, path: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}/{path}".encode()).digest()[:8], "big")


@contextlib.contextmanager
def _without_local_constants() -> Iterator[None]:
    """Hypothesis mixes into ~5% of draws constants it scans from every *local* module in
    sys.modules, so the same seed drew different cases under pytest and under the CLI (and
    would after any new import). Draw with an empty local pool, and clear the cache of allowed
    constants on the way in and out. Private API: without it, fall back to plain drawing."""
    try:
        from hypothesis.internal.conjecture import providers

        original = providers._get_local_constants
        cache = providers.CONSTANTS_CACHE
        empty = providers.Constants()
    except (ImportError, AttributeError):  # pragma: no cover - another hypothesis
        yield
        return
    providers._get_local_constants = lambda: empty
    cache.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = original
        cache.cache.clear()


def draw_all(strategy: Draw, n: int, seed: int) -> list[tuple[str, dict[str, Any]]]:
    """Up to n examples, reproducibly: a pinned @given run that only collects."""
    out: list[tuple[str, dict[str, Any]]] = []

    @hypothesis_seed(seed)
    @settings(
        max_examples=n,
        database=None,
        derandomize=False,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        print_blob=False,
    )
    @given(strategy)
    def collect(example: tuple[str, dict[str, Any]]) -> None:
        out.append(example)

    with _without_local_constants():
        collect()
    return out


def _json_safe(inp: dict[str, Any]) -> str | None:
    try:
        return json.dumps(inp, sort_keys=True, ensure_ascii=True, allow_nan=False)
    except (TypeError, ValueError):
        return None


def unique_inputs(drawn: Sequence[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    seen: set[str] = set()
    out = []
    for label, inp in drawn:
        key = _json_safe(inp)
        if key is not None and key not in seen:
            seen.add(key)
            out.append((label, inp))
    return out


def balanced(
    drawn: Sequence[tuple[str, dict[str, Any]]], n: int
) -> list[tuple[str, dict[str, Any]]]:
    """Up to n of `drawn`, taken round-robin across labels, kept in draw order."""
    by_label: dict[str, list[int]] = {}
    for i, (label, _inp) in enumerate(drawn):
        by_label.setdefault(label, []).append(i)
    queues = [deque(ix) for ix in by_label.values()]
    keep: list[int] = []
    while len(keep) < n and any(queues):
        for q in queues:
            if q and len(keep) < n:
                keep.append(q.popleft())
    return [drawn[i] for i in sorted(keep)]


def _drawn_case(fam: Family, n: int, label: str, inp: dict[str, Any]) -> Case:
    expected = fam.expect(inp)
    ids = fam.requirements(label, inp) if fam.requirements else None
    refs = refs_for_ids(ids) if ids is not None else requirements_for(fam.check_ids)
    extension = fam.extension or (fam.case_extension(label, inp) if fam.case_extension else "")
    prop = expected if isinstance(expected, Property) else None
    return _bare(
        Case(
            f"{SUITE}/{fam.path}/{label + '/' if label else ''}{n:04d}",
            fam.function,
            inp,
            expected if isinstance(expected, dict) else {"property": expected.says},
            fam.check_ids,
            refs,
            prop=prop,
            label=label,
            expect_amended=fam.case_amended(label, inp) if fam.case_amended else fam.amended_by,
            seed_prop=fam.seed_prop(inp) if fam.seed_prop else None,
            extension=extension,
        )
    )


def generated_cases(seed: int, max_examples: int, notes: list[str] | None = None) -> list[Case]:
    """Drawn cases of every family (at most max_examples each). An input the kit's own oracle
    cannot answer (a kit bug) is dropped, with a note."""
    out: list[Case] = []
    if max_examples <= 0:
        return out
    for fam in families():
        drawn = draw_all(fam.draw(), max_examples * fam.oversample, family_seed(seed, fam.path))
        crashed = 0
        for n, (label, inp) in enumerate(balanced(unique_inputs(drawn), max_examples), start=1):
            try:
                out.append(_drawn_case(fam, n, label, inp))
            except Exception:
                crashed += 1
        if crashed and notes is not None:
            notes.append(
                f"the kit's oracle raised on {crashed} drawn inputs of {fam.path} (dropped)"
            )
    return out


def build_cases(
    seed: int = 0, max_examples: int = DEFAULT_MAX_EXAMPLES, notes: list[str] | None = None
) -> list[Case]:
    """Vector cases, then drawn cases: the full layer-1 suite for this seed."""
    return [*vector_cases(), *generated_cases(seed, max_examples, notes)]
