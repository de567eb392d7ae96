"""The kit's one reading layer (gatespec_conformance/live/readings.py): every representation a seed
permits is read, and a wrong answer in any of them still fails. The kit runs that prove the
same end to end, against the independent gateway reshaped, are in test_readings_variants.py."""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
import pytest
from jsonschema import Draft202012Validator

from gatespec_conformance.functions.card_rules import card_findings
from gatespec_conformance.live import readings
from gatespec_conformance.live.client import CallResult
from gatespec_conformance.live.payloads import judge_error, judge_rejection
from gatespec_conformance.live.transparent import hydration_findings

CARD = {
    "id": "fixture:echo#1a2b3c4d",
    "name": "echo",
    "description": "Echo the text back.",
    "tags": [],
    "kind": "tool",
    "namespace": "fixture",
    "has_schema": True,
    "cost_hint": 0.0,
    "side_effects": False,
}
SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


def call(*texts: str, structured: Any = None, is_error: bool = False) -> CallResult:
    content = [types.TextContent(type="text", text=t) for t in texts]
    result = types.CallToolResult(content=content, structured_content=structured, is_error=is_error)
    return CallResult("tool_browse", {"path": "/"}, result, None, 0.0)


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (call(json.dumps([CARD])), "a bare list in one text item (seed 000 §4.2)"),
        (call(json.dumps({"cards": [CARD]})), "an object with cards"),
        (call(json.dumps({"result": [CARD], "path": "/"})), "an SDK's result wrapping"),
        (call("1 card", structured={"cards": [CARD]}), "structuredContent"),
        (call(json.dumps(CARD)), "a single card (§3.3's leaf)"),
        (call(json.dumps([CARD]), "preamble\nfixture:echo line"), "JSON beside prompt lines"),
        (call(json.dumps(CARD), json.dumps(CARD)), "one JSON card per text item"),
    ],
)
def test_cards_are_read_in_every_form_the_seed_permits(answer: CallResult, why: str) -> None:
    document, _ = readings.answer(answer)
    cards = readings.cards_of(document)
    assert cards and all(c == CARD for c in cards), why


@pytest.mark.parametrize(
    "document",
    [
        {"cards": "not a list"},
        {"cards": [CARD, "x"]},
        [CARD, {"name": "no id"}],
        {"a": [CARD], "b": [CARD]},  # two lists of cards: which one is the answer?
        {"message": "hello"},
        "cards",
        None,
    ],
)
def test_what_carries_no_cards_reads_as_none(document: Any) -> None:
    assert readings.cards_of(document) is None


def test_a_bare_list_with_a_banned_field_still_fails() -> None:
    document, _ = readings.answer(call(json.dumps([{**CARD, "inputSchema": SCHEMA}])))
    (card,) = readings.cards_of(document) or []
    broken = {r for f in card_findings(card) for r in f.rule.requirements}
    assert "CARD-NO-SCHEMAS" in broken


def test_could_not_run_quotes_what_was_sent() -> None:
    answer = call("x" * 2000)
    assert readings.sent(answer) == "x" * readings.SENT_MAX
    assert readings.sent(call(structured={"a": 1})) == '{"a": 1}'


# ------------------------------------------------------------------ hydration


@pytest.mark.parametrize(
    "document",
    [
        {"tool_id": "fixture:echo#1a2b3c4d", "inputSchema": SCHEMA},  # seed 000 §4.1
        {"input_schema": SCHEMA},  # seed 002's example
        {"args_schema": SCHEMA, "output_schema": None},  # seed 000 §2.2, §7
        {"item": {"id": "x", "args_schema": SCHEMA}, "args_schema": SCHEMA, "examples": []},
        {"result": {"tool": {"inputSchema": SCHEMA}}},  # nested two levels
    ],
)
def test_the_hydrated_schema_is_read_under_every_field_the_seeds_name(document: Any) -> None:
    assert hydration_findings(document, SCHEMA, None) == []


