"""How layer 2 reads meta-tool answers: error payloads (seed 000 §3.4, seed 002 "Error shape")
and successful results, each judged rule by rule.

The seeds fix what an answer says, not how MCP carries it: the kit reads a result from its
structuredContent or from JSON in its text content. The spec's own decisions (a closed error
payload, results always in structuredContent, the output models) are rules that apply at
``--level spec`` only.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import TYPE_CHECKING, Any, Final

from jsonschema import Draft202012Validator
from pydantic import ValidationError

from gatespec_conformance.live import readings
from gatespec_conformance.rules import (
    SEED,
    SEED_META_TOOL_CODES,
    SPEC,
    Finding,
    Rule,
    charged_to,
    with_facts,
)
from gatespec_surface.descriptors import output_schema
from gatespec_surface.errors import ErrorCode
from gatespec_surface.models import ErrorPayload

if TYPE_CHECKING:
    from gatespec_conformance.live.client import CallResult

__all__ = [
    "QUOTED_MAX",
    "judge_answer",
    "judge_call_error",
    "judge_error",
    "judge_failed",
    "judge_rejection",
    "judge_success",
    "payload_of",
]

_SPEC_CODES: Final = frozenset(c.value for c in ErrorCode)
QUOTED_MAX: Final = 200  # characters of an IUT's answer quoted in a finding
_SEED_FIELDS: Final = ("error", "message", "path")

NOT_AN_ERROR: Final = Rule("the call did not fail as an isError result", ("ERROR-NEVER-RAISE",))
# A call answered as a success where the seed demands an error breaks the rule that demands
# it (the check's own requirements, as for a wrong code), not the never-raise rule.
ACCEPTED: Final = Rule("the call succeeded where an error is due")
NO_PAYLOAD: Final = Rule(
    "no JSON error payload in the text content or structuredContent",
    ("ERROR-BROWSE-CARRIER", "ERROR-META-TOOL-RESULT"),
)
SHAPE: Final = Rule(
    "the payload lacks a field of §3.4 (error, message, path)", ("ERROR-BROWSE-SHAPE",)
)
CLOSED: Final = with_facts(
    Rule(
        "the payload carries fields §3.4 does not list",
        ("ERROR-BROWSE-SHAPE",),
        SPEC,
        spec_only="models.yaml ErrorPayload is closed; seed 000 §3.4 lists its fields without "
        "forbidding others",
    ),
    "S000-ERROR-PAYLOAD-OPEN",
)
BOUNDS: Final = Rule(
    "the payload breaks ErrorPayload's bounds",
    ("ERROR-BROWSE-SHAPE",),
    SPEC,
    spec_only="models.yaml bounds message (1-2000 characters) and path (512)",
)
SPEC_CODE_SET: Final = Rule(
    "the code is none of the spec's error codes", ("ERROR-META-TOOL-RESULT",), SPEC
)
SEED_CODE_SET: Final = Rule(
    "the code is none of seed 002's error codes", ("ERROR-META-TOOL-RESULT",), SEED
)
CARRIERS_DIFFER: Final = Rule(
    "structuredContent and the JSON text content say different things", ("ERROR-BROWSE-CARRIER",)
)
REJECTED_BY_SCHEMA: Final = Rule("the call was not rejected", ("ERROR-META-TOOL-RESULT",))
# Charged to the requirements of the check expecting the code (those not about the shape).
WRONG_CODE: Final = Rule("the error code is not the expected one")
SHAPE_REQUIREMENTS: Final = frozenset(
    r for rule in (NOT_AN_ERROR, NO_PAYLOAD, SHAPE, CARRIERS_DIFFER) for r in rule.requirements
) | {"ERROR-META-TOOL-RESULT"}


def payload_of(call: CallResult) -> tuple[dict[str, Any] | None, list[Finding]]:
    """(the error payload of an error result, the carrier rules it breaks)."""
    if call.result is None:
        return None, [Finding(NOT_AN_ERROR, f"no tools/call result: {call.error}")]
    if call.result.is_error is not True:
        return None, [Finding(ACCEPTED, "isError is not true", call.shown())]
    document, carrier = readings.answer(call)
    found = readings.error_payload(document)
    if found is None:
        return None, [Finding(NO_PAYLOAD, "", call.shown())]
    findings = []
    if carrier == "structured" and call.text.strip():
        try:
            in_text = json.loads(call.text)
        except ValueError:
            in_text = found  # prose beside a structured payload: fine
        if in_text != found:
            findings.append(Finding(CARRIERS_DIFFER, "", {"text": call.text[:300]}))
    return found, findings


def judge_error(
    call: CallResult,
    codes: Collection[str],
    seed_codes: Collection[str] | None = SEED_META_TOOL_CODES,
) -> list[Finding]:
    """Every rule an error answer breaks: an isError result carrying a §3.4 payload (read from
    either carrier) whose code is one of `codes` and, at --level seed, of `seed_codes` (None:
    the seeds close no code set for it, as seed 003 closes none for its typed errors)."""
    payload, findings = payload_of(call)
    if payload is None:
        return findings
    missing = [k for k in _SEED_FIELDS if not isinstance(payload.get(k), str)]
    if missing or ("details" in payload and not isinstance(payload["details"], dict)):
        findings.append(Finding(SHAPE, f"missing or not text: {missing or ['details']}", payload))
    extra = sorted(set(payload) - set(ErrorPayload.model_fields))
    if extra:
        findings.append(Finding(CLOSED, f"extra fields {extra}", {k: payload[k] for k in extra}))
    elif not missing:
        try:
            ErrorPayload.model_validate(payload)
        except ValidationError as exc:
            err = exc.errors()[0]
            if err["loc"] and err["loc"][0] != "error":
                where = ".".join(str(p) for p in err["loc"])
                findings.append(Finding(BOUNDS, f"{where}: {err['msg']}", payload))
    code = payload.get("error")
    if code not in _SPEC_CODES:
        findings.append(Finding(SPEC_CODE_SET, repr(code), code))
    if seed_codes is not None and code not in seed_codes:
        findings.append(Finding(SEED_CODE_SET, repr(code), code))
    if code not in codes:
        findings.append(
            Finding(WRONG_CODE, f"expected {' or '.join(sorted(codes))}, got {code}", code)
        )
    return findings


# Seed 003 (the search profile) has its own errors: Decision 4 "`isError: true` for a
# `CallError` with the typed `details` payload per ADR-023", Decision 5 "gets `FORBIDDEN`
# (mapped to an MCP error result)". It names no field of a CallError and closes no code set:
# §3.4's payload and seed 002's codes reach the search profile through AM-SEARCH-CALL-RESULT
# ("a failure of the gateway itself ... is an isError result carrying the ErrorPayload").
CALL_ERROR_AMENDMENT: Final = "AM-SEARCH-CALL-RESULT"


def judge_call_error(call: CallResult, codes: Collection[str], level: str) -> list[Finding]:
    """Every rule a search-profile error answer breaks. At --level seed: an isError result
    carrying a JSON object (either carrier) whose code (readings.call_error_code, under any
    member) is one of `codes`. At --level spec: judge_error's §3.4 payload, its shape and code
    set resting on AM-SEARCH-CALL-RESULT."""
    if level != "seed":
        shape = (SHAPE, CLOSED, BOUNDS, SPEC_CODE_SET, SEED_CODE_SET)
        return [
            charged_to(f, CALL_ERROR_AMENDMENT) if f.rule in shape else f
            for f in judge_error(call, codes, None)
        ]
    payload, findings = payload_of(call)
    if payload is None:
        return findings
    code = readings.call_error_code(payload)
    if code not in codes:
        findings.append(
            Finding(WRONG_CODE, f"expected {' or '.join(sorted(codes))}, got {code}", code)
        )
    return findings


def judge_rejection(
    call: CallResult,
    codes: Collection[str],
    breaks_declared_schema: bool,
    level: str,
) -> list[Finding]:
    """Arguments the meta-tool must refuse. At --level seed, arguments that break the schema
    the IUT itself declares may be refused by its MCP SDK (a JSON-RPC error, or an isError
    result in the SDK's words): that is a refusal too. Otherwise the §3.4 error is expected."""
    if level == "seed" and breaks_declared_schema:
        if call.rpc_error or (call.result is not None and call.result.is_error is True):
            return []
        return [
            Finding(
                REJECTED_BY_SCHEMA, "arguments outside the declared schema passed", call.shown()
            )
        ]
    return judge_error(call, codes)


# ------------------------------------------------------------------ successful answers

NOT_A_SUCCESS: Final = Rule("the call failed", ())
NO_DOCUMENT: Final = Rule("the answer is neither structuredContent nor JSON text", ())
NOT_STRUCTURED: Final = Rule(
    "the answer is not in structuredContent",
    (),
    SPEC,
    amended_by=("AM-OUTPUT-SCHEMA-OFF-WIRE",),
)
OUTPUT_MODEL: Final = Rule(
    "the answer breaks the meta-tool's output model",
    (),
    SPEC,
    amended_by=("AM-OUTPUT-SCHEMA-OFF-WIRE",),
)
_OUTPUTS: dict[str, Draft202012Validator] = {}


def _output(tool: str) -> Draft202012Validator:
    if tool not in _OUTPUTS:
        _OUTPUTS[tool] = Draft202012Validator(output_schema(tool) or {})
    return _OUTPUTS[tool]


def judge_failed(call: CallResult) -> list[Finding]:
    """[the finding] when the call did not succeed, else []."""
    if call.result is not None and not call.result.is_error:
        return []
    payload, _ = payload_of(call) if call.result is not None else (None, [])
    code = payload.get("error") if payload else None
    shown = call.text[:QUOTED_MAX]
    detail = f"{code}: {shown}" if code else str(call.error or shown)
    return [Finding(NOT_A_SUCCESS, detail, call.shown())]


def judge_success(call: CallResult, tool: str) -> tuple[dict[str, Any], list[Finding]]:
    """(the answer as a JSON object, the rules it breaks): a non-error result whose answer
    is a JSON object; at spec level, in structuredContent and valid against the output model
    (AM-OUTPUT-SCHEMA-OFF-WIRE)."""
    found, findings = judge_answer(call, tool)
    if not isinstance(found, dict):
        return {}, findings or [Finding(NO_DOCUMENT, "a JSON value, not an object", call.shown())]
    return found, findings


def judge_answer(call: CallResult, tool: str) -> tuple[Any, list[Finding]]:
    """(the answer as JSON, of any shape, the rules it breaks): `judge_success` for answers a
    seed lets be other than an object (tool_browse's list[ChoiceCard], seed 000 §4.2)."""
    failed = judge_failed(call)
    if failed:
        return None, failed
    found, carrier = readings.answer(call)
    if found is None:
        return None, [Finding(NO_DOCUMENT, "", call.shown())]
    findings = []
    if carrier != "structured":
        findings.append(Finding(NOT_STRUCTURED, "the JSON is in the text content", None))
    errors = sorted(_output(tool).iter_errors(found), key=lambda e: list(e.path))
    if errors:
        where = "/".join(str(p) for p in errors[0].path) or "(root)"
        findings.append(
            Finding(OUTPUT_MODEL, f"at {where}: {errors[0].message[:QUOTED_MAX]}", found)
        )
    return found, findings
