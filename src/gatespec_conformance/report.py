"""Results of a conformance run (shared by every layer); formats.py shows them.

A check has a hierarchical name (``functions/grammar_match/tool_id/valid/0003``), the ids of the
emitted checks it evidences (``grammar.tool_id.valid``) and, through the generated
``REQUIREMENTS[*].checks``, the requirement ids and levels it stands for. Nothing here keeps its
own table of requirements: an amendment that moves a check between requirements changes the
report with no edit.

Layers build `CheckResult`s, apply an `ExpectedFailures` list, and hand a `Report` to the
writers of formats.py (`write_text`, `report_json`, `write_junit`). `Progress` shows a counter on stderr.
"""

from __future__ import annotations

import enum
import fnmatch
import functools
import re
import sys
import time
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final, TextIO

from gatespec_surface.requirements import REQUIREMENTS

__all__ = [
    "ENFORCE",
    "REPORT_FORMAT",
    "CheckResult",
    "Example",
    "ExpectedFailures",
    "Outcome",
    "Progress",
    "Report",
    "RequirementRef",
    "RuleFailure",
    "Selector",
    "StaleEntry",
    "amendments",
    "level_of",
    "refs_for_ids",
    "requirements_for",
    "summary_by_requirement",
]

REPORT_FORMAT: Final = "gatespec-conformance-report/1"

# Strongest first: a check evidencing a MUST and a MAY is a MUST check.
LEVEL_RANK: Final = {"MUST": 0, "MUST NOT": 0, "SHOULD": 1, "SHOULD NOT": 1, "MAY": 2}


class Outcome(enum.StrEnum):
    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"
    XFAIL = "expected-failure"  # failed, and listed in the expected-failures file


@dataclass(frozen=True)
class RequirementRef:
    id: str
    level: str
    amended_by: str | None = None  # the amendment that changed the seed's statement

    def shown(self) -> str:
        extra = f", amended by {self.amended_by}" if self.amended_by else ""
        return f"{self.id} ({self.level}{extra})"


@functools.cache
def _by_check_id() -> dict[str, tuple[RequirementRef, ...]]:
    index: dict[str, list[RequirementRef]] = defaultdict(list)
    for req in REQUIREMENTS.values():
        for check_id in req.checks:
            index[check_id].append(RequirementRef(req.id, req.level, req.amended_by))
    return {k: tuple(v) for k, v in index.items()}


def requirements_for(check_ids: Iterable[str]) -> tuple[RequirementRef, ...]:
    """The requirements that name any of `check_ids` in their `checks` (spec order, no repeats)."""
    seen: dict[str, RequirementRef] = {}
    for check_id in check_ids:
        for ref in _by_check_id().get(check_id, ()):
            seen.setdefault(ref.id, ref)
    order = {rid: i for i, rid in enumerate(REQUIREMENTS)}
    return tuple(sorted(seen.values(), key=lambda r: order[r.id]))


def refs_for_ids(ids: Iterable[str]) -> tuple[RequirementRef, ...]:
    """RequirementRefs of requirement ids (spec order; ids the spec lacks are left out)."""
    order = {rid: i for i, rid in enumerate(REQUIREMENTS)}
    known = sorted({i for i in ids if i in REQUIREMENTS}, key=order.__getitem__)
    return tuple(
        RequirementRef(i, REQUIREMENTS[i].level, REQUIREMENTS[i].amended_by) for i in known
    )


def amendments(
    requirements: Iterable[RequirementRef], extra: Iterable[str] = ()
) -> tuple[str, ...]:
    """Every amendment behind a result: those of its requirements, then `extra` (no repeats)."""
    found = [r.amended_by for r in requirements if r.amended_by]
    return tuple(dict.fromkeys([*found, *extra]))


def level_of(requirements: Sequence[RequirementRef]) -> str:
    """The strongest level among `requirements` ("" when a check evidences none)."""
    levels = [r.level for r in requirements]
    return min(levels, key=lambda lv: LEVEL_RANK.get(lv, 9)) if levels else ""


