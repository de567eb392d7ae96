"""The kit's own judgement: its oracle agrees with the hand-written vectors, every rule is
charged to its own requirement, levels pick the seed's or the spec's form, and selection,
enforcement and expected-failure messages behave as documented."""

from __future__ import annotations

import io
import sys
import types as pytypes
from typing import Any

import pytest

from gatespec_conformance import rules
from gatespec_conformance.fixtures.catalog import FIXTURE_TOOLS, fixture_tools
from gatespec_conformance.fixtures.upstream import fixture_argv
from gatespec_conformance.formats import write_text
from gatespec_conformance.functions.card_rules import card_findings
from gatespec_conformance.functions.cases import Case, vector_cases
from gatespec_conformance.live.payloads import judge_error
from gatespec_conformance.oracle import answers, render, seed_hash, tool_ids, truncation
from gatespec_conformance.report import (
    CheckResult,
    Example,
    ExpectedFailures,
    Outcome,
    Report,
    RuleFailure,
    Selector,
    refs_for_ids,
)
from gatespec_conformance.tokens import count_tokens
from gatespec_surface.vectors import load_cases

VALID_CARD: dict[str, Any] = {
    "id": "github:create_issue@1.4.0",
    "name": "create_issue",
    "description": "Create an issue.",
    "tags": ["issues"],
    "kind": "tool",
    "namespace": "github",
    "has_schema": True,
    "cost_hint": 0.0,
    "side_effects": True,
}


# ------------------------------------------------------------------ the oracle


def _vectors(function: str) -> list[dict[str, Any]]:
    return [c for c in load_cases() if c["function"] == function]


def test_seed_hash8_reproduces_every_hash8_vector() -> None:
    for case in _vectors("hash8"):
        got = seed_hash.seed_hash8(case["input"]["upstream_name"], case["input"]["input_schema"])
        assert {"ok": got} == case["expect"], case["name"]


def test_oracle_answers_match_the_hand_written_vectors() -> None:
    checks = {
        "render_card": lambda i: {"ok": render.render_line(i["card"])},
        "server_key": lambda i: tool_ids.server_key(i["config_key"]),
        "parse_view_selector": lambda i: answers.selector_answer(i["value"]),
        "annotation_fields": lambda i: {"ok": answers.annotation_answer(i["annotations"])},
        "encode_wire_name": lambda i: answers.wire_answer(i["tool_id"]),
        "make_tool_id": lambda i: {
            "ok": tool_ids.make_tool_id(
                i["namespace"], i["upstream_name"], i["input_schema"], i.get("version")
            )
        },
    }
    for function, answer in checks.items():
        cases = _vectors(function)
        assert cases, function
        for case in cases:
            assert answer(case["input"]) == case["expect"], (function, case["name"])


def test_brute_force_truncation_follows_the_amended_section() -> None:
    text = "First sentence here. Second one is longer, e.g. this. " + "word " * 60
    assert truncation.truncate("Short and sweet.", 80) == "Short and sweet."
    assert truncation.truncate(text, 20) == "First sentence here. Second one is longer, e.g. this."
    cut = truncation.truncate("word " * 80, 10)
    assert cut.endswith("…") and count_tokens(cut) <= 10
    assert truncation.truncate(
        "从工作区读取文件。文件路径必须是相对路径，不能包含上级目录。", 10
    ) == ("从工作区读取文件。")
    assert truncation.truncate("a\nb  c", 80) == "a b c"


def test_count_tokens_is_exact_and_special_tokens_are_text() -> None:
    assert count_tokens("tiktoken is great!") == 6
    assert count_tokens("<|endoftext|>") > 1


# ------------------------------------------------------------------ rules, one by one


def _charged(card: dict[str, Any], level: str = "spec") -> list[tuple[tuple[str, ...], str]]:
    return [
        (f.rule.requirements, f.rule.cause) for f in card_findings(card) if level in f.rule.levels
    ]


def test_each_card_rule_is_charged_to_its_own_requirement() -> None:
    assert card_findings(VALID_CARD) == []
    long_name = {**VALID_CARD, "name": "n" * 70}
    assert [r for r, _ in _charged(long_name)] == [("CARD-NAME-MAX-64",)]
    capital = {**VALID_CARD, "tags": ["Issues"]}
    charged = _charged(capital)
    assert charged and all("CARD-TAG-MAX-24-CHARS" not in r for r, _ in charged)
    assert charged[0][1] == "a tag breaks the tag grammar"
    assert _charged(capital, "seed") == []  # the seed bounds a tag's length only
    long_tag = {**VALID_CARD, "tags": ["t" * 30]}
    assert [r for r, _ in _charged(long_tag, "seed")] == [("CARD-TAG-MAX-24-CHARS",)]
    both = {**VALID_CARD, "name": "n" * 70, "tags": ["b", "a"]}
    assert {r for r, _ in _charged(both)} == {("CARD-NAME-MAX-64",), ("CARD-TAGS-SORTED",)}
    leaky = {**VALID_CARD, "description": 'Takes args_schema: {"q": 1}'}
    assert [r for r, _ in _charged(leaky, "seed")] == [("CARD-NO-SCHEMAS",)]


