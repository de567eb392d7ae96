"""Layer 2's check framework: families of live checks, their requirements, and how they report.

A *family* is one kind of evidence (``browse/path-invalid``); running it emits one result per
case (``server/gateway/browse/path-invalid/vectors/…``, ``…/0007``, ``cards/budget/<id>``).
Every result of a family stands for the same requirements, worked out from the spec:

* ``check_id`` is the id requirements.yaml would list for the family (``server.browse.
  path_invalid``). As soon as the spec names it, `requirements_for` gives the requirements
  and nothing here needs an edit.
* Until then ``via_checks`` (emitted check ids whose requirements this family evidences live,
  e.g. ``grammar.path.invalid``) and ``via_requirements`` (requirement ids looked up in the
  generated REQUIREMENTS) say which requirements it evidences. Levels always come from the
  generated package, and requirements outside the profile under test are left out.
"""

from __future__ import annotations

import fnmatch
import re
import time
from collections.abc import Awaitable, Callable, Collection, Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final

from gatespec_conformance.live.payloads import (
    ACCEPTED,
    SHAPE_REQUIREMENTS,
    WRONG_CODE,
    judge_error,
    judge_failed,
    judge_success,
)
from gatespec_conformance.report import (
    CheckResult,
    Example,
    Outcome,
    RequirementRef,
    RuleFailure,
    Selector,
    amendments,
    requirements_for,
)
from gatespec_conformance.rules import SEED_META_TOOL_CODES as SEED_CODES
from gatespec_conformance.rules import Finding, failures_at, foreign_seeds
from gatespec_surface.descriptors import META_TOOL_ERRORS
from gatespec_surface.errors import ErrorCode
from gatespec_surface.grammars import GRAMMARS
from gatespec_surface.requirements import REQUIREMENTS
from gatespec_surface.strategies import META_TOOL_ARG_GRAMMARS

if TYPE_CHECKING:
    from gatespec_conformance.live.client import CallResult
    from gatespec_conformance.live.facts import Live

__all__ = [
    "SUITE",
    "Drawn",
    "Emit",
    "Family",
    "allowed_codes",
    "expect_error",
    "expect_success",
    "family_requirements",
    "rule_amendments",
    "selected",
]

SUITE: Final = "server"

Runner = Callable[["Live", "Emit"], Awaitable[None]]


@dataclass(frozen=True)
class Drawn:
    """A case drawn before the run (seeded), so `--list` can show it: name suffix and input."""

    case: str
    input: Any
    label: str = ""


@dataclass(frozen=True)
class Family:
    key: str  # "browse/path-invalid": the name after server/<profile>/
    check_id: str  # "server.browse.path_invalid"
    run: Runner
    profiles: tuple[str, ...] = ("gateway", "transparent")
    via_checks: tuple[str, ...] = ()
    via_requirements: tuple[str, ...] = ()
    summary: str = ""
    # Cases drawn before the run (for --list and selection): (seed, max_examples) -> cases.
    draw: Callable[[int, int], list[Drawn]] | None = None
    # Amendments every result of the family rests on (besides its requirements').
    amended_by: tuple[str, ...] = ()
    # Why --level seed does not run it ("" when it does): an amendment id, or what makes it
    # a gatespec extension no seed states.
    seed: str = ""
    # Run again on fixtures of other sizes (--sizes): its outcome depends on the catalog's size.
    sized: bool = False

    def name(self, profile: str) -> str:
        return f"{SUITE}/{profile}/{self.key}"


