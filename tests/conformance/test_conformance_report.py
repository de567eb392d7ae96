"""Reports: expected failures (stale entries included), JSON and JUnit, --select, progress."""

from __future__ import annotations

import io
import json
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gatespec_conformance import cli
from gatespec_conformance.formats import report_json, write_junit, write_text
from gatespec_conformance.functions.run import same_json
from gatespec_conformance.report import (
    CheckResult,
    Example,
    ExpectedFailures,
    Outcome,
    Progress,
    Report,
    RequirementRef,
    Selector,
    requirements_for,
)

EXAMPLE_LIST = Path(__file__).resolve().parents[2] / "docs" / "examples" / "expected-failures.txt"


def result(name: str, outcome: Outcome = Outcome.PASS, **kw) -> CheckResult:
    return CheckResult(name, outcome, **kw)


# ------------------------------------------------------------------ expected failures


def test_expected_failures_parse_and_apply() -> None:
    listed = ExpectedFailures.parse(
        textwrap.dedent(
            """\
            # known gaps
            functions/hash8/*          # glob: some fail
            functions/parse_path/a     # passes now: stale
            functions/nothing/*        # matches no check: stale
            functions/skipped/x        # only skipped: neither
            server/tools_list/*        # another suite's entry: ignored here
            """
        )
    )
    assert [e.pattern for e in listed.entries][:2] == [
        "functions/hash8/*",
        "functions/parse_path/a",
    ]
    results = [
        result("functions/hash8/1", Outcome.FAIL, reason="answer differs"),
        result("functions/hash8/2"),
        result("functions/parse_path/a"),
        result("functions/skipped/x", Outcome.SKIP),
    ]
    names = [r.name for r in results]
    out, stale = listed.apply("functions", results, names)
    assert [r.outcome for r in out] == [Outcome.XFAIL, Outcome.PASS, Outcome.PASS, Outcome.SKIP]
    assert [(s.pattern, s.line) for s in stale] == [
        ("functions/parse_path/a", 3),
        ("functions/nothing/*", 4),
    ]
    assert stale[0].reason.startswith("now passes") and stale[1].reason == "matches no check"
    report = Report("functions", out, stale)
    assert report.exit_status() == 1
    assert Report("functions", out, []).exit_status() == 0


def test_hash_inside_a_check_name_is_not_a_comment() -> None:
    name = "functions/parse_tool_id/vectors/tool_ids/parse/seed/slack:x#3a91c7d2"
    listed = ExpectedFailures.parse(f"{name}   # a comment\n#whole line\n")
    assert [e.pattern for e in listed.entries] == [name]
    out, stale = listed.apply("functions", [result(name, Outcome.FAIL)], [name])
    assert out[0].outcome is Outcome.XFAIL and stale == []


def test_deselected_entries_are_not_stale() -> None:
    listed = ExpectedFailures.parse("functions/a/*\n")
    out, stale = listed.apply(
        "functions", [result("functions/b/1")], ["functions/a/1", "functions/b/1"]
    )
    assert stale == [] and out[0].outcome is Outcome.PASS


def test_docs_example_list_parses() -> None:
    listed = ExpectedFailures.load(EXAMPLE_LIST)
    assert listed.entries and all("/" in e.pattern for e in listed.entries)


# ------------------------------------------------------------------ select, requirements


def test_selector_by_glob_and_requirement() -> None:
    assert Selector().matches("anything")
    sel = Selector(["functions/hash8/*", "PATH-GRAMMAR"])
    assert sel.matches("functions/hash8/vectors/hash8/x")
    assert sel.matches("functions/grammar_match/path/valid/0001", ["PATH-GRAMMAR"])
    assert not sel.matches("functions/parse_path/parse/0001", ["PATH-ROOT-SEGMENT-NAMESPACE"])
    assert Selector(["HASH-*"]).matches("x", ["HASH-INPUT"])


def test_requirements_for_uses_the_generated_checks() -> None:
    refs = requirements_for(["vectors.hash8"])
    assert RequirementRef("HASH-INPUT", "MUST") in refs
    assert requirements_for(["no.such.check"]) == ()


def test_same_json_is_strict_about_booleans() -> None:
    assert same_json({"a": [1, 2.0]}, {"a": [1.0, 2]})
    assert not same_json(True, 1) and not same_json(0, False)
    assert not same_json({"a": 1}, {"a": 1, "b": None})
    assert not same_json("1", 1) and same_json(None, None)


# ------------------------------------------------------------------ formats


def sample_report() -> Report:
    refs = (RequirementRef("HASH-INPUT", "MUST"),)
    results = [
        result(
            "functions/hash8/vectors/hash8/0",
            Outcome.FAIL,
            requirements=refs,
            reason="answer differs",
            example=Example({"upstream_name": "a\x00"}, {"ok": "1"}, {"ok": "2"}),
        ),
        result("functions/parse_path/parse/0001", requirements=refs),
        result(
            "functions/count_tokens/text/0001",
            Outcome.SKIP,
            reason="unsupported by the adapter: count_tokens",
        ),
        result("functions/hash8/shape/0001", Outcome.XFAIL, reason="answer differs"),
    ]
    stale = ExpectedFailures.parse("functions/parse_path/*\n").apply("functions", results, [])[1]
    return Report("functions", results, stale, {"seed": 0, "implementation": "x"})


