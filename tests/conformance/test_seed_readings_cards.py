"""Layer-1 seed readings found on the clean-room tollbooth, each proved both ways: the answer
the seed permits passes (or the case is skipped naming its amendment), and a wrong answer in
the same form still fails, charged to the rule it breaks.

* seed 000 §3.2 `segment = ( [a-z0-9] [a-z0-9_-]{0,63} ) | "*"` and no total path cap;
* a trailing "\\n" is the full-match rule's (AM-FULLMATCH), a tag's characters AM-TAG-GRAMMAR's;
* §5.4 "a real ChoiceCard (kind="internal")" with id __cache_breakpoint__: internal ids are no
  tool_ids;
* §2.3 "MUST raise CatalogError if a single card exceeds the hard cap" on "the prompt-facing
  rendered form" (which the seeds do not fix);
* §2.2 "MUST NOT carry, in any form (including stringified ...)": what the seed names.
"""

from __future__ import annotations

import pytest

from gatespec_conformance.functions.card_rules import card_findings
from gatespec_conformance.functions.cases import build_cases, vector_cases
from gatespec_conformance.functions.grammar_families import grammar_value
from gatespec_conformance.functions.run import judge, judge_refusal, refused_valid_card
from gatespec_conformance.oracle.seed_answers import seed_stringified
from gatespec_conformance.report import Outcome
from gatespec_conformance.rules import failures_at as _failures_at
from gatespec_surface.grammars import GRAMMARS


def failures_at(findings: list, level: str) -> tuple:
    return _failures_at(findings, level, ())[0]


@pytest.fixture(scope="module")
def cases() -> list:
    return build_cases(seed=0, max_examples=30)


# ------------------------------------------------------------------ grammars


def test_star_segment_and_an_uncapped_path_rest_on_the_amendment() -> None:
    assert grammar_value("path_segment", "invalid", "*").amended == ("AM-PATH-BOUNDS",)
    long_path = "/a" + "/b" * 200  # §3.2 accepts it; AM-PATH-BOUNDS caps it
    assert grammar_value("path", "cap", long_path).amended == ("AM-PATH-BOUNDS",)
    assert grammar_value("path", "invalid", "/a/*/b").amended == ("AM-PATH-BOUNDS",)


@pytest.mark.parametrize(
    ("g", "value"),
    [("path_segment", "a/b"), ("path_segment", "-x"), ("path", "/github/"), ("path", "//a")],
)
def test_what_the_seed_grammar_rejects_is_judged_at_seed_level(g: str, value: str) -> None:
    judged = grammar_value(g, "invalid", value)
    assert judged.amended == () and judged.extension == ""


def test_path_vectors_at_seed_level(cases: list) -> None:
    by_value = {
        (c.input["grammar"], c.input["value"]): c
        for c in vector_cases()
        if c.function == "grammar_match" and c.input["grammar"] in ("path", "path_segment")
    }
    star = by_value[("path_segment", "*")].at_level("seed")
    assert star.skip and "AM-PATH-BOUNDS" in star.skip
    longest = next(c for (g, v), c in by_value.items() if g == "path" and len(v) > 256)
    assert "AM-PATH-BOUNDS" in longest.at_level("seed").skip  # the seed has no total cap
    bad = by_value[("path_segment", "a/b")].at_level("seed")
    assert not bad.skip
    assert judge(bad, {"id": 1, "ok": True}).outcome is Outcome.FAIL  # still a seed breach
    assert judge(bad, {"id": 1, "error": "PATH_INVALID"}).outcome is Outcome.PASS


def test_a_trailing_newline_is_charged_to_the_full_match_rule(cases: list) -> None:
    judged = grammar_value("path", "invalid", "/github\n", ("grammar.path.invalid",))
    assert judged.amended == () and judged.requirements == ("ERROR-PATH-INVALID",)
    tool_id = grammar_value("tool_id", "invalid", "a:b#0123abcd\n", ("grammar.tool_id.invalid",))
    assert tool_id.requirements == ("TOOLID-GRAMMAR", "TOOLID-PARSE-REJECTS-MALFORMED")
    drawn = [
        c
        for c in cases
        if c.function == "grammar_match"
        and c.input["grammar"] == "path"
        and c.input["value"].endswith("\n")
        and GRAMMARS["path"].accepts(c.input["value"][:-1])
        and "ok" not in c.expect
    ]
    assert drawn
    for case in drawn:
        seed = case.at_level("seed")
        assert not seed.skip
        failed = judge(seed, {"id": 1, "ok": True})
        assert failed.outcome is Outcome.FAIL
        assert failed.amended_by == ("AM-FULLMATCH",)  # through ERROR-PATH-INVALID
        assert [r.id for r in failed.requirements] == ["ERROR-PATH-INVALID"]


