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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from gatespec_conformance.report import (
    CheckResult,
    Example,
    Outcome,
    RequirementRef,
    Selector,
    requirements_for,
)
from gatespec_surface.descriptors import META_TOOL_ERRORS
from gatespec_surface.errors import ErrorCode
from gatespec_surface.grammars import GRAMMARS
from gatespec_surface.requirements import REQUIREMENTS
from gatespec_surface.strategies import META_TOOL_ARG_GRAMMARS

if TYPE_CHECKING:
    from gatespec_conformance.live_client import CallResult
    from gatespec_conformance.server_facts import Live

__all__ = [
    "SUITE",
    "Drawn",
    "Emit",
    "Family",
    "allowed_codes",
    "expect_error",
    "expect_success",
    "family_requirements",
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

    def name(self, profile: str) -> str:
        return f"{SUITE}/{profile}/{self.key}"


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
    selector: Selector, family_name: str, refs: Iterable[str], family_names: Collection[str]
) -> bool:
    """Whether a family must run. A pattern that matches some family's name (or a
    requirement id) selects exactly those families; any other pattern names cases, known
    only once a family runs, so it selects every family one of whose case names
    (``family/…``) it could match."""
    if not selector or selector.matches(family_name, refs):
        return True
    for pattern in selector.patterns:
        if any(fnmatch.fnmatchcase(name, pattern) for name in family_names):
            continue  # a family-level pattern, and not this family's
        if _viable(pattern, family_name + "/"):
            return True
    return False


@dataclass
class Emit:
    """Where a running family reports its cases."""

    family: Family
    profile: str
    requirements: tuple[RequirementRef, ...]
    selector: Selector
    sink: list[CheckResult] = field(default_factory=list)
    _last: float = field(default_factory=time.monotonic)

    @property
    def name(self) -> str:
        return self.family.name(self.profile)

    def case_name(self, case: str = "") -> str:
        return f"{self.name}/{case}" if case else self.name

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
    ) -> None:
        name = self.case_name(case)
        ids = [r.id for r in self.requirements]
        # A pattern naming the family (or one of its requirements) keeps all of its cases.
        if not self.selector.matches(self.name, ids) and not self.selector.matches(name, ids):
            return
        now = time.monotonic()
        spent = now - self._last if duration is None else duration
        self._last = now
        example = Example(input, expected, got) if outcome is Outcome.FAIL else None
        self.sink.append(
            CheckResult(
                name,
                outcome,
                self.requirements,
                (self.family.check_id,),
                reason,
                example,
                spent,
                self.name,
            )
        )

    def judge(
        self,
        case: str,
        problem: str | None,
        *,
        input: Any = None,
        expected: Any = None,
        got: Any = None,
        duration: float | None = None,
    ) -> None:
        """Pass when `problem` is None, else fail with it as the reason."""
        if problem is None:
            self.result(case, Outcome.PASS, duration=duration)
        else:
            self.result(
                case,
                Outcome.FAIL,
                problem,
                input=input,
                expected=expected,
                got=got,
                duration=duration,
            )

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


def expect_error(call: CallResult, codes: Collection[str]) -> str | None:
    """None when `call` is an isError result whose valid payload has one of `codes`."""
    payload, problem = call.payload()
    if payload is None:
        return problem
    if payload["error"] not in codes:
        return f"expected {' or '.join(sorted(codes))}, got {payload['error']}"
    return None


def expect_success(call: CallResult) -> str | None:
    if call.result is None:
        return f"no result: {call.error}"
    if call.result.is_error:
        payload, _ = call.payload()
        code = payload["error"] if payload else "an error"
        return f"expected success, got {code}: {call.text[:200]}"
    return None
