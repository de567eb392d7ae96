"""The argument signature ARGS_INVALID shows (AM-ARGS-SIGNATURE, spec/cards.yaml signature).
Expected strings are written from the amendment's rules, not taken from the code."""

from __future__ import annotations

from typing import Any

import pytest

from gatespec.signature import signature
from gatespec.tokens import count_tokens
from gatespec.validation import ArgsValidator
from gatespec_surface.budgets import SIGNATURE_MAX_TOKENS
from gatespec_surface.errors import ErrorCode, GatewayError

ISSUE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "body": {"type": "string"},
        "owner": {"type": "string"},
        "labels": {"type": "array", "items": {"type": "string"}},
        "repo": {"type": "string"},
        "state": {"enum": ["open", "closed"]},
        "title": {"type": "string"},
    },
    "required": ["owner", "repo", "title"],
}


def test_required_first_then_optional_in_schema_order() -> None:
    assert signature("gh:create_issue#0123abcd", ISSUE) == (
        "gh:create_issue#0123abcd(owner: string, repo: string, title: string, body?: string, "
        'labels?: array<string>, state?: "open"|"closed")'
    )


@pytest.mark.parametrize(
    ("prop", "shown"),
    [
        ({"type": ["string", "null"]}, "string|null"),
        ({}, "any"),
        ({"type": "array"}, "array"),
        ({"type": "string", "enum": ["a", "b", "c", "d"]}, "string"),
        ({"enum": [1, 2]}, "1|2"),
        ({"type": "object", "properties": {"x": {}}}, "object"),
    ],
)
def test_types(prop: dict[str, Any], shown: str) -> None:
    assert signature("t", {"properties": {"x": prop}, "required": ["x"]}) == f"t(x: {shown})"


def test_no_properties() -> None:
    assert signature("t", {"type": "object"}) == "t()"
    assert signature("t", "not a schema") == "t()"


def test_a_wide_schema_is_cut_to_the_budget_from_the_end() -> None:
    props = {f"option_number_{i}": {"type": "string"} for i in range(80)}
    schema = {"properties": {"first": {"type": "integer"}, **props}, "required": ["first"]}
    text = signature("srv:wide#0123abcd", schema)
    assert count_tokens(text) <= SIGNATURE_MAX_TOKENS
    assert text.startswith("srv:wide#0123abcd(first: integer, option_number_0?: string")
    assert text.endswith(", …)")


def test_args_invalid_carries_the_signature() -> None:
    with pytest.raises(GatewayError) as err:
        ArgsValidator().validate("gh:create_issue#0123abcd", ISSUE, {"owner": "me"})
    assert err.value.code is ErrorCode.ARGS_INVALID
    takes = signature("gh:create_issue#0123abcd", ISSUE)
    assert err.value.details["signature"] == takes
    assert err.value.message.endswith(f"It takes {takes}")


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_nan_and_infinity_are_refused_not_forwarded_as_null(value: float) -> None:
    """Issue 12: NaN/Infinity inside untyped arguments reached the upstream as null."""
    schema = {"type": "object", "properties": {"extra": {}}}
    with pytest.raises(GatewayError) as err:
        ArgsValidator().validate("t:x#0123abcd", schema, {"extra": {"deep": [1, value]}})
    assert err.value.code is ErrorCode.ARGS_INVALID
    assert err.value.details["errors"][0]["path"] == "$.extra.deep[1]"
