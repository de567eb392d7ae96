"""Layer-2 families of the transparent profile: its stripped tools/list entries (names,
sentinel schemas, truncated descriptions, not callable) and tool_hydrate."""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable
from typing import Any, Final

from gatespec_conformance.fixtures.catalog import ECHO
from gatespec_conformance.functions.card_rules import banned_in_text
from gatespec_conformance.functions.run import same_json
from gatespec_conformance.live import readings
from gatespec_conformance.live.cards import annotation_findings
from gatespec_conformance.live.checks import (
    Emit,
    Family,
    expect_error,
)
from gatespec_conformance.live.facts import Live, listed_tool_id
from gatespec_conformance.live.invocation import (
    MISSING_TOOL,
    SHAPE,
    TRANSPARENT,
    UNKNOWN_CODES,
    WIRE,
    draw_meta,
    family,
    meta_invalid,
    no_upstream,
    unknown_basis,
)
from gatespec_conformance.live.payloads import (
    judge_answer,
    judge_success,
)
from gatespec_conformance.live.truncation_judge import truncation_findings
from gatespec_conformance.rules import SEED, SPEC, Finding, Rule
from gatespec_conformance.tokens import count_tokens
from gatespec_surface import parsers
from gatespec_surface.budgets import (
    CARD_HARD_CAP_TOKENS,
)
from gatespec_surface.errors import GatewayError
from gatespec_surface.grammars import WIRE_NAME, is_tool_id, is_wire_name
from gatespec_surface.schemas import STRIPPED_INPUT_SCHEMA

__all__ = ["FAMILIES"]


async def _stripped(live: Live, emit: Emit, judge: Callable[[Any], Any]) -> None:
    for tool in await live.stripped():
        emit.judge(tool.name, judge(tool), got=tool.model_dump(by_alias=True, exclude_none=True))


_WIRE_NAME: Final = Rule(
    "the name is not a wire name that decodes to a tool_id",
    ("EXPOSE-TRANSPARENT-NAME-IS-TOOLID",),
    SPEC,
)
_ID_NAME: Final = Rule(
    "the name is neither the tool_id nor its URL-encoding",
    ("EXPOSE-TRANSPARENT-NAME-IS-TOOLID", "EXPOSE-URL-ENCODE-NAMES"),
    SEED,
)


async def _stripped_names(live: Live, emit: Emit) -> None:
    def judge(tool: Any) -> list[Finding]:
        out = []
        if not is_wire_name(tool.name):
            out.append(Finding(_WIRE_NAME, f"does not match {WIRE_NAME.json_pattern}", tool.name))
        elif not parsers.is_shortened_wire_name(tool.name):
            try:
                parsers.decode_wire_name(tool.name)
            except GatewayError as exc:
                out.append(Finding(_WIRE_NAME, exc.message, tool.name))
        if not is_tool_id(urllib.parse.unquote(tool.name)):
            out.append(Finding(_ID_NAME, "", tool.name))
        return out

    await _stripped(live, emit, judge)


async def _stripped_schemas(live: Live, emit: Emit) -> None:
    def judge(tool: Any) -> str | None:
        if same_json(tool.input_schema, STRIPPED_INPUT_SCHEMA):
            return None
        return f"inputSchema is not the sentinel {STRIPPED_INPUT_SCHEMA}"

    await _stripped(live, emit, judge)


async def _stripped_fields(live: Live, emit: Emit) -> None:
    def judge(tool: Any) -> str | None:
        extra = sorted(
            tool.model_dump(by_alias=True, exclude_none=True).keys()
            - {"name", "description", "inputSchema"}
        )
        return f"carries more than name, description and inputSchema: {extra}" if extra else None

    await _stripped(live, emit, judge)


_DESCRIPTION_CAP: Final = Rule(
    f"the description is over a card's {CARD_HARD_CAP_TOKENS}-token hard cap",
    ("EXPOSE-TRANSPARENT-DESCRIPTION-TRUNCATED", "BUDGET-CARD-HARD-CAP"),
)


async def _stripped_descriptions(live: Live, emit: Emit) -> None:
    """The description is the upstream one truncated per §2.4, within a card's cap, and carries
    no banned content (seed 000 §2.2: the entries are cards in tools/list form)."""
    ids = await live.fixture_ids()
    by_id = {tool_id: by_name_in(live, name).description for name, tool_id in ids.items()}

    def judge(tool: Any) -> list[Finding]:
        text = tool.description or ""
        out = banned_in_text(text)
        tokens = count_tokens(text)
        if tokens > CARD_HARD_CAP_TOKENS:
            out.append(Finding(_DESCRIPTION_CAP, f"{tokens} tokens", text[:80]))
        tool_id = listed_tool_id(tool.name)
        if tool_id in by_id:
            out += truncation_findings(by_id[tool_id], text, live.level)
        return out

    await _stripped(live, emit, judge)


