"""--level seed still judges what the seed itself states where the exact expected answer rests
on an amendment (truncate_description, annotation_fields), and a failure names the amendment
its expectation rests on at --level spec (and none when the seed's own answer judged it)."""

from __future__ import annotations

from typing import Any

import pytest

from gatespec_conformance.functions.cases import build_cases
from gatespec_conformance.functions.run import judge
from gatespec_conformance.oracle.seed_answers import annotation_property, truncation_property
from gatespec_conformance.report import Outcome

LONG = "First sentence here. Second sentence is rather longer than the first one was."


@pytest.mark.parametrize(
    ("text", "budget", "got"),
    [
        ("Short.", 10, "Short."),  # fits: verbatim
        (LONG, 6, "First sentence here."),  # a §2.4 terminator
        ("one two three four five six seven eight nine ten", 4, "one two three…"),  # hard cut
        ("line one\nline two", 20, "line one line two"),  # made one line (how: seed silent)
        ("", 5, ""),
    ],
)
def test_seed_truncations_pass(text: str, budget: int, got: str) -> None:
    _, judge_of = truncation_property(text, budget)
    assert judge_of(got) is None


@pytest.mark.parametrize(
    ("text", "budget", "got", "why"),
    [
        ("Short.", 10, "Short", "not verbatim"),
        (LONG, 6, "First sentence", "none of §2.4's terminators"),
        (
            "且？丸ゃ严・鵟返！ヷジニ？ダ゜ボ丞？ゖケュ？ゐ业チ？",
            17,
            "且？丸ゃ严・鵟返！",
            "terminators",
        ),
        (LONG, 6, "First sentence here.\nSecond", "more than one line"),
        (LONG, 3, "Other text…", "not a prefix"),
        (LONG, 6, None, "not a string"),
    ],
)
def test_seed_truncations_that_break_the_seed_fail(
    text: str, budget: int, got: Any, why: str
) -> None:
    _, judge_of = truncation_property(text, budget)
    assert why in (judge_of(got) or "")


@pytest.mark.parametrize(
    ("annotations", "got", "ok"),
    [
        ({"costHint": None}, {"side_effects": True, "tags": [], "cost_hint": 0.0}, True),
        ({"costHint": None}, {"side_effects": True, "tags": [], "cost_hint": None}, False),
        ({"costHint": 2.5}, {"side_effects": False, "tags": [], "cost_hint": 2.5}, True),
        ({"costHint": 2.5}, {"side_effects": False, "tags": [], "cost_hint": 0.0}, False),
        ({"costHint": -1}, {"side_effects": True, "tags": [], "cost_hint": 0.0}, True),  # amended
        (
            {"readOnlyHint": True},
            {"side_effects": False, "tags": ["read-only"], "cost_hint": 0},
            True,
        ),
        (
            {"readOnlyHint": True},
            {"side_effects": True, "tags": ["read-only"], "cost_hint": 0},
            False,
        ),
        ({"destructiveHint": True}, {"side_effects": True, "tags": [], "cost_hint": 0}, False),
        ({}, {"side_effects": False, "tags": [], "cost_hint": 0.0}, True),  # default: amended
    ],
)
def test_seed_annotation_reading(annotations: dict, got: dict, ok: bool) -> None:
    _, judge_of = annotation_property(annotations)
    assert (judge_of(got) is None) is ok


@pytest.fixture(scope="module")
def cases() -> list:
    return build_cases(seed=0, max_examples=5)


def test_amended_families_run_at_seed_level_instead_of_being_skipped(cases: list) -> None:
    for family in ("truncate_description/budget", "annotation_fields/untrusted"):
        drawn = [c for c in cases if f"/{family}/" in c.name]
        assert drawn and all(c.expect_amended for c in drawn)
        assert all(not c.at_level("seed").skip and c.at_level("seed").prop for c in drawn)


def test_a_crash_is_seen_at_seed_level_and_failures_name_their_amendment(cases: list) -> None:
    case = next(c for c in cases if "/truncate_description/budget/special/" in c.name)
    crashed = {"id": 1, "error": "CATALOG_ERROR", "message": "special token"}
    seed = judge(case.at_level("seed"), crashed)
    assert seed.outcome is Outcome.FAIL and seed.failures[0].amended_by == ()
    spec = judge(case.at_level("spec"), crashed)
    assert spec.outcome is Outcome.FAIL
    assert spec.failures[0].amended_by == ("AM-TRUNC-CHAR-BOUNDARY", "AM-SENTENCE-ENDS")
    assert set(spec.failures[0].amended_by) <= set(spec.amended_by)  # named at both levels


def test_a_bare_tool_id_rests_on_its_amendment_and_the_seed_permits_refusing_it(
    cases: list,
) -> None:
    bare = [c for c in cases if "AM-BARE-TOOL-ID" in c.expect_amended]
    assert {c.function for c in bare} >= {"grammar_match", "format_tool_id"}
    case = next(c for c in bare if c.function == "grammar_match")
    refused = {"id": 1, "error": "CATALOG_ERROR"}
    assert judge(case.at_level("seed"), refused).outcome is Outcome.PASS  # §1.3's reading
    assert judge(case.at_level("seed"), {"id": 1, "ok": True}).outcome is Outcome.PASS
    wrong = judge(case.at_level("seed"), {"id": 1, "error": "PATH_INVALID"})
    assert wrong.outcome is Outcome.FAIL  # still: an answer neither reading gives
    spec = judge(case.at_level("spec"), refused)
    assert spec.outcome is Outcome.FAIL and "AM-BARE-TOOL-ID" in spec.failures[0].amended_by
