"""The ways a conformance report is shown: text for a person, JSON (REPORT_FORMAT) for a
program, JUnit XML for CI. Each renders a `report.Report` and changes nothing in it."""

from __future__ import annotations

import json
import re
import unicodedata
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, TextIO

from gatespec_conformance.report import (
    LEVEL_RANK,
    REPORT_FORMAT,
    CheckResult,
    Example,
    Outcome,
    Report,
    RequirementRef,
    RuleFailure,
    summary_by_requirement,
)

__all__ = ["causes", "report_json", "write_junit", "write_text"]


def _escape(ch: str) -> str:
    return f"\\u{ord(ch):04x}" if ord(ch) < 0x10000 else f"\\U{ord(ch):08x}"


def _show(value: Any, limit: int = 400) -> str:
    """Readable JSON (CJK stays CJK) with control, format and separator characters escaped,
    so a hostile input cannot rewrite the terminal or break the line."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    text = "".join(
        _escape(ch) if unicodedata.category(ch)[0] in "CZ" and ch != " " else ch for ch in text
    )
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _size(example: Example | None) -> int:
    return len(_show(example.input, 10**9)) if example else 0


def _refs(requirements: Sequence[RequirementRef]) -> str:
    return ", ".join(r.shown() for r in requirements) or "no requirement names it"


def causes(members: Sequence[CheckResult]) -> list[tuple[RuleFailure, CheckResult, int]]:
    """Every distinct way the checks of a family failed: (the smallest failure of that cause,
    its check, how many checks failed that way), most frequent first."""
    found: dict[tuple[tuple[str, ...], str], list[tuple[RuleFailure, CheckResult]]] = {}
    for r in members:
        for f in r.broken():
            key = (tuple(q.id for q in f.requirements), f.cause)
            found.setdefault(key, []).append((f, r))
    out = []
    for hits in found.values():
        f, r = min(hits, key=lambda fr: _size(fr[0].example or fr[1].example))
        out.append((f, r, len({id(r) for _f, r in hits})))
    return sorted(out, key=lambda x: -x[2])


def _write_example(w: Any, example: Example | None, indent: str) -> None:
    if example is not None:
        w(f"{indent}input:    {_show(example.input)}\n")
        w(f"{indent}expected: {_show(example.expected)}\n")
        w(f"{indent}got:      {_show(example.got)}\n")


def write_text(report: Report, stream: TextIO, verbose: bool = False) -> None:
    """Failures grouped by family, each with every distinct cause (its requirement, the
    amendment behind it and its smallest example); then the requirements they break, stale
    entries and the totals. `verbose` lists every failing check as well."""
    w = stream.write
    info = " ".join(f"{k}={v}" for k, v in report.info.items() if v not in (None, ""))
    w(f"gatespec conformance {report.suite}: {info}\n")
    for note in report.notes:
        w(f"note: {note}\n")
    failed = [r for r in report.results if r.outcome is Outcome.FAIL]
    groups: dict[str, list[CheckResult]] = defaultdict(list)
    for r in failed:
        groups[r.family].append(r)
    totals: dict[str, int] = defaultdict(int)
    for r in report.results:
        totals[r.family] += 1
    for group, members in groups.items():
        shown = members[0].amended_by
        amended = f" (amended by {', '.join(shown)})" if shown else ""
        w(f"\nFAIL {group}: {len(members)} of {totals[group]} checks failed{amended}\n")
        for f, r, n in causes(members):
            w(f"  cause: {f.cause} ({n} checks)\n")
            w(f"    requirements: {_refs(f.requirements)}\n")
            if f.amended_by:
                w(f"    amended by: {', '.join(f.amended_by)}\n")
            if f.spec_only:
                w(f"    spec only (no amendment records it): {f.spec_only}\n")
            w(f"    smallest: {r.name}\n")
            if f.reason and f.reason != f.cause:
                w(f"    reason:   {f.reason}\n")
            _write_example(w, f.example or r.example, "    ")
        if verbose:
            for r in members:
                w(f"  check: {r.name}\n    reason:   {r.reason}\n")
                _write_example(w, r.example, "    ")
    broken: dict[RequirementRef, int] = defaultdict(int)
    for r in failed:
        for ref in {q for f in r.broken() for q in f.requirements}:
            broken[ref] += 1
    if broken:
        w("\nrequirements with failing checks:\n")
        for ref, n in sorted(
            broken.items(), key=lambda kv: (LEVEL_RANK.get(kv[0].level, 9), kv[0].id)
        ):
            amended = f" (amended by {ref.amended_by})" if ref.amended_by else ""
            w(f"  {ref.level:<8} {ref.id}{amended}: {n} failing checks\n")
    skipped: dict[str, int] = defaultdict(int)
    for r in report.results:
        if r.outcome is Outcome.SKIP:
            skipped[r.reason] += 1
    for reason, n in sorted(skipped.items()):
        w(f"skip: {n} checks: {reason}\n")
    xfail = [r for r in report.results if r.outcome is Outcome.XFAIL]
    if xfail:
        w(f"expected failures: {len(xfail)} (see --format json for each)\n")
    for entry in report.stale:
        w(f"STALE expected-failure entry line {entry.line} {entry.pattern!r}: {entry.reason}\n")
    for entry in report.unconfirmed:
        w(
            f"unconfirmed expected-failure entry line {entry.line} {entry.pattern!r}: {entry.reason}\n"
        )
    lenient = [r for r in failed if not report.enforced(r)]
    if lenient:
        w(f"not enforced (--enforce {report.enforce}): {len(lenient)} failed checks\n")
    c = report.counts()
    w(
        f"\n{report.suite}: {c['total']} checks: {c['pass']} passed, {c['fail']} failed, "
        f"{c['expected-failure']} expected failures, {c['skip']} skipped, {c['stale']} stale "
        f"entries -> {'OK' if report.ok else 'FAILED'}\n"
    )


# ------------------------------------------------------------------ JSON


def _ref_json(q: RequirementRef) -> dict[str, Any]:
    return {"id": q.id, "level": q.level, "amended_by": q.amended_by}


def _example_json(example: Example) -> dict[str, Any]:
    return {"input": example.input, "expected": example.expected, "got": example.got}


def _result_json(r: CheckResult) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": r.name,
        "outcome": r.outcome.value,
        "level": r.level,
        "requirements": [_ref_json(q) for q in r.requirements],
        "amended_by": list(r.amended_by),
        "checks": list(r.check_ids),
        "duration_ms": round(r.duration * 1000, 3),
    }
    if r.reason:
        out["reason"] = r.reason
    if r.example is not None and r.outcome is not Outcome.PASS:
        out["example"] = _example_json(r.example)
    if r.outcome in (Outcome.FAIL, Outcome.XFAIL):
        out["failures"] = [
            {
                "requirements": [_ref_json(q) for q in f.requirements],
                "cause": f.cause,
                "reason": f.reason,
                "amended_by": list(f.amendments),
                "spec_only": f.spec_only,
                **({"example": _example_json(f.example)} if f.example else {}),
            }
            for f in r.broken()
        ]
    return out


def report_json(report: Report) -> dict[str, Any]:
    """The whole report as one JSON document (format REPORT_FORMAT)."""
    return {
        "format": REPORT_FORMAT,
        "suite": report.suite,
        "ok": report.ok,
        "info": report.info,
        "summary": report.counts(),
        "requirements": summary_by_requirement(report.results),
        "notes": report.notes,
        "stale": [{"pattern": s.pattern, "line": s.line, "reason": s.reason} for s in report.stale],
        "unconfirmed": [
            {"pattern": s.pattern, "line": s.line, "reason": s.reason} for s in report.unconfirmed
        ],
        "enforce": report.enforce,
        "checks": [_result_json(r) for r in report.results],
    }


# ------------------------------------------------------------------ JUnit XML

# XML 1.0 cannot carry most control characters even escaped; inputs here are hostile on purpose.
_XML_BAD: Final = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml(text: str) -> str:
    return _XML_BAD.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def write_junit(reports: Sequence[Report], path: str | Path) -> None:
    """JUnit XML: one <testsuite> per report, one <testcase> per check (name = the check
    name), requirement ids as testcase properties; expected failures are <skipped>, and each
    stale entry is a failing testcase named ``expected-failures/<pattern>``."""
    root = ET.Element("testsuites", name="gatespec conformance")
    for report in reports:
        c = report.counts()
        suite = ET.SubElement(
            root,
            "testsuite",
            name=report.suite,
            tests=str(c["total"] + c["stale"]),
            failures=str(c["fail"] + c["stale"]),
            skipped=str(c["skip"] + c["expected-failure"]),
            errors="0",
            time=f"{sum(r.duration for r in report.results):.3f}",
        )
        props = ET.SubElement(suite, "properties")
        for key, value in report.info.items():
            ET.SubElement(props, "property", name=str(key), value=_xml(str(value)))
        for r in report.results:
            case = ET.SubElement(
                suite,
                "testcase",
                classname=f"gatespec_conformance.{report.suite}",
                name=_xml(r.name),
                time=f"{r.duration:.6f}",
            )
            if r.requirements or r.amended_by:
                cprops = ET.SubElement(case, "properties")
                for ref in r.requirements:
                    ET.SubElement(cprops, "property", name="requirement", value=ref.id)
                    ET.SubElement(cprops, "property", name="level", value=ref.level)
                for amendment in r.amended_by:
                    ET.SubElement(cprops, "property", name="amended_by", value=amendment)
            detail = ""
            if r.example is not None:
                detail = (
                    f"input:    {_show(r.example.input, 4000)}\n"
                    f"expected: {_show(r.example.expected, 4000)}\n"
                    f"got:      {_show(r.example.got, 4000)}\n"
                )
            detail += f"requirements: {_refs(r.requirements)}\n"
            if r.amended_by:
                detail += f"amended by: {', '.join(r.amended_by)}\n"
            if r.outcome is Outcome.FAIL:
                el = ET.SubElement(case, "failure", message=_xml(r.reason), type=r.level or "check")
                el.text = _xml(detail)
            elif r.outcome is Outcome.SKIP:
                ET.SubElement(case, "skipped", message=_xml(r.reason))
            elif r.outcome is Outcome.XFAIL:
                ET.SubElement(case, "skipped", message=_xml(f"expected failure: {r.reason}"))
        for s in report.stale:
            case = ET.SubElement(
                suite,
                "testcase",
                classname=f"gatespec_conformance.{report.suite}",
                name=_xml(f"expected-failures/{s.pattern}"),
            )
            ET.SubElement(case, "failure", message=_xml(f"stale entry (line {s.line}): {s.reason}"))
    ET.indent(root)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