def by_name_in(live: Live, name: str) -> Any:
    return next(t for t in live.fixture if t.name == name)


async def _not_callable(live: Live, emit: Emit) -> None:
    for name, args in ((ECHO, {"text": "called directly"}), ("read_file", {"path": "a.txt"})):
        if name not in await live.fixture_ids():
            continue
        listed = await live.listed_name(name)
        pending = live.session.call(listed, args, live.options.timeout)
        call, new = await no_upstream(live, pending)
        problem = None
        if call.result is not None and not call.result.is_error:
            problem = "a stripped entry answered a direct call"
        if new:
            problem = f"a direct call of a stripped entry reached upstream ({len(new)} calls)"
        emit.judge(
            name,
            problem,
            input={"name": listed, "arguments": args},
            expected={"upstream_calls": 0},
            got={**call.shown(), "upstream_calls": len(new)},
        )


_HYDRATED: Final = Rule(
    "the hydrated schema is not the upstream's",
    ("HYDRATE-SHARED-OPERATION", "REGISTRY-STORE-FULL-SCHEMA", "EXPOSE-SCHEMAS-ONLY-VIA-HYDRATION"),
)
_NO_SCHEMA: Final = Rule(
    "the hydration carries no schema under a field the seeds name "
    f"({', '.join(readings.INPUT_SCHEMA_KEYS)})",
    ("HYDRATE-SHARED-OPERATION", "EXPOSE-SCHEMAS-ONLY-VIA-HYDRATION"),
)
_TWO_SCHEMAS: Final = Rule(
    "the hydration's schema fields say different things",
    ("HYDRATE-SHARED-OPERATION", "REGISTRY-STORE-FULL-SCHEMA"),
)
_OUTPUT_KEPT: Final = Rule("the upstream outputSchema is not kept", ("HYDRATE-OUTPUT-SCHEMA-KEPT",))
_HYDRATE_FIELDS: Final = Rule(
    "the hydration differs from the fixture's tool",
    ("HYDRATE-SHARED-OPERATION", "TOOLID-SOLE-KEY"),
    SPEC,
    amended_by=("AM-OUTPUT-SCHEMA-OFF-WIRE",),
)


def hydration_findings(document: Any, input_schema: Any, output_schema: Any) -> list[Finding]:
    """The seed rules a hydration answer breaks (readings.hydrated: the schema under any field
    the seeds name, in the answer or a whole HydrationResult): the upstream's input schema, and
    its outputSchema when it has one (seed 002)."""
    got = readings.hydrated(document)
    findings = []
    if not got.found:
        findings.append(Finding(_NO_SCHEMA, "", document))
    elif got.disagrees:
        findings.append(Finding(_TWO_SCHEMAS, f"{got.where} and {got.disagrees}", document))
    elif not same_json(got.input_schema, input_schema):
        findings.append(Finding(_HYDRATED, f"at {got.where}", got.input_schema))
    if output_schema and not same_json(got.output_schema, output_schema):
        findings.append(Finding(_OUTPUT_KEPT, "", got.output_schema))
    return findings


async def _hydrate(live: Live, emit: Emit) -> None:
    """The real schema comes back (seed 000 §4.1, §4.3), under any field the seeds name, and an
    upstream outputSchema is kept (seed 002); at --level spec, exactly HydrateResult."""
    ids = await live.fixture_ids()
    for tool in live.fixture:
        if tool.expect != "admit":
            continue
        tool_id = ids[tool.name]
        call = await live.call("tool_hydrate", {"tool_id": tool_id})
        document, findings = judge_answer(call, "tool_hydrate")
        want = {
            "tool_id": tool_id,
            "name": tool.name,
            "description": tool.description or "",
            "input_schema": tool.input_schema,
            "output_schema": tool.output_schema,
        }
        if document is not None:
            findings += hydration_findings(document, tool.input_schema, tool.output_schema)
            got = document if isinstance(document, dict) else {}
            differs = [k for k, v in want.items() if not same_json(got.get(k), v)]
            if differs:
                findings.append(Finding(_HYDRATE_FIELDS, f"in {differs}", document))
        emit.judge(
            tool.name,
            findings,
            input={"tool_id": tool_id},
            expected=want,
            got=document if document is not None else call.shown(),
        )