class _Call:
    """A stand-in for live_client.CallResult carrying an error result."""

    def __init__(self, text: str) -> None:
        self.result = pytypes.SimpleNamespace(is_error=True, structured_content=None)
        self.error = None
        self.text = text
        self.texts = [text]
        self.structured = None

    def document(self) -> tuple[Any, str]:
        import json

        return json.loads(self.text), "text"

    def shown(self) -> dict[str, Any]:
        return {"text": self.text}


def test_an_extra_payload_field_breaks_only_the_spec_shape_rule() -> None:
    call = _Call('{"error": "ARGS_INVALID", "message": "m", "path": "", "retryable": false}')
    found = judge_error(call, {"ARGS_INVALID"})  # type: ignore[arg-type]
    assert [f.rule.cause for f in found] == ["the payload carries fields §3.4 does not list"]
    rule = found[0].rule  # a spec rule, resting on its amendment once the spec records one
    assert rule.levels == rules.SPEC and (rule.spec_only or rule.amended_by)
    wrong = judge_error(
        _Call('{"error": "PATH_INVALID", "message": "m", "path": ""}'), {"ARGS_INVALID"}
    )  # type: ignore[arg-type]
    assert [f.rule.cause for f in wrong] == ["the error code is not the expected one"]


def test_seed_values_come_from_seed_facts_when_the_module_exists(monkeypatch) -> None:
    assert rules.seed_value(("NO-SUCH-FACT",), 235) == 235
    fact = pytypes.SimpleNamespace(value=240)
    module = pytypes.ModuleType("gatespec_surface.seed_facts")
    module.SEED_FACTS = {"S000-TOOLID-MAX-LENGTH": fact}  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "gatespec_surface.seed_facts", module)
    assert rules.seed_value(("S000-TOOLID-MAX-LENGTH",), 235) == 240
    fact.amended_by = ("AM-TOOLID-CAP",)
    spec_only = rules.Rule("x", levels=rules.SPEC, spec_only="the spec's own")
    amended = rules.with_facts(spec_only, "S000-TOOLID-MAX-LENGTH")
    assert amended.amended_by == ("AM-TOOLID-CAP",) and amended.spec_only == ""


# ------------------------------------------------------------------ levels and vectors


def test_a_vector_with_its_own_fields_is_judged_by_them(monkeypatch) -> None:
    from gatespec_conformance.functions import cases

    doc = {
        "cases": [
            {
                "name": "cap",
                "function": "grammar_match",
                "input": {"grammar": "tool_id", "value": "a:b"},
                "expect": {"error": "CATALOG_ERROR"},
                "description": "an id over the amended cap",
                "requirements": ["TOOLID-MAX-LENGTH"],
                "amended_by": ["AM-TOOLID-CAP"],
                "seed_expect": {"ok": True},
            },
            {
                "name": "plain",
                "function": "hash8",
                "input": {"upstream_name": "x", "input_schema": {}},
                "expect": {"ok": "00000000"},
                "requirements": ["HASH-INPUT"],
                "amended_by": [],
            },
        ]
    }
    monkeypatch.setattr(cases, "_vector_docs", lambda: iter([("x.json", doc)]))
    cap, plain = vector_cases()
    assert cap.requirement_ids == ("TOOLID-MAX-LENGTH",) and "AM-TOOLID-CAP" in cap.amended_by
    assert cap.at_level("spec").expect == {"error": "CATALOG_ERROR"}
    assert cap.at_level("seed").expect == {"ok": True} and not cap.at_level("seed").skip
    assert plain.at_level("seed") is plain and plain.requirement_ids == ("HASH-INPUT",)


def test_without_a_seed_answer_an_amended_case_is_skipped_at_the_seed_level() -> None:
    case = Case("functions/x/1", "hash8", {}, {"ok": 1}, (), expect_amended=("AM-FULLMATCH",))
    assert "AM-FULLMATCH" in case.at_level("seed").skip
    assert Case("n", "f", {}, {"ok": 1}, (), extension="gatespec's").at_level("seed").skip