def _rule_amendments(func: Any, seen: set[int], out: dict[str, None], depth: int = 0) -> None:
    """The amendments of every Rule a function can reach: the Rules (and amendment ids written
    as constants, such as charged_to(f, "AM-…")) its code names, through the kit's own
    functions it calls, nested code and closures included."""
    from gatespec_surface.requirements import AMENDMENTS

    func = getattr(func, "__wrapped__", func)
    code = getattr(func, "__code__", None)
    if code is None or id(code) in seen or depth > 8:
        return
    seen.add(id(code))
    scope = dict(getattr(func, "__globals__", {}))
    for cell in getattr(func, "__closure__", None) or ():
        try:
            scope[f"<cell{id(cell)}>"] = cell.cell_contents
        except ValueError:
            continue
    codes = [code]
    names: set[str] = set()
    values: list[Any] = [v for k, v in scope.items() if k.startswith("<cell")]
    while codes:
        c = codes.pop()
        names.update(c.co_names)
        for const in c.co_consts:
            if isinstance(const, type(code)):
                codes.append(const)
            elif isinstance(const, str) and const in AMENDMENTS:
                out[const] = None
    values += [scope[n] for n in names if n in scope]
    for held in list(values):  # Rules kept in a table (a dict or a tuple of them)
        if isinstance(held, dict):
            values += list(held.values())
        elif isinstance(held, tuple | list | frozenset):
            values += list(held)
    for value in values:
        from gatespec_conformance.rules import Rule

        if isinstance(value, Rule):
            out.update(dict.fromkeys(value.amended_by))
        elif callable(value) and getattr(value, "__module__", "").startswith(
            "gatespec_conformance"
        ):
            _rule_amendments(value, seen, out, depth + 1)


def rule_amendments(family: Family) -> tuple[str, ...]:
    """Amendments the rules of a family rest on (worked out from its code): `--select AM-…`
    selects a family whose rules rest on the amendment, besides those whose requirements do."""
    if family.key not in _RULE_AMENDMENTS:
        found: dict[str, None] = {}
        _rule_amendments(family.run, set(), found)
        _RULE_AMENDMENTS[family.key] = tuple(sorted(found))
    return _RULE_AMENDMENTS[family.key]


_RULE_AMENDMENTS: dict[str, tuple[str, ...]] = {}


def family_requirements(
    family: Family, profile: str, notes: list[str] | None = None
) -> tuple[RequirementRef, ...]:
    """What a family's results stand for under `profile` (see the module docstring)."""
    refs = requirements_for([family.check_id])
    if not refs:
        refs = requirements_for(family.via_checks)
        known = {r.id for r in refs}
        for rid in family.via_requirements:
            req = REQUIREMENTS.get(rid)
            if req is None:
                if notes is not None:
                    notes.append(f"{family.key}: requirement {rid} is no longer in the spec")
                continue
            if rid not in known:
                refs += (RequirementRef(req.id, req.level, req.amended_by),)
                known.add(rid)
    order = {rid: i for i, rid in enumerate(REQUIREMENTS)}
    kept = [r for r in refs if profile in REQUIREMENTS[r.id].profiles]
    return tuple(sorted(kept, key=lambda r: order[r.id]))


def _glob_tokens(pattern: str) -> list[str | re.Pattern[str] | None]:
    """fnmatch's syntax as tokens: a literal character, a one-character class (a compiled
    pattern; "?" is any), or None for "*"."""
    out: list[str | re.Pattern[str] | None] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        close = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "]") else i + 1)
        if ch == "*":
            out.append(None)
        elif ch == "?":
            out.append(re.compile(".", re.S))
        elif ch == "[" and close != -1:
            out.append(re.compile(fnmatch.translate(pattern[i : close + 1])))
            i = close
        else:
            out.append(ch)
        i += 1
    return out


def _viable(pattern: str, prefix: str) -> bool:
    """Whether some name starting with `prefix` matches the glob `pattern` (whatever the
    pattern still needs after the prefix can always be appended)."""
    tokens = _glob_tokens(pattern)

    def closure(states: set[int]) -> set[int]:
        out = set(states)
        for i in sorted(states):
            while i < len(tokens) and tokens[i] is None:  # "*" may match nothing
                i += 1
                out.add(i)
        return out

    states = closure({0})
    for ch in prefix:
        step: set[int] = set()
        for i in states:
            if i == len(tokens):
                continue
            token = tokens[i]
            if token is None:
                step.add(i)
            elif isinstance(token, str):
                if token == ch:
                    step.add(i + 1)
            elif token.match(ch):
                step.add(i + 1)
        states = closure(step)
        if not states:
            return False
    return True