@pytest.mark.parametrize(
    ("document", "cause"),
    [
        ({"args_schema": {"type": "object"}}, "not the upstream's"),
        ({"schema_json": SCHEMA}, "no schema under a field the seeds name"),
        ({"inputSchema": SCHEMA, "args_schema": {"type": "object"}}, "say different things"),
        ({"tool": {"inputSchema": {"type": "object"}}, "x": 1}, "not the upstream's"),
        ([SCHEMA], "no schema under a field"),
    ],
)
def test_a_wrong_hydration_still_fails_in_any_of_those_forms(document: Any, cause: str) -> None:
    findings = hydration_findings(document, SCHEMA, None)
    assert findings and cause in findings[0].rule.cause


def test_the_shallowest_schema_field_is_the_answer() -> None:
    """A hydration may carry the stripped entry (sentinel schema) beside the real schema."""
    document = {"entry": {"inputSchema": {"type": "object"}}, "input_schema": SCHEMA}
    assert hydration_findings(document, SCHEMA, None) == []


def test_an_upstream_output_schema_must_be_kept_under_either_name() -> None:
    out = {"type": "object", "properties": {"answer": {"type": "integer"}}}
    assert hydration_findings({"args_schema": SCHEMA, "output_schema": out}, SCHEMA, out) == []
    assert hydration_findings({"inputSchema": SCHEMA, "outputSchema": out}, SCHEMA, out) == []
    (lost,) = hydration_findings({"inputSchema": SCHEMA}, SCHEMA, out)
    assert "outputSchema is not kept" in lost.rule.cause


# ------------------------------------------------------------------ tool_view's selector


def _schema(selector: Any, required: bool = True) -> dict[str, Any]:
    props = {"handle": {"type": "string"}}
    if selector is not None:
        props["selector"] = selector
    return {
        "type": "object",
        "properties": props,
        "required": ["handle", "selector"] if required else ["handle"],
        "additionalProperties": False,
    }


def test_string_selectors_for_a_string_declaration() -> None:
    assert readings.selectors(_schema({"type": "string"})) == list(readings.STRING_SELECTORS)


def test_object_selectors_follow_the_declared_object() -> None:
    selector = {
        "type": "object",
        "properties": {"kind": {"enum": ["all", "lines"]}, "start": {"type": "integer"}},
        "required": ["kind"],
        "additionalProperties": False,
    }
    tried = readings.selectors(_schema(selector))
    assert {"kind": "all"} in tried and {"kind": "lines"} in tried
    valid = Draft202012Validator(selector)
    assert tried and all(valid.is_valid(s) for s in tried)  # never a form it did not declare


def test_an_optional_selector_is_first_left_out() -> None:
    tried = readings.selectors(_schema({"type": "string"}, required=False))
    assert tried[0] is readings.OMITTED
    assert readings.view_arguments("h", tried[0]) == {"handle": "h"}
    assert readings.selectors(_schema(None, required=False)) == [readings.OMITTED]


# ------------------------------------------------------------------ errors


def test_an_error_payload_with_extra_fields_passes_the_seed_and_a_wrong_code_still_fails() -> None:
    payload = {"error": "ARGS_INVALID", "message": "m", "path": "", "retryable": False}
    answer = call(json.dumps(payload), is_error=True)
    seed = [f for f in judge_error(answer, {"ARGS_INVALID"}) if "seed" in f.rule.levels]
    assert seed == []
    wrong = [f for f in judge_error(answer, {"PATH_INVALID"}) if "seed" in f.rule.levels]
    assert [f.rule.cause for f in wrong] == ["the error code is not the expected one"]


def test_an_sdk_refusal_of_arguments_outside_the_declared_schema_is_a_refusal_at_seed() -> None:
    sdk = call("Input validation error: 'x' is not of type 'object'", is_error=True)
    assert judge_rejection(sdk, {"ARGS_INVALID"}, True, "seed") == []
    accepted = call(json.dumps({"status": "ok"}))
    assert judge_rejection(accepted, {"ARGS_INVALID"}, True, "seed")  # still fails
    # arguments inside the declared schema: the §3.4 payload is expected
    assert judge_rejection(sdk, {"ARGS_INVALID"}, False, "seed")
