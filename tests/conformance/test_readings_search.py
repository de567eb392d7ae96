"""The search profile's readings (seed 003): every form the seed permits is read, and a wrong
answer in that same form still fails.

Seed 003 Decision 3: search "returns operation names, namespaces, types, and short
descriptions, not the full input/output JSON Schemas" (no container, no field names); Decision
4: batch "returns an array of results", call "Returns the operation's output", a failure is
"`isError: true` for a `CallError` with the typed `details` payload"; Decision 5: an
unauthorised call "gets `FORBIDDEN`". The expected answers below come from those sentences.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
import pytest

from gatespec_conformance.live import readings
from gatespec_conformance.live.client import CallResult
from gatespec_conformance.live.payloads import ACCEPTED, SHAPE, WRONG_CODE, judge_call_error
from gatespec_conformance.live.search import _FIELDS, _HITS_FORM, _SCHEMAS, _TYPE, _problems
from gatespec_conformance.rules import applies

# A hit in the spec's form, and the same hit as a clean-room implementation gave it.
SPEC_HIT = {
    "operation": "/fixture/echo",
    "namespace": "fixture",
    "type": "mutation",
    "description": "Echo the text back.",
}
NAMED_HIT = {**{k: v for k, v in SPEC_HIT.items() if k != "operation"}, "name": "/fixture/echo"}


@pytest.mark.parametrize(
    ("document", "member"),
    [
        ([SPEC_HIT], None),
        ({"hits": [SPEC_HIT]}, "hits"),
        ({"operations": [NAMED_HIT]}, "operations"),
        ({"operations": [NAMED_HIT], "total": 1}, "operations"),
        ({"hits": []}, "hits"),
    ],
)
def test_hits_are_read_in_every_form_the_seed_permits(document: Any, member: Any) -> None:
    hits, where = readings.search_hits(document)
    assert hits is not None and where == member
    assert all(readings.hit_operation(h) == "/fixture/echo" for h in hits)


@pytest.mark.parametrize(
    "document",
    [
        {"a": [SPEC_HIT], "b": [SPEC_HIT]},  # two lists: no one answer
        {"hits": "/fixture/echo"},
        {"hits": ["/fixture/echo"]},  # names only: no hit objects
        "fixture/echo",
        {"operation": "/fixture/echo"},
    ],
)
def test_what_carries_no_list_of_hits_reads_as_none(document: Any) -> None:
    assert readings.search_hits(document) == (None, None)


def test_the_operation_field_of_the_spec_comes_first() -> None:
    assert readings.hit_operation({**SPEC_HIT, "name": "echo"}) == "/fixture/echo"
    assert readings.hit_operation({"namespace": "fixture"}) is None


def _rules(hit: dict[str, Any], level: str) -> set[Any]:
    return {f.rule for f in _problems(hit) if applies(f.rule, level)}


def test_a_named_hit_passes_the_seed_and_only_the_spec_asks_for_operation() -> None:
    assert _rules(NAMED_HIT, "seed") == set()
    assert _rules(NAMED_HIT, "spec") >= {_HITS_FORM}
    assert _rules(SPEC_HIT, "spec") == set()
    assert _HITS_FORM.amended_by == ("AM-SEARCH-HITS",)


NO_NAMESPACE = {k: v for k, v in NAMED_HIT.items() if k != "namespace"}


@pytest.mark.parametrize(
    ("hit", "rule"),
    [
        ({**NAMED_HIT, "inputSchema": {"type": "object"}}, _SCHEMAS),  # Decision 3: no schemas
        ({**NAMED_HIT, "type": "subscription"}, _TYPE),  # Decision 2: filtered out
        (NO_NAMESPACE, _FIELDS),  # Decision 3 names namespaces
    ],
)
def test_a_wrong_hit_in_the_seeds_form_still_fails(hit: dict[str, Any], rule: Any) -> None:
    assert rule in _rules(hit, "seed")


# ------------------------------------------------------------------ batch


@pytest.mark.parametrize(
    ("document", "member"),
    [
        ({"results": [{"ok": True}]}, "results"),
        ([{"ok": True}], None),
        ({"items": [{"ok": True}], "count": 1}, "items"),
    ],
)
def test_batch_items_under_any_member(document: Any, member: Any) -> None:
    items, where = readings.batch_items(document)
    assert items == [{"ok": True}] and where == member


def test_the_output_of_a_batch_item_is_read_under_the_seeds_word_too() -> None:
    assert "output" in readings.BATCH_OUTPUT_KEYS  # Decision 1: "Returns the operation's output"
    assert readings.BATCH_OUTPUT_KEYS[0] == "structured_content"  # the spec's first


# ------------------------------------------------------------------ errors


def _error(payload: Any, is_error: bool = True) -> CallResult:
    text = types.TextContent(type="text", text=json.dumps(payload))
    structured = payload if isinstance(payload, dict) else None
    result = types.CallToolResult(content=[text], structured_content=structured, is_error=is_error)
    return CallResult("call", {"operation": "/fixture/hidden"}, result, None, 0.0)


CALL_ERROR = {"code": "FORBIDDEN", "message": "Not authorized", "details": {"operation": "/x/y"}}


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        (CALL_ERROR, "FORBIDDEN"),
        ({"error": "FORBIDDEN", "message": "no", "path": ""}, "FORBIDDEN"),  # §3.4's
        ({"kind": "FORBIDDEN", "details": {}}, "FORBIDDEN"),  # any member: the seed names none
        ({"code": "NOT_FOUND", "kind": "FORBIDDEN"}, None),  # two codes: no one answer
        ({"message": "Not authorized"}, None),
        ({"code": 403}, None),
    ],
)
def test_a_call_errors_code_is_read_under_any_member(payload: Any, code: Any) -> None:
    assert readings.call_error_code(payload) == code


def test_a_call_error_passes_the_seed_and_rests_on_an_amendment_at_spec() -> None:
    assert judge_call_error(_error(CALL_ERROR), {"FORBIDDEN"}, "seed") == []
    spec = judge_call_error(_error(CALL_ERROR), {"FORBIDDEN"}, "spec")
    assert spec and all(f.rule.amended_by or f.rule is WRONG_CODE for f in spec)
    assert any(f.rule.cause == SHAPE.cause for f in spec)
    assert all(
        "AM-SEARCH-CALL-RESULT" in f.rule.amended_by for f in spec if f.rule is not WRONG_CODE
    )


@pytest.mark.parametrize(
    ("answer", "rule"),
    [
        (_error({**CALL_ERROR, "code": "NOT_FOUND"}), WRONG_CODE),  # Decision 5: FORBIDDEN
        (_error(CALL_ERROR, is_error=False), ACCEPTED),  # Decision 4: isError true
        (_error({"message": "Not authorized"}), WRONG_CODE),  # no code at all
    ],
)
def test_a_wrong_call_error_in_the_same_form_still_fails(answer: CallResult, rule: Any) -> None:
    assert rule in {f.rule for f in judge_call_error(answer, {"FORBIDDEN"}, "seed")}
