"""The cases layer 1 sends: every shipped vector case, plus reproducibly drawn cases from the
families (see functions.py for the reproducibility rules)."""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Final

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed

from gatespec.conformance import DEFAULT_MAX_EXAMPLES
from gatespec.conformance.adapter import reference_answer
from gatespec.conformance.families import Draw, families
from gatespec.conformance.report import (
    CheckResult,
    Example,
    Outcome,
    RequirementRef,
    requirements_for,
)
from gatespec_surface import strategies as s
from gatespec_surface import vectors as v

SUITE: Final = "functions"


@dataclass(frozen=True)
class Case:
    name: str
    function: str
    input: dict[str, Any]
    expect: dict[str, Any]  # {"ok": value} | {"error": CODE}
    check_ids: tuple[str, ...]
    requirements: tuple[RequirementRef, ...] = field(default=())
    group: str = ""  # failures are summarised per group ("": the name's parent)

    @property
    def requirement_ids(self) -> tuple[str, ...]:
        return tuple(r.id for r in self.requirements)

    def result(
        self,
        outcome: Outcome,
        reason: str = "",
        got: Any = None,
        duration: float = 0.0,
    ) -> CheckResult:
        """This case's CheckResult; a failure carries (input, expected, got)."""
        example = Example(self.input, self.expect, got) if outcome is Outcome.FAIL else None
        return CheckResult(
            self.name,
            outcome,
            self.requirements,
            self.check_ids,
            reason,
            example,
            duration,
            self.group,
        )


def _case(
    name: str,
    function: str,
    inp: dict[str, Any],
    expect: dict[str, Any],
    ids: Sequence[str],
    group: str = "",
) -> Case:
    return Case(name, function, inp, expect, tuple(ids), requirements_for(ids), group)


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


def vector_cases() -> list[Case]:
    """Every shipped vector case, in file order, with a unique hierarchical name."""
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
            group = f"{SUITE}/{case['function']}/vectors/{stem}"
            out.append(_case(name, case["function"], case["input"], case["expect"], ids, group))
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


def generated_cases(seed: int, max_examples: int, notes: list[str] | None = None) -> list[Case]:
    """Drawn cases of every family (at most max_examples each). A reference crash on a drawn
    input (a gatespec bug) drops the input and adds a note."""
    out: list[Case] = []
    if max_examples <= 0:
        return out
    for fam in families():
        drawn = draw_all(fam.draw(), max_examples * fam.oversample, family_seed(seed, fam.path))
        crashed = 0
        for n, (label, inp) in enumerate(balanced(unique_inputs(drawn), max_examples), start=1):
            try:
                expect = fam.expect(inp) if fam.expect else reference_answer(fam.function, inp)
            except Exception:
                crashed += 1
                continue
            name = f"{SUITE}/{fam.path}/{label + '/' if label else ''}{n:04d}"
            out.append(_case(name, fam.function, inp, expect, fam.check_ids))
        if crashed and notes is not None:
            notes.append(
                f"gatespec's reference raised on {crashed} drawn inputs of {fam.path} (dropped)"
            )
    return out


def build_cases(
    seed: int = 0, max_examples: int = DEFAULT_MAX_EXAMPLES, notes: list[str] | None = None
) -> list[Case]:
    """Vector cases, then drawn cases: the full layer-1 suite for this seed."""
    return [*vector_cases(), *generated_cases(seed, max_examples, notes)]