def test_a_tag_is_charged_by_what_the_seed_says_of_it() -> None:
    chars = grammar_value("tag", "invalid", "-x", ("grammar.tag.invalid",))
    assert chars.requirements == () and chars.amended == ("AM-TAG-GRAMMAR",) and chars.extension
    long_tag = grammar_value("tag", "invalid", "t" * 25, ("grammar.tag.invalid",))
    assert long_tag.requirements == ("CARD-TAG-MAX-24-CHARS",) and long_tag.amended == ()
    vector = next(
        c
        for c in vector_cases()
        if c.function == "grammar_match" and c.input == {"grammar": "tag", "value": "-x"}
    )
    failed = judge(vector, {"id": 1, "ok": True})  # at --level spec
    assert failed.outcome is Outcome.FAIL and failed.requirements == ()
    assert failed.failures[0].amended_by == ("AM-TAG-GRAMMAR",)


# ------------------------------------------------------------------ internal cards


def test_an_internal_card_id_is_not_judged_by_the_tool_id_grammar_at_seed_level(
    cases: list,
) -> None:
    bad = [c for c in cases if "/validate_card/invalid/bad_id/" in c.name]
    internal = [c for c in bad if c.input["card"]["kind"] == "internal"]
    tool = [c for c in bad if c.input["card"]["kind"] != "internal"]
    assert internal and tool
    for case in internal:
        assert "AM-BROWSE-TREE" in case.at_level("seed").skip
        spec = judge(case, {"id": 1, "ok": True})
        assert spec.outcome is Outcome.FAIL and "AM-BROWSE-TREE" in spec.failures[0].amended_by
    for case in tool:  # a tool card's id is still a tool_id at the seed level
        seed = case.at_level("seed")
        assert not seed.skip
        assert judge(seed, {"id": 1, "ok": True}).outcome is Outcome.FAIL


def test_layer_two_judges_internal_ids_by_the_browse_tree_at_spec_level_only() -> None:
    card = {
        "id": "github",
        "name": "github",
        "description": "",
        "tags": [],
        "kind": "internal",
        "namespace": "",
        "has_schema": False,
    }
    assert failures_at(card_findings(card), "seed") == ()
    spec = failures_at(card_findings(card), "spec")
    assert spec and "AM-BROWSE-TREE" in spec[0].amended_by
    tool = {**card, "kind": "tool"}  # a tool card named "github" is no tool_id: both levels
    assert [f.requirements[0].id for f in failures_at(card_findings(tool), "seed")] == [
        "CARD-ID-IS-TOOLID"
    ]


# ------------------------------------------------------------------ a valid card refused


def _valid_case(cases: list) -> object:
    return next(c for c in cases if "/validate_card/valid/" in c.name).at_level("seed")


REFUSED = {"id": 1, "error": "CATALOG_ERROR", "message": "over budget"}


def test_a_valid_card_refused_over_its_own_rendering_passes_at_seed_level(cases: list) -> None:
    case = _valid_case(cases)
    assert refused_valid_card(case, REFUSED)
    over = {"id": 1, "ok": "word " * 90}  # 90 tokens of the IUT's own rendering
    res = judge_refusal(case, REFUSED, over)
    assert res.outcome is Outcome.PASS
    assert [r.id for r in res.requirements] == ["BUDGET-OVER-CAP-ERROR"]


