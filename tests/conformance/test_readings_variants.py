"""End to end: the kit at --level seed reads every representation the seeds permit, and still
fails a wrong answer given in that representation, charged to the rule it breaks. The IUT is
the independent gateway reshaped by tests/conformance/readings_variant.py (its docstring
lists the variants and the seed sentence each rests on)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conformance.mutants.harness import outcomes, run_kit

# The independent gateway's one real seed-level deviation (test_independent_gateway_kit.py).
KNOWN = "server/gateway/cards/target/summarise:* :: the target is 60\n"
_BROWSE = ["server/gateway/browse/*", "server/gateway/cards/*"]
_HYDRATE = ["server/transparent/hydrate/round-trip"]
_VIEW = ["server/gateway/view/*", "server/gateway/errors/*"]


def run(tmp_path: Path, variant: str, profile: str, select: list[str]) -> tuple[int, dict]:
    command = [sys.executable, "-m", "tests.conformance.readings_variant", variant]
    command += ["--config", "{mcp_config}", "--profile", profile]
    return run_kit(
        tmp_path,
        profile,
        command=command,
        options=["--level", "seed"],
        select=select,
        expected_failures=KNOWN if profile == "gateway" else None,
    )


def broken(report: dict) -> set[tuple[str, str]]:
    """(family, requirement id) of every failure."""
    return {
        ("/".join(c["name"].split("/")[2:4]), r["id"])
        for c in outcomes(report, "fail")
        for f in c["failures"]
        for r in f["requirements"]
    }


@pytest.mark.parametrize(
    ("variant", "profile", "select"),
    [
        ("bare-list", "gateway", _BROWSE),
        ("sdk-result", "gateway", _BROWSE),
        ("args-schema", "transparent", _HYDRATE),
        ("hydration-result", "transparent", _HYDRATE),
        ("object-selector", "gateway", _VIEW),
    ],
)
def test_a_permitted_representation_passes(
    tmp_path: Path, variant: str, profile: str, select: list[str]
) -> None:
    status, report = run(tmp_path, variant, profile, select)
    assert [c["name"] for c in outcomes(report, "fail")] == []
    assert status == 0 and report["summary"]["pass"] > 0


@pytest.mark.parametrize(
    ("variant", "profile", "select", "caught"),
    [
        (
            "bare-list,bare-list-banned",
            "gateway",
            ["server/gateway/cards/banned"],
            {("cards/banned", "CARD-NO-SCHEMAS")},
        ),
        (
            "args-schema,args-schema-wrong",
            "transparent",
            _HYDRATE,
            {("hydrate/round-trip", "HYDRATE-SHARED-OPERATION")},
        ),
        (
            "schema-unnamed",
            "transparent",
            _HYDRATE,
            {("hydrate/round-trip", "HYDRATE-SHARED-OPERATION")},
        ),
        (
            "object-selector,object-selector-broken",
            "gateway",
            _VIEW,
            {("view/handles", "VIEW-DRILLDOWN")},
        ),
    ],
)
def test_a_wrong_answer_in_that_representation_still_fails(
    tmp_path: Path, variant: str, profile: str, select: list[str], caught: set
) -> None:
    status, report = run(tmp_path, variant, profile, select)
    assert status == 1
    assert caught <= broken(report)
    families = {family for family, _ in broken(report)}
    assert families == {family for family, _ in caught}  # and nothing else
