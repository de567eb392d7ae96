"""Seed 000 §4.1: the transparent proxy "calls upstream, and returns the result"; seed 002:
every meta-tool "returns either a ResultEnvelope or a typed GatewayError". At --level seed both
readings pass: an envelope is judged as one, and a result passed through must BE the upstream's
(its content, structuredContent and isError); a wrong pass-through still fails."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import mcp_types as types
import pytest

from gatespec_conformance.fixtures.catalog import (
    ECHO,
    FAILS,
    FAILURE_TEXT,
    IMAGE,
    STRUCTURED,
    STRUCTURED_CONTENT,
    direct_result,
)
from gatespec_conformance.live.client import CallResult
from gatespec_conformance.live.invocation import seed_passthrough
from gatespec_conformance.live.readings import passed_through

ARGS = {"text": "hi", "times": 2}


def _call(result: Any) -> CallResult:
    return CallResult("tool_execute", {"tool_id": "x:y", "args": ARGS}, result, None, 0.0)


def _text(text: str, is_error: bool = False, structured: Any = None) -> CallResult:
    content = [types.TextContent(type="text", text=text)]
    return _call(
        types.CallToolResult(content=content, is_error=is_error, structured_content=structured)
    )


@pytest.mark.parametrize("tool", [ECHO, FAILS, IMAGE, STRUCTURED])
def test_the_upstream_result_passed_through_is_read_as_such(tool: str) -> None:
    upstream = direct_result(tool, ARGS)
    assert passed_through(_call(upstream), upstream) == []


@pytest.mark.parametrize(
    ("tool", "got", "why"),
    [
        (ECHO, _text("hi"), "content"),  # the text once, not twice
        (FAILS, _text(FAILURE_TEXT), "isError False"),  # the failure hidden
        (STRUCTURED, _text("answer is 42"), "structuredContent"),  # dropped
        (STRUCTURED, _text("answer is 42", structured={"answer": 41}), "structuredContent"),
        (IMAGE, _text(""), "content"),  # the image lost
    ],
)
def test_a_wrong_pass_through_still_fails(tool: str, got: CallResult, why: str) -> None:
    differs = passed_through(got, direct_result(tool, ARGS))
    assert differs and why in "; ".join(differs)


def test_an_envelope_or_an_error_payload_is_judged_as_one() -> None:
    envelope = {"status": "ok", "summary": "hi hi", "facts": [], "artifacts": []}
    assert passed_through(_text(json.dumps(envelope)), direct_result(ECHO, ARGS)) is None
    error = {"error": "UPSTREAM_ERROR", "message": FAILURE_TEXT, "path": ""}
    assert passed_through(_text(json.dumps(error), True), direct_result(FAILS, {})) is None
    assert passed_through(_text("x", structured=STRUCTURED_CONTENT), None) is None


def test_only_the_transparent_profile_at_seed_level_reads_a_pass_through() -> None:
    upstream = direct_result(ECHO, ARGS)
    seed = SimpleNamespace(level="seed", profile="transparent")
    assert seed_passthrough(seed, _call(upstream), ECHO, ARGS) == []
    wrong = seed_passthrough(seed, _text("hi"), ECHO, ARGS)
    assert wrong and wrong[0].rule.cause.startswith("neither a ResultEnvelope")
    for level, profile in (("spec", "transparent"), ("seed", "gateway")):
        live = SimpleNamespace(level=level, profile=profile)
        assert seed_passthrough(live, _call(upstream), ECHO, ARGS) is None