@dataclass(frozen=True)
class Example:
    """What was sent, what the reference expected and what came back."""

    input: Any
    expected: Any
    got: Any


@dataclass(frozen=True)
class RuleFailure:
    """One rule a check found broken: the requirement(s) it breaks, a cause that is the same
    for every check failing the same way (the report groups by it), and its own example."""

    requirements: tuple[RequirementRef, ...]
    cause: str
    reason: str = ""
    example: Example | None = None
    amended_by: tuple[str, ...] = ()  # amendments this rule's form rests on
    spec_only: str = ""  # why no seed states the rule, when no amendment records it either

    @property
    def level(self) -> str:
        return level_of(self.requirements)

    @property
    def amendments(self) -> tuple[str, ...]:
        """The rule's own amendments and those of its requirements."""
        return amendments(self.requirements, self.amended_by)


@dataclass(frozen=True)
class CheckResult:
    name: str
    outcome: Outcome
    requirements: tuple[RequirementRef, ...] = ()
    check_ids: tuple[str, ...] = ()
    reason: str = ""
    example: Example | None = None
    duration: float = 0.0
    # Failures are summarised per group (one smallest example each); "" means the name's parent.
    group: str = ""
    # Amendments behind this check's requirements or its expected answer.
    amended_by: tuple[str, ...] = ()
    # Each broken rule, charged to its own requirement; empty: the whole check failed as one.
    failures: tuple[RuleFailure, ...] = ()
    # The implementation could not be started or reached: nothing was judged, and the run
    # fails whatever --enforce says (the failure is charged to no requirement).
    blocking: bool = False

    @property
    def level(self) -> str:
        return level_of(self.requirements)

    @property
    def family(self) -> str:
        return self.group or self.name.rsplit("/", 1)[0]

    def broken(self) -> tuple[RuleFailure, ...]:
        """What failed: the per-rule failures, or the whole check as one cause."""
        if self.failures:
            return self.failures
        return (RuleFailure(self.requirements, self.reason, self.reason, self.example),)

    @property
    def failed_level(self) -> str:
        """The strongest level among the broken rules (what --enforce judges)."""
        return level_of([r for f in self.broken() for r in f.requirements])


# ------------------------------------------------------------------ selection


class Selector:
    """--select and --deselect: a check is selected when its name, one of its requirement ids
    or one of the amendments behind it matches a --select pattern (no patterns selects
    everything) and none matches a --deselect pattern. fnmatch globs, case-sensitive."""

    def __init__(self, patterns: Sequence[str] = (), deselect: Sequence[str] = ()) -> None:
        self.patterns = tuple(patterns)
        self.deselect = tuple(deselect)

    def __bool__(self) -> bool:
        return bool(self.patterns or self.deselect)

    def matches(
        self, name: str, requirement_ids: Iterable[str] = (), amended_by: Iterable[str] = ()
    ) -> bool:
        keys = (name, *requirement_ids, *amended_by)
        if any(fnmatch.fnmatchcase(k, p) for p in self.deselect for k in keys):
            return False
        if not self.patterns:
            return True
        return any(fnmatch.fnmatchcase(k, p) for p in self.patterns for k in keys)

    def excludes(
        self, name: str, requirement_ids: Iterable[str] = (), amended_by: Iterable[str] = ()
    ) -> bool:
        """Whether a --deselect pattern names this check (whatever --select says)."""
        keys = (name, *requirement_ids, *amended_by)
        return any(fnmatch.fnmatchcase(k, p) for p in self.deselect for k in keys)


# ------------------------------------------------------------------ expected failures


@dataclass(frozen=True)
class StaleEntry:
    pattern: str
    line: int
    reason: str


_COMMENT: Final = re.compile(r"(?:^|\s)#")
MESSAGE_SEPARATOR: Final = " :: "  # "PATTERN :: expected message" (names may hold ":" or "#")


def _matches(name: str, pattern: str) -> bool:
    return name == pattern or fnmatch.fnmatchcase(name, pattern)  # "[" in a name is literal