async def _hydrate_annotations(live: Live, emit: Emit) -> None:
    ids = await live.fixture_ids()
    for tool in live.fixture:
        if tool.expect != "admit" or (tool.annotations is None and tool.name != ECHO):
            continue
        call = await live.call("tool_hydrate", {"tool_id": ids[tool.name]})
        got, findings = judge_success(call, "tool_hydrate")
        if got:
            findings += annotation_findings(tool.annotations, got)
        emit.judge(tool.name, findings, input={"annotations": tool.annotations}, got=call.shown())


async def _hydrate_by_wire(live: Live, emit: Emit) -> None:
    tool_id, wire = (await live.fixture_ids())[ECHO], await live.wire_name(ECHO)
    call = await live.call("tool_hydrate", {"tool_id": wire})
    got, findings = judge_success(call, "tool_hydrate")
    problem: Any = findings
    if not findings and got.get("tool_id") != tool_id:
        problem = "hydrating by wire name names another tool"
    emit.judge("", problem, input={"tool_id": wire}, expected=tool_id, got=call.shown())


async def _hydrate_unknown(live: Live, emit: Emit) -> None:
    missing = parsers.make_tool_id(await live.namespace(), MISSING_TOOL, {})
    call = await live.call("tool_hydrate", {"tool_id": missing})
    codes = UNKNOWN_CODES[live.level]
    findings = expect_error(call, codes)
    basis = unknown_basis(call)
    emit.judge("", findings, input={"tool_id": missing}, got=call.shown(), spec_only=basis)


FAMILIES: Final[list[Family]] = [
    family(
        "stripped/name",
        _stripped_names,
        TRANSPARENT,
        via_requirements=("EXPOSE-TRANSPARENT-NAME-IS-TOOLID",),
    ),
    family(
        "stripped/schema",
        _stripped_schemas,
        TRANSPARENT,
        via_requirements=("EXPOSE-TRANSPARENT-SENTINEL-SCHEMA",),
    ),
    family(
        "stripped/fields",
        _stripped_fields,
        TRANSPARENT,
        via_requirements=(
            "EXPOSE-TRANSPARENT-SENTINEL-SCHEMA",
            "EXPOSE-SCHEMAS-ONLY-VIA-HYDRATION",
        ),
    ),
    family(
        "stripped/description",
        _stripped_descriptions,
        TRANSPARENT,
        via_requirements=(
            "EXPOSE-TRANSPARENT-DESCRIPTION-TRUNCATED",
            "TRUNC-SENTENCE-PREFIX",
            "TRUNC-HARD-CUT-ELLIPSIS",
        ),
    ),
    family(
        "stripped/not-callable",
        _not_callable,
        TRANSPARENT,
        via_requirements=("EXPOSE-STRIPPED-NOT-CALLABLE",),
    ),
    family(
        "hydrate/round-trip",
        _hydrate,
        TRANSPARENT,
        via_requirements=(
            "HYDRATE-SHARED-OPERATION",
            "REGISTRY-STORE-FULL-SCHEMA",
            "EXPOSE-SCHEMAS-ONLY-VIA-HYDRATION",
            "HYDRATE-OUTPUT-SCHEMA-KEPT",
            "TOOLID-SOLE-KEY",
        ),
    ),
    family(
        "hydrate/wire-name",
        _hydrate_by_wire,
        TRANSPARENT,
        amended_by=("AM-WIRE-NAME",),
        seed=WIRE,
        via_requirements=("EXPOSE-TRANSPARENT-NAME-IS-TOOLID", "TOOLID-SOLE-KEY"),
    ),
    family(
        "hydrate/annotations",
        _hydrate_annotations,
        TRANSPARENT,
        seed="the seeds do not say what tool_hydrate returns besides the schema",
        via_requirements=("ANNOT-READ-ONLY", "ANNOT-DESTRUCTIVE-TAG", "ANNOT-COST-HINT"),
    ),
    family("hydrate/unknown", _hydrate_unknown, TRANSPARENT, via_requirements=SHAPE),
    family(
        "hydrate/meta-args-invalid",
        meta_invalid("tool_hydrate"),
        TRANSPARENT,
        via_requirements=SHAPE,
        draw=draw_meta("tool_hydrate"),
    ),
]
