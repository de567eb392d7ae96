"""Deliberately broken adapters: the right checks fail, naming the right requirements; crashes
and hangs fail cases with a reason and never hang the runner."""

from __future__ import annotations

import sys
import textwrap
import time
from pathlib import Path

import pytest

from gatespec_conformance.functions.run import START, Case, build_cases, run_cases
from gatespec_conformance.report import CheckResult, Outcome, Report

HEADER = """\
import hashlib, json, os, re, sys, time
from gatespec.adapter import reference_answer, serve
"""


def adapter(directory: Path, name: str, body: str) -> list[str]:
    """A Python adapter: `answer(fn, inp)` in `body`, falling back to the reference."""
    path = directory / f"{name}.py"
    path.write_text(HEADER + textwrap.dedent(body) + "\nsys.exit(serve(answer))\n")
    return [sys.executable, str(path)]


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    return build_cases(seed=0, max_examples=2)


def failures(results: list[CheckResult]) -> list[CheckResult]:
    return [r for r in results if r.outcome is Outcome.FAIL]


def test_hash8_over_the_wrong_input(tmp_path, cases) -> None:
    cmd = adapter(
        tmp_path,
        "hash_name_only",
        """
        def answer(fn, inp):
            if fn == "hash8":  # forgets the newline and the schema shape
                return {"ok": hashlib.sha256(inp["upstream_name"].encode()).hexdigest()[:8]}
            return reference_answer(fn, inp)
        """,
    )
    results, _ = run_cases(cmd, cases)
    failed = failures(results)
    assert failed and {r.name.split("/")[1] for r in failed} == {"hash8"}
    vector = next(r for r in failed if r.name.startswith("functions/hash8/vectors/hash8/"))
    assert "HASH-INPUT" in [q.id for q in vector.requirements]
    assert vector.level == "MUST" and vector.reason == "answer differs"
    assert vector.example is not None and vector.example.input["upstream_name"]
    assert vector.example.expected["ok"] != vector.example.got["ok"]
    drawn = [r for r in failed if r.name.startswith("functions/hash8/shape/")]
    assert drawn and all(
        "HASH-IGNORES-TYPES-AND-DESCRIPTIONS" in [q.id for q in r.requirements] for r in drawn
    )


def test_trailing_newline_accepted(tmp_path, cases) -> None:
    cmd = adapter(
        tmp_path,
        "dollar_match",
        """
        from gatespec_surface.grammars import GRAMMARS
        def answer(fn, inp):
            if fn == "grammar_match":  # re.match + "$" accepts "value\\n"
                info = GRAMMARS[inp["grammar"]]
                if info.max_length is not None and len(inp["value"]) > info.max_length:
                    return {"error": info.error.value}
                if re.match("(?:" + info.pattern + ")$", inp["value"]):
                    return {"ok": True}
                return {"error": info.error.value}
            return reference_answer(fn, inp)
        """,
    )
    results, _ = run_cases(cmd, cases)
    failed = {r.name: r for r in failures(results)}
    assert failed and all("\n" in r.example.input["value"] for r in failed.values() if r.example)
    name = "functions/grammar_match/vectors/grammars/tool_id/invalid/'github:create_issue\\n'"
    assert name in failed
    assert "TOOLID-GRAMMAR" in [q.id for q in failed[name].requirements]
    assert failed[name].reason == "expected error CATALOG_ERROR, got success"
    path_case = "functions/grammar_match/vectors/grammars/path/invalid/'/github\\n'"
    # the full-match rule's (AM-FULLMATCH), not the path grammar's bounds (AM-PATH-BOUNDS)
    assert [q.id for q in failed[path_case].requirements] == ["ERROR-PATH-INVALID"]
    assert failed[path_case].amended_by == ("AM-FULLMATCH",)


def test_wrong_error_code(tmp_path, cases) -> None:
    cmd = adapter(
        tmp_path,
        "wrong_code",
        """
        def answer(fn, inp):
            got = reference_answer(fn, inp)
            if fn == "grammar_match" and got.get("error") == "PATH_INVALID":
                return {"error": "CATALOG_ERROR", "message": "bad path"}
            return got
        """,
    )
    results, _ = run_cases(cmd, cases)
    failed = failures(results)
    assert failed and all(
        r.reason == "expected error PATH_INVALID, got CATALOG_ERROR" for r in failed
    )
    invalid = [r for r in failed if r.name.startswith("functions/grammar_match/path/invalid/")]
    assert invalid and all("ERROR-PATH-INVALID" in [q.id for q in r.requirements] for r in invalid)
    assert invalid[0].example is not None
    assert invalid[0].example.got == {"error": "CATALOG_ERROR", "message": "bad path"}