@dataclass(frozen=True)
class _Entry:
    pattern: str
    line: int
    message: str = ""  # the failure must say this (a substring of a reason), if given

    def explains(self, result: CheckResult) -> bool:
        if not self.message:
            return True
        reasons = [result.reason, *(f.reason or f.cause for f in result.failures)]
        return any(self.message in r for r in reasons)


class ExpectedFailures:
    """A list of check names or globs, one per line, ``#`` starting a comment, optionally
    followed by `` :: `` and the message the failure must carry.

    A listed check that fails (for the listed reason, when one is given) is an expected
    failure; failing for another reason is an unexpected failure. An entry is *stale* (and
    fails the run) when the checks it matches ran and none failed, or when it matches no check
    of the suite at all: either way the list claims something that is no longer true. An entry
    that matches only skipped (or deselected) checks is *unconfirmed*: reported, not failing.
    An entry whose first path segment names another suite (``server/...`` in a ``functions``
    run) is left to that suite.
    """

    def __init__(
        self, entries: Sequence[tuple[str, int] | tuple[str, int, str]] = (), source: str = ""
    ) -> None:
        self.entries = [_Entry(*e) for e in entries]
        self.source = source
        self.unconfirmed: list[StaleEntry] = []

    @classmethod
    def parse(cls, text: str, source: str = "") -> ExpectedFailures:
        entries: list[tuple[str, int, str]] = []
        for number, raw in enumerate(text.splitlines(), start=1):
            # "#" starts a comment at the start of a line or after white space only: check
            # names may hold "#" ("github:create_issue#3a91c7d2").
            line = _COMMENT.split(raw, maxsplit=1)[0]
            pattern, _, message = line.partition(MESSAGE_SEPARATOR)
            if pattern.strip():
                entries.append((pattern.strip(), number, message.strip()))
        return cls(entries, source)

    @classmethod
    def load(cls, path: str | Path) -> ExpectedFailures:
        return cls.parse(Path(path).read_text(encoding="utf-8"), str(path))

    def apply(
        self, suite: str, results: Sequence[CheckResult], suite_names: Collection[str]
    ) -> tuple[list[CheckResult], list[StaleEntry]]:
        """(results with listed failures turned into expected failures, stale entries);
        entries that matched only skipped or deselected checks end up in `unconfirmed`.

        `suite_names` is every check name the suite defines, selected or not: an entry matching
        only deselected checks is neither confirmed nor stale.
        """
        mine = [e for e in self.entries if fnmatch.fnmatchcase(suite, e.pattern.split("/", 1)[0])]
        out = list(results)
        stale: list[StaleEntry] = []
        self.unconfirmed = []
        for entry in mine:
            hits = [i for i, r in enumerate(out) if _matches(r.name, entry.pattern)]
            failed = [i for i in hits if out[i].outcome in (Outcome.FAIL, Outcome.XFAIL)]
            passed = [i for i in hits if out[i].outcome is Outcome.PASS]
            explained = [i for i in failed if entry.explains(out[i])]
            for i in explained:
                out[i] = replace(out[i], outcome=Outcome.XFAIL)
            if failed:
                if not explained:
                    shown = out[failed[0]].reason[:120]
                    stale.append(
                        StaleEntry(
                            entry.pattern,
                            entry.line,
                            f"fails for another reason than {entry.message!r}: {shown}",
                        )
                    )
                continue
            if passed:
                shown = out[passed[0]].name + (f" and {len(passed) - 1} more" if passed[1:] else "")
                stale.append(StaleEntry(entry.pattern, entry.line, f"now passes: {shown}"))
            elif hits:
                self.unconfirmed.append(
                    StaleEntry(
                        entry.pattern, entry.line, f"matches only skipped checks ({len(hits)})"
                    )
                )
            elif not any(_matches(n, entry.pattern) for n in suite_names):
                stale.append(StaleEntry(entry.pattern, entry.line, "matches no check"))
            else:
                self.unconfirmed.append(
                    StaleEntry(entry.pattern, entry.line, "matches only checks that did not run")
                )
        return out, stale


# ------------------------------------------------------------------ the report


