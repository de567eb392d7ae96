"""A vector where the seeds disagree lists every answer a seed permits (`seed_expect_any`):
at --level seed any of them passes, and any other answer still fails.

aggregate_names/reject/single-underscore: seed 001 "Route namespaced tool": "router resolves
"server1_myTool" to server "server1" and tool "myTool""; seed 004 Principle 5: "ALL
non-broadcast requests ... MUST be namespaced with the `server__name` format" and "Non-namespaced
requests are rejected". The spec (AM-AGGREGATE-SEPARATOR) answers NOT_NAMESPACED.
"""

from __future__ import annotations

from typing import Any

import pytest

from gatespec_conformance.functions.cases import vector_cases
from gatespec_conformance.functions.run import judge
from gatespec_conformance.report import Outcome

NAME = "single-underscore"
SEED_001 = {"ok": {"server": "server1", "tool": "myTool"}}  # seed 001's own example
SEED_004 = {"error": "NOT_NAMESPACED"}  # seed 004 Principle 5


def _case(level: str) -> Any:
    (case,) = [
        c
        for c in vector_cases()
        if c.function == "parse_aggregate_name" and c.name.endswith(f"reject/{NAME}")
    ]
    return case.at_level(level)


@pytest.mark.parametrize("answer", [SEED_001, SEED_004])
def test_either_seeds_answer_passes_at_seed_level(answer: dict[str, Any]) -> None:
    assert judge(_case("seed"), answer).outcome is Outcome.PASS


@pytest.mark.parametrize(
    "answer",
    [
        {"ok": {"server": "server1_myTool", "tool": ""}},
        {"ok": {"server": "server1", "tool": "mytool"}},
        {"ok": {"server": "server", "tool": "1_myTool"}},
        {"error": "NAME_INVALID"},
        {"error": "UNKNOWN_SERVER"},
    ],
)
def test_any_other_answer_still_fails_at_seed_level(answer: dict[str, Any]) -> None:
    assert judge(_case("seed"), answer).outcome is Outcome.FAIL


def test_the_spec_level_keeps_its_one_answer() -> None:
    assert judge(_case("spec"), SEED_004).outcome is Outcome.PASS
    assert judge(_case("spec"), SEED_001).outcome is Outcome.FAIL


def test_the_vector_file_states_both_seed_answers() -> None:
    """What the kit reads is what spec/vectors.yaml states, through the generated files."""
    import json
    from importlib import resources

    folder = resources.files("gatespec_surface.vectors")
    doc = json.loads((folder / "aggregate_names.json").read_text())
    (case,) = [c for c in doc["cases"] if c["name"] == f"reject/{NAME}"]
    assert case["seed_expect_any"] == [SEED_001, SEED_004] and "seed_expect" not in case
    meta = json.loads((folder / "meta-schema.json").read_text())
    item = meta["properties"]["cases"]["items"]["properties"]["seed_expect_any"]
    assert item["minItems"] == 2