def test_select_and_deselect_take_amendment_ids() -> None:
    sel = Selector(["AM-PATH-BOUNDS"])
    assert sel.matches(
        "functions/grammar_match/path/cap/0001", ["PATH-GRAMMAR"], ["AM-PATH-BOUNDS"]
    )
    assert not sel.matches("functions/hash8/shape/0001", ["HASH-INPUT"], [])
    out = Selector([], ["AM-PATH-BOUNDS", "functions/hash8/*"])
    assert not out.matches("a", [], ["AM-PATH-BOUNDS"]) and not out.matches("functions/hash8/x")
    assert out.matches("functions/parse_path/parse/0001", [], [])
    layer1 = [c for c in vector_cases() if sel.matches(c.name, c.requirement_ids, c.amended_by)]
    assert layer1 and all("AM-PATH-BOUNDS" in c.amended_by for c in layer1)


# ------------------------------------------------------------------ reports


def _failed(name: str, requirement: str, cause: str, reason: str = "") -> CheckResult:
    refs = refs_for_ids([requirement])
    failure = RuleFailure(refs, cause, reason or cause, Example({"i": name}, None, None))
    return CheckResult(name, Outcome.FAIL, refs, reason=reason or cause, failures=(failure,))


def test_enforce_must_lets_should_failures_pass_the_run() -> None:
    results = [_failed("server/gateway/cards/target/x", "BUDGET-TARGETS", "over the target")]
    assert Report("server", results, enforce="should").exit_status() == 1
    assert Report("server", results, enforce="must").exit_status() == 0
    must = [_failed("server/gateway/cards/budget/x", "BUDGET-CARD-HARD-CAP", "over the cap")]
    assert Report("server", must, enforce="must").exit_status() == 1


def test_expected_failure_messages_and_skip_only_entries() -> None:
    results = [
        _failed("functions/a/1", "HASH-INPUT", "answer differs"),
        _failed("functions/b/1", "HASH-INPUT", "expected error X, got success"),
        CheckResult("functions/c/1", Outcome.SKIP, reason="unsupported"),
    ]
    listed = ExpectedFailures.parse(
        "functions/a/* :: answer differs\nfunctions/b/* :: answer differs\nfunctions/c/*\n"
    )
    out, stale = listed.apply("functions", results, [r.name for r in results])
    assert [r.outcome for r in out] == [Outcome.XFAIL, Outcome.FAIL, Outcome.SKIP]
    assert [s.pattern for s in stale] == ["functions/b/*"]
    assert "another reason" in stale[0].reason
    assert [u.pattern for u in listed.unconfirmed] == ["functions/c/*"]


def test_text_report_lists_every_cause_with_its_requirement_and_amendment() -> None:
    results = [
        _failed("server/gateway/cards/fields/a", "CARD-NAME-MAX-64", "name too long"),
        _failed("server/gateway/cards/fields/b", "CARD-TAGS-SORTED", "tags unsorted"),
        _failed("server/gateway/cards/fields/c", "TOOLID-MAX-LENGTH", "id too long"),
    ]
    out = io.StringIO()
    write_text(Report("server", results), out)
    text = out.getvalue()
    assert text.count("  cause: ") == 3
    assert "CARD-TAGS-SORTED (MUST)" in text
    assert "TOOLID-MAX-LENGTH (MUST, amended by AM-TOOLID-CAP)" in text


# ------------------------------------------------------------------ the fixture


def test_fixture_sizes_and_well_formed_only() -> None:
    assert fixture_tools() == FIXTURE_TOOLS
    one = fixture_tools(1, True)
    assert [t.name for t in one] == ["echo"]
    big = fixture_tools(100, True)
    assert len(big) == 100 and len({t.name for t in big}) == 100
    assert all(t.expect == "admit" for t in big)
    some = fixture_tools(5)
    assert sum(t.expect == "admit" for t in some) == 5 and len(some) > 5
    argv = fixture_argv("log", tools=7, well_formed_only=True)
    assert argv[-3:] == ["--tools", "7", "--well-formed-only"]


@pytest.mark.parametrize("flag", ["--tools", "--well-formed-only"])
def test_fixture_cli_options_parse(flag: str) -> None:
    import argparse

    from gatespec_conformance.fixtures import upstream as fixture_upstream

    parser = argparse.ArgumentParser()
    fixture_upstream.add_arguments(parser)
    args = parser.parse_args([flag, "3"] if flag == "--tools" else [flag])
    assert args.tools == 3 or args.well_formed_only