ENFORCE: Final = {
    # --enforce LEVEL: the failures that fail the run. A check with no stated level fails it
    # under "should" (nothing says it is optional); MAY-only checks never do.
    "must": frozenset({"MUST", "MUST NOT"}),
    "should": frozenset({"MUST", "MUST NOT", "SHOULD", "SHOULD NOT", ""}),
}


@dataclass
class Report:
    """One suite's run. `info` carries layer-specific facts (seed, implementation, ...)."""

    suite: str
    results: list[CheckResult]
    stale: list[StaleEntry] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    unconfirmed: list[StaleEntry] = field(default_factory=list)
    enforce: str = "should"

    def counts(self) -> dict[str, int]:
        out = {o.value: 0 for o in Outcome}
        for r in self.results:
            out[r.outcome.value] += 1
        out["total"] = len(self.results)
        out["stale"] = len(self.stale)
        return out

    def enforced(self, result: CheckResult) -> bool:
        """Whether this failed check fails the run under --enforce."""
        if result.outcome is not Outcome.FAIL:
            return False
        return result.blocking or result.failed_level in ENFORCE[self.enforce]

    @property
    def ok(self) -> bool:
        return not self.stale and not any(self.enforced(r) for r in self.results)

    def exit_status(self) -> int:
        """0 when nothing enforced failed unexpectedly and no expected-failure entry is stale."""
        return 0 if self.ok else 1


# ------------------------------------------------------------------ progress


class Progress:
    """A counter on stderr: one line rewritten in place on a terminal, else a line every
    `interval` seconds (logs of CI runs stay short but show that something moves)."""

    def __init__(
        self,
        label: str,
        total: int,
        stream: TextIO | None = None,
        *,
        enabled: bool = True,
        interval: float = 5.0,
    ) -> None:
        self.label = label
        self.total = total
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = enabled and self.stream.isatty()
        self.interval = interval if not self.tty else 0.1
        self.done = 0
        self.failed = 0
        self.checks: int | None = None  # checks reported, when `total` counts families
        self._last: float | None = None  # the first check is always shown

    def advance(self, result: CheckResult) -> None:
        self.done += 1
        self.failed += result.outcome is Outcome.FAIL
        self._tick()

    def advance_family(self, results: Sequence[CheckResult]) -> None:
        """One family done, with the checks it reported (layer 2: `total` counts families,
        and the line counts checks and failed checks as the report does)."""
        self.done += 1
        self.checks = (self.checks or 0) + len(results)
        self.failed += sum(r.outcome is Outcome.FAIL for r in results)
        self._tick()

    def _tick(self) -> None:
        now = time.monotonic()
        due = self._last is None or now - self._last >= self.interval
        if self.enabled and (due or self.done == self.total):
            self._last = now
            self._emit()

    def _emit(self) -> None:
        if self.checks is None:
            line = f"{self.label}: {self.done}/{self.total} checks, {self.failed} failed"
        else:
            line = (
                f"{self.label}: {self.done}/{self.total} families, {self.checks} checks, "
                f"{self.failed} failed"
            )
        if self.tty:
            self.stream.write(f"\r\033[K{line}")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\r\033[K")
            self.stream.flush()


def summary_by_requirement(results: Iterable[CheckResult]) -> dict[str, dict[str, Any]]:
    """requirement id -> {"level", "amended_by", and a count per outcome}: which requirements
    this run evidenced, and how they fared. A failed check counts as a failure only for the
    requirements of the rules it broke; for its other requirements it counts as a pass."""
    out: dict[str, dict[str, Any]] = {}
    for r in results:
        broken = {q.id for f in r.broken() for q in f.requirements}
        refs = dict.fromkeys([*r.requirements, *(q for f in r.broken() for q in f.requirements)])
        for ref in refs:
            row = out.setdefault(
                ref.id,
                {"level": ref.level, "amended_by": ref.amended_by, **{o.value: 0 for o in Outcome}},
            )
            outcome = r.outcome
            if outcome in (Outcome.FAIL, Outcome.XFAIL) and ref.id not in broken:
                outcome = Outcome.PASS
            row[outcome.value] += 1
    return out