def test_json_report() -> None:
    doc = json.loads(json.dumps(report_json(sample_report())))
    assert doc["format"] == "gatespec-conformance-report/1" and doc["ok"] is False
    names = {c["name"]: c for c in doc["checks"]}
    failed = names["functions/hash8/vectors/hash8/0"]
    assert failed["outcome"] == "fail" and failed["level"] == "MUST"
    assert failed["requirements"] == [{"id": "HASH-INPUT", "level": "MUST", "amended_by": None}]
    assert failed["amended_by"] == [] and failed["failures"][0]["cause"] == "answer differs"
    assert failed["example"] == {
        "input": {"upstream_name": "a\x00"},
        "expected": {"ok": "1"},
        "got": {"ok": "2"},
    }
    assert "example" not in names["functions/parse_path/parse/0001"]
    assert doc["summary"]["expected-failure"] == 1 and doc["summary"]["stale"] == 1
    assert doc["stale"][0]["pattern"] == "functions/parse_path/*"
    assert doc["requirements"]["HASH-INPUT"] == {
        "level": "MUST",
        "amended_by": None,
        "pass": 1,
        "fail": 1,
        "skip": 0,
        "expected-failure": 0,
    }


def test_junit_report(tmp_path) -> None:
    path = tmp_path / "junit.xml"
    write_junit([sample_report()], path)
    root = ET.parse(path).getroot()
    suite = root.find("testsuite")
    assert suite is not None and suite.get("name") == "functions"
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert cases["functions/hash8/vectors/hash8/0"].find("failure") is not None
    props = [
        (p.get("name"), p.get("value"))
        for p in cases["functions/hash8/vectors/hash8/0"].iter("property")
    ]
    assert ("requirement", "HASH-INPUT") in props
    assert cases["functions/count_tokens/text/0001"].find("skipped") is not None
    assert cases["expected-failures/functions/parse_path/*"].find("failure") is not None
    assert suite.get("failures") == "2" and suite.get("tests") == "5"


def test_text_report() -> None:
    out = io.StringIO()
    write_text(sample_report(), out)
    text = out.getvalue()
    assert "FAIL functions/hash8/vectors/hash8: 1 of 1 checks failed" in text
    assert "HASH-INPUT (MUST)" in text and "STALE" in text and "-> FAILED" in text


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal_and_in_a_log() -> None:
    tty = _Tty()
    progress = Progress("functions", 3, tty)
    for _ in range(3):
        progress.advance(result("x"))
    progress.close()
    assert "\r\033[Kfunctions: 3/3 checks, 0 failed" in tty.getvalue()
    log = io.StringIO()
    progress = Progress("functions", 2, log, interval=3600)
    progress.advance(result("x", Outcome.FAIL))
    progress.advance(result("y"))
    assert log.getvalue().splitlines() == [
        "functions: 1/2 checks, 1 failed",
        "functions: 2/2 checks, 1 failed",
    ]


# ------------------------------------------------------------------ the command line


BROKEN_HASH8 = """\
import hashlib, sys
from gatespec.adapter import reference_answer, serve
def answer(fn, inp):
    if fn == "hash8":
        return {"ok": hashlib.sha256(inp["upstream_name"].encode()).hexdigest()[:8]}
    return reference_answer(fn, inp)
sys.exit(serve(answer))
"""


@pytest.fixture()
def broken(tmp_path) -> list[str]:
    path = tmp_path / "broken_hash8.py"
    path.write_text(BROKEN_HASH8)
    return [sys.executable, str(path)]


def run_cli(tmp_path, broken, *options: str) -> tuple[int, dict]:
    out = tmp_path / "report.json"
    argv = [
        "functions",
        "--max-examples",
        "2",
        "-q",
        "--format",
        "json",
        "-o",
        str(out),
    ]
    status = cli.main([*argv, *options, "--", *broken])
    return status, json.loads(out.read_text())


def test_cli_expected_failures_and_stale(tmp_path, broken) -> None:
    status, doc = run_cli(tmp_path, broken)
    assert status == 1 and doc["summary"]["fail"] > 0
    listed = tmp_path / "xfail.txt"
    listed.write_text("# hash8 is known broken\nfunctions/hash8/*\n")
    junit = tmp_path / "junit.xml"
    status, doc = run_cli(
        tmp_path, broken, "--expected-failures", str(listed), "--junit", str(junit)
    )
    assert status == 0 and doc["summary"]["fail"] == 0 and doc["summary"]["expected-failure"] > 0
    names = {c.get("name") for c in ET.parse(junit).getroot().iter("testcase")}
    assert {c["name"] for c in doc["checks"]} == names
    listed.write_text("functions/hash8/*\nfunctions/parse_path/*  # passes: stale\n")
    status, doc = run_cli(tmp_path, broken, "--expected-failures", str(listed))
    assert status == 1 and doc["stale"][0]["pattern"] == "functions/parse_path/*"


def test_cli_select_by_glob_and_requirement(tmp_path, broken, capsys) -> None:
    status, doc = run_cli(tmp_path, broken, "--select", "functions/parse_path/*")
    assert status == 0 and doc["checks"]
    assert all(c["name"].startswith("functions/parse_path/") for c in doc["checks"])
    status, doc = run_cli(tmp_path, broken, "--select", "HASH-INPUT")
    assert status == 1
    assert all(any(r["id"] == "HASH-INPUT" for r in c["requirements"]) for c in doc["checks"])
    assert cli.main(["functions", "--max-examples", "0", "--list", "--select", "PATH-*"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed and all("PATH-" in line for line in listed)
    assert cli.main(["functions", "--max-examples", "0", "--select", "nope/*"]) == 2


def test_cli_missing_expected_failures_file(tmp_path) -> None:
    argv = ["functions", "--expected-failures", str(tmp_path / "missing.txt")]
    assert cli.main(argv) == 2