def test_crash_mid_run_fails_the_rest_with_a_reason(tmp_path, cases) -> None:
    cmd = adapter(
        tmp_path,
        "crash",
        """
        answered = 0
        def answer(fn, inp):
            global answered
            answered += 1
            if answered > 20:
                print("boom: out of cheese", file=sys.stderr, flush=True)
                os._exit(3)
            return reference_answer(fn, inp)
        """,
    )
    subset = cases[:60]
    results, info = run_cases(cmd, subset, restarts=0)
    assert [r.outcome for r in results[:20]] == [Outcome.PASS] * 20
    crashed = results[20]
    assert crashed.outcome is Outcome.FAIL
    assert "exited with status 3" in crashed.reason and "out of cheese" in crashed.reason
    rest = results[21:]  # one failure, not one per case left: the rest is skipped, named
    assert rest and all(r.outcome is Outcome.SKIP and r.reason.startswith("not run:") for r in rest)
    assert all(crashed.name in r.reason for r in rest)

    # With restarts, the adapter comes back: only every 21st case fails.
    results, info = run_cases(cmd, subset, restarts=5)
    assert info.restarts == 2
    assert [i for i, r in enumerate(results) if r.outcome is Outcome.FAIL] == [20, 41]


def test_hang_times_out_without_hanging_the_runner(tmp_path, cases) -> None:
    cmd = adapter(
        tmp_path,
        "hang",
        """
        def answer(fn, inp):
            if fn == "hash8":
                time.sleep(3600)
            return reference_answer(fn, inp)
        """,
    )
    subset = [c for c in cases if c.function in {"hash8", "parse_path"}]
    began = time.monotonic()
    results, info = run_cases(cmd, subset, timeout=0.5, restarts=1)
    assert time.monotonic() - began < 15
    hash8 = [r for r in results if "/hash8/" in r.name]
    assert hash8[0].reason == "no answer within 0.5s" and hash8[1].reason == "no answer within 0.5s"
    assert all(r.outcome is Outcome.FAIL for r in hash8[:2])
    assert all(r.outcome is Outcome.SKIP for r in hash8[2:])  # not run: restarts used up
    assert any(r.reason.startswith("not run:") and "--restarts 1" in r.reason for r in results)
    assert info.restarts == 1


def test_adapter_that_cannot_start_is_one_failure(cases) -> None:
    results, _ = run_cases(["/nonexistent/adapter-binary"], cases[:5])
    (failed,) = [r for r in results if r.outcome is Outcome.FAIL]
    assert failed.name == START and "adapter did not start" in failed.reason
    assert failed.requirements == () and failed.blocking  # charged to nothing, fails the run
    assert Report("functions", results, enforce="must").exit_status() == 1
    rest = [r for r in results if r is not failed]
    assert len(rest) == 5 and all(r.outcome is Outcome.SKIP for r in rest)
    assert all("not run: adapter did not start" in r.reason for r in rest)


def test_a_finished_run_keeps_the_adapters_stderr_tail(tmp_path, cases) -> None:
    cmd = adapter(
        tmp_path,
        "warns",
        """
        print("warning: tokenizer fell back to an estimate", file=sys.stderr, flush=True)
        def answer(fn, inp):
            return reference_answer(fn, inp)
        """,
    )
    results, info = run_cases(cmd, cases[:3])
    assert all(r.outcome is Outcome.PASS for r in results)
    assert any("tokenizer fell back" in n for n in info.notes)


def test_bad_handshake_and_garbage_output(tmp_path, cases) -> None:
    silent = tmp_path / "silent.py"
    silent.write_text("import sys\nfor line in sys.stdin:\n    print('hello there', flush=True)\n")
    results, _ = run_cases([sys.executable, str(silent)], cases[:3], startup_timeout=5)
    assert all("not JSON" in r.reason for r in results)

    cmd = adapter(
        tmp_path,
        "both",
        """
        def answer(fn, inp):
            return {"ok": 1, "error": "CATALOG_ERROR"} if fn == "hash8" else reference_answer(fn, inp)
        """,
    )
    results, _ = run_cases(cmd, [c for c in cases if c.function == "hash8"][:2])
    assert all(r.reason.startswith("protocol: an answer has exactly one of") for r in results)