def selected(
    selector: Selector,
    family_name: str,
    refs: Iterable[str],
    family_names: Collection[str],
    amended_by: Iterable[str] = (),
) -> bool:
    """Whether a family must run. A pattern that matches some family's name (or one of its
    requirement or amendment ids) selects exactly those families; any other pattern names
    cases, known only once a family runs, so it selects every family one of whose case names
    (``family/…``) it could match. A --deselect pattern naming the family leaves it out."""
    refs, amended_by = list(refs), list(amended_by)
    if selector.excludes(family_name, refs, amended_by):
        return False
    if not selector.patterns or selector.matches(family_name, refs, amended_by):
        return True
    for pattern in selector.patterns:
        if any(fnmatch.fnmatchcase(name, pattern) for name in family_names):
            continue  # a family-level pattern, and not this family's
        if _viable(pattern, family_name + "/"):
            return True
    return False


Problem = str | None | list[Finding]


@dataclass
class Emit:
    """Where a running family reports its cases (at the run's level)."""

    family: Family
    profile: str
    requirements: tuple[RequirementRef, ...]
    selector: Selector
    sink: list[CheckResult] = field(default_factory=list)
    level: str = "spec"
    prefix: str = ""  # "tools=N" on a fixture of another size
    _last: float = field(default_factory=time.monotonic)

    @property
    def name(self) -> str:
        return self.family.name(self.profile)

    def case_name(self, case: str = "") -> str:
        parts = [p for p in (self.prefix, case) if p]
        return "/".join([self.name, *parts])

    @property
    def amended_by(self) -> tuple[str, ...]:
        return amendments(self.requirements, self.family.amended_by)

    def _selected(self, name: str) -> bool:
        ids = [r.id for r in self.requirements]
        # A pattern naming the family (or one of its requirements, or an amendment its
        # requirements or its rules rest on) keeps all of its cases.
        behind = [*self.amended_by, *rule_amendments(self.family)]
        return self.selector.matches(self.name, ids, behind) or self.selector.matches(
            name, ids, behind
        )

    def _spent(self, duration: float | None) -> float:
        now = time.monotonic()
        spent = now - self._last if duration is None else duration
        self._last = now
        return spent

    def result(
        self,
        case: str,
        outcome: Outcome,
        reason: str = "",
        *,
        input: Any = None,
        expected: Any = None,
        got: Any = None,
        duration: float | None = None,
        failures: tuple[RuleFailure, ...] = (),
        behind: tuple[str, ...] = (),
        unjudged: bool = False,
    ) -> None:
        """`unjudged`: the family could not judge anything (no fact to judge, the IUT gone):
        the failure is charged to no requirement of the family and fails the run whatever
        --enforce says, as an IUT that cannot be started does."""
        name = self.case_name(case)
        if not self._selected(name):
            return
        example = Example(input, expected, got) if outcome is Outcome.FAIL else None
        self.sink.append(
            CheckResult(
                name,
                outcome,
                () if unjudged else self.requirements,
                (self.family.check_id,),
                reason,
                example,
                self._spent(duration),
                self.name,
                () if unjudged else tuple(dict.fromkeys([*self.amended_by, *behind])),
                failures,
                blocking=unjudged,
            )
        )

    def _fallback(self, finding: Finding) -> tuple[RequirementRef, ...]:
        if finding.rule is WRONG_CODE or finding.rule is ACCEPTED:
            own = tuple(r for r in self.requirements if r.id not in SHAPE_REQUIREMENTS)
            return own or self.requirements
        return self.requirements

    def judge(
        self,
        case: str,
        problem: Problem,
        *,
        input: Any = None,
        expected: Any = None,
        got: Any = None,
        duration: float | None = None,
        amended: tuple[str, ...] = (),
        spec_only: str = "",
    ) -> None:
        """Pass when `problem` is None or holds no finding that applies at this level; else
        fail with it (a string: the whole check; findings: each broken rule on its own).
        `amended` names amendments this case's failure rests on and `spec_only` why no seed
        states what it expects (a family --level seed leaves out is spec-only throughout)."""
        if self.family.seed and self.family.amended_by:
            amended = amended or self.family.amended_by
        elif self.family.seed:
            spec_only = spec_only or self.family.seed
        foreign = foreign_seeds([r.id for r in self.requirements], self.profile)
        if foreign:
            spec_only = spec_only or (
                f"a requirement of seed {', '.join(foreign)}: the spec applies it to the "
                f"{self.profile} profile"
            )
        if isinstance(problem, list):
            failures: list[RuleFailure] = []
            behind: tuple[str, ...] = amended
            for f in problem:
                got_rule, why = failures_at([f], self.level, self._fallback(f), input, expected)
                failures += [self._based(r, amended, spec_only) for r in got_rule]
                behind += why
            if not failures:
                self.result(case, Outcome.PASS, duration=duration)
                return
            reason = "; ".join(f.reason for f in failures)
            self.result(
                case,
                Outcome.FAIL,
                reason,
                input=input,
                expected=expected,
                got=got,
                duration=duration,
                failures=tuple(failures),
                behind=behind,
            )
        elif problem is None:
            self.result(case, Outcome.PASS, duration=duration)
        else:
            # One cause for every check failing this way: the numbers in the words vary.
            cause = re.sub(r"\d+(?:\.\d+)?", "N", problem)
            example = Example(input, expected, got)
            failure = self._based(
                RuleFailure(self.requirements, cause, problem, example), amended, spec_only
            )
            self.result(
                case,
                Outcome.FAIL,
                problem,
                input=input,
                expected=expected,
                got=got,
                duration=duration,
                failures=(failure,),
                behind=amended,
            )

    def _based(self, failure: RuleFailure, amended: tuple[str, ...], spec_only: str) -> RuleFailure:
        """A failure with the amendments its check rests on (the family's and the case's) added
        to its rule's own, and the case's spec-only note where it rests on nothing else."""
        on_check = tuple(dict.fromkeys([*amended, *self.family.amended_by]))
        if failure.amended_by or on_check:
            both = tuple(dict.fromkeys([*failure.amended_by, *on_check]))
            return replace(failure, amended_by=both, spec_only="")
        if failure.spec_only or not spec_only:
            return failure
        return replace(failure, spec_only=spec_only)

    def skip(self, case: str, reason: str) -> None:
        self.result(case, Outcome.SKIP, reason)


# ------------------------------------------------------------------ shared judgements


def allowed_codes(tool: str, prop: str | None) -> set[str]:
    """The codes an invalid argument of a meta-tool may give: ARGS_INVALID, or the code of a
    grammar the property is bound to when the meta-tool declares that code (a malformed
    path is PATH_INVALID, an unknown-shaped handle VIEW_FAILED)."""
    codes = {ErrorCode.ARGS_INVALID.value}
    declared = {c.value for c in META_TOOL_ERRORS[tool]}
    for grammar in META_TOOL_ARG_GRAMMARS[tool].get(prop or "", ()):
        code = GRAMMARS[grammar].error.value
        if code in declared:
            codes.add(code)
    return codes


def expect_error(
    call: CallResult, codes: Collection[str], seed_codes: Collection[str] | None = SEED_CODES
) -> list[Finding]:
    """The rules an answer breaks that should be an isError result whose §3.4 payload has one
    of `codes` (payloads.judge_error)."""
    return judge_error(call, codes, seed_codes)


def expect_success(call: CallResult, tool: str | None = None) -> list[Finding]:
    """The rules a successful answer breaks (with `tool`, also its output model's)."""
    return judge_success(call, tool)[1] if tool is not None else judge_failed(call)