@pytest.mark.parametrize(
    ("rendered", "why"),
    [
        ({"id": 1, "ok": "a short line"}, "(hard cap 80)"),
        ({"id": 1, "unsupported": True}, "no render_card"),
        ({"id": 1, "error": "CATALOG_ERROR"}, "render_card answered"),
    ],
)
def test_a_valid_card_refused_without_its_rendering_over_the_cap_still_fails(
    cases: list, rendered: dict, why: str
) -> None:
    res = judge_refusal(_valid_case(cases), REFUSED, rendered)
    assert res.outcome is Outcome.FAIL and why in res.reason
    assert [r.id for r in res.failures[0].requirements] == ["BUDGET-OVER-CAP-ERROR"]


def test_a_valid_card_refused_at_spec_level_is_charged_to_the_budget_rule(cases: list) -> None:
    case = _valid_case(cases)
    res = judge_refusal(case, REFUSED, None)
    assert res.outcome is Outcome.FAIL
    assert [r.id for r in res.failures[0].requirements] == ["BUDGET-OVER-CAP-ERROR"]
    other = judge(case, {"id": 1, "error": "PATH_INVALID"})
    assert not refused_valid_card(case, {"error": "PATH_INVALID"})
    assert other.outcome is Outcome.FAIL


# ------------------------------------------------------------------ stringified banned content


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ('inputSchema: {"type": "object"}', "inputSchema"),
        (
            'Takes args_schema: {"properties": {"q": {"type": "string"}}} as its input.',
            "args_schema",
        ),
        ('_meta: {"readOnlyHint": true}', "_meta"),
        ('examples: [{"query": "weather"}]', "examples"),
        ('server_url: "http://127.0.0.1:8765/mcp"', "server_url"),
        ("transport: stdio", "transport"),
        ('{"properties": {}}', None),  # names no banned field
        ("args_schema: x", None),  # no schema
        ('"input_schema"={...}', None),  # an elision, not a schema
        ('server_url: {"type": "object"}', None),  # no URL, no transport
        ("Fetches https://example.org pages.", None),  # a URL, not a server's
    ],
)
def test_what_the_seed_bans_as_stringified(text: str, found: str | None) -> None:
    assert seed_stringified(text) == found


def test_stringified_cases_at_seed_level(cases: list) -> None:
    drawn = [
        c
        for c in cases
        if "/validate_card/banned/stringified/" in c.name
        or "/validate_card/invalid/stringified_schema/" in c.name
    ]
    kept = [c for c in drawn if not c.at_level("seed").skip]
    left = [c for c in drawn if c.at_level("seed").skip]
    assert kept and left
    for case in kept:  # the seed bans it: accepting the card fails
        assert seed_stringified(case.input["card"]["description"]) is not None
        assert judge(case.at_level("seed"), {"id": 1, "ok": True}).outcome is Outcome.FAIL
    for case in left:
        assert "wider reading" in case.at_level("seed").skip
        assert judge(case, {"id": 1, "ok": True}).outcome is Outcome.FAIL  # spec level


def test_layer_two_judges_a_wider_stringified_form_at_spec_level_only() -> None:
    card = {
        "id": "a:b#0123abcd",
        "name": "b",
        "description": 'Returns {"properties": {}} objects.',
        "tags": [],
        "kind": "tool",
        "namespace": "a",
        "has_schema": True,
    }
    assert failures_at(card_findings(card), "seed") == ()
    assert failures_at(card_findings(card), "spec")
    leaky = {**card, "description": 'Takes args_schema: {"properties": {"q": {}}} as input.'}
    seed = failures_at(card_findings(leaky), "seed")
    assert seed and seed[0].requirements[0].id == "CARD-NO-SCHEMAS"


# ------------------------------------------------------------------ one rule per crash


def test_a_truncation_that_gives_no_answer_is_charged_to_one_rule(cases: list) -> None:
    case = next(c for c in cases if "/truncate_description/budget/special/" in c.name)
    for level in ("seed", "spec"):
        crashed = judge(case.at_level(level), {"id": 1, "error": "CATALOG_ERROR"})
        assert crashed.outcome is Outcome.FAIL
        assert [r.id for r in crashed.failures[0].requirements] == ["TRUNC-VERBATIM-WITHIN-BUDGET"]
    wrong = judge(case, {"id": 1, "ok": "\n"})  # an answer, and a wrong one: its own rules
    assert wrong.outcome is Outcome.FAIL
    assert len(wrong.failures[0].requirements) > 1
