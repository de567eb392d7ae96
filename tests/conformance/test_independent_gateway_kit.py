"""The kit is fair to an independent implementation of seeds 000/002 (tests/independent_gateway:
answers as JSON text, an extra `retryable` in its errors, its own handles, namespaces inferred
per §1.4): at --level seed it fails nothing unexpected, and at --level spec every failure rests
on an amendment or on a rule the spec states alone (each named in the report).

The only seed-level failure is a real one, listed with its message: one card line is over the
60-token target (BUDGET-TARGETS, a SHOULD).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conformance.mutants.harness import outcomes, run_kit

ROOT = Path(__file__).resolve().parents[2]
IUT = [sys.executable, "-m", "tests.independent_gateway", "--config", "{mcp_config}"]
# Real deviations of the independent gateway from the seeds, with the message each gives.
KNOWN = "server/gateway/cards/target/summarise:* :: the target is 60\n"
_QUICK = [
    "server/gateway/errors/payload",
    "server/gateway/catalog/tool-id",
    "server/gateway/browse/path-invalid",
]


def run(tmp_path: Path, profile: str, level: str, select: list[str] = ()) -> tuple[int, dict]:
    return run_kit(
        tmp_path,
        profile,
        command=[*IUT, "--profile", profile],
        options=["--level", level, "--hang-timeout", "5", "--timeout", "10"],
        select=select,
        expected_failures=KNOWN,
    )


def unbased(report: dict) -> list[tuple[str, str]]:
    """Failures that rest on neither an amendment nor a spec-only rule."""
    return [
        (c["name"], f["cause"])
        for c in outcomes(report, "fail")
        for f in c["failures"]
        if not f["amended_by"] and not f["spec_only"]
    ]


def test_quick_seed_and_spec(tmp_path: Path) -> None:
    status, seed = run(tmp_path, "gateway", "seed", _QUICK)
    assert status == 0 and outcomes(seed, "fail") == []
    status, spec = run(tmp_path, "gateway", "spec", _QUICK)
    assert status == 1 and outcomes(spec, "fail")
    assert unbased(spec) == []
    closed = [f for c in outcomes(spec, "fail") for f in c["failures"] if "retryable" in str(f)]
    assert closed and all(f["spec_only"] or f["amended_by"] for f in closed)  # spec rule only


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("profile", ["gateway", "transparent"])
def test_whole_kit_at_both_levels(tmp_path: Path, profile: str) -> None:
    status, seed = run(tmp_path, profile, "seed")
    assert [c["name"] for c in outcomes(seed, "fail")] == [] and status == 0
    assert seed["stale"] == [] or profile == "transparent"  # KNOWN is the gateway's
    status, spec = run(tmp_path, profile, "spec")
    assert status == 1
    seed_failed = {c["name"] for c in outcomes(seed, "expected-failure")}
    assert [(n, c) for n, c in unbased(spec) if n not in seed_failed] == []
