"""Layer-2 families of invocation: tool_execute round trips and argument validation (proved
against the fixture's call log), unknown tools, upstream errors, timeouts, error shapes and
list_changed propagation. FAMILIES also registers, in run order, the transparent profile's
(`transparent`) and the result firewall's and tool_view's (`artifacts`)."""

from __future__ import annotations

import functools
import json
from typing import Any, Final

from gatespec_conformance.fixtures.catalog import ADD_TOOL, ECHO, FAILS, FAILURE_TEXT, HANG, by_name
from gatespec_conformance.live import artifacts, transparent
from gatespec_conformance.live.checks import (
    Drawn,
    Emit,
    Family,
    expect_error,
    expect_success,
)
from gatespec_conformance.live.client import CallResult
from gatespec_conformance.live.draws import (
    draw_cases,
    invalid_instance,
    valid_instance,
)
from gatespec_conformance.live.facts import Live, listed_tool_id
from gatespec_conformance.live.invocation import (
    ARGS_INVALID,
    MISSING_TOOL,
    REACHED,
    SHAPE,
    STATUS,
    SUMMARY,
    TRANSPARENT,
    UNKNOWN_CODES,
    WIRE,
    draw_meta,
    family,
    meta_invalid,
    no_upstream,
    seed_passthrough,
    unknown_basis,
    upstream_findings,
)
from gatespec_conformance.live.payloads import (
    judge_rejection,
    judge_success,
    payload_of,
)
from gatespec_conformance.rules import Finding
from gatespec_surface import parsers
from gatespec_surface.errors import ErrorCode

__all__ = ["FAMILIES"]

_ECHO_SCHEMA: Final = by_name(ECHO).input_schema


# ------------------------------------------------------------------ execute


async def _round_trip(live: Live, emit: Emit) -> None:
    args = {"text": "hello from the kit", "times": 2}
    log = live.log
    mark = log.mark() if log else 0
    call = await live.fixture_call(ECHO, args)
    through = seed_passthrough(live, call, ECHO, args)
    envelope, findings = judge_success(call, "tool_execute") if through is None else ({}, through)
    if envelope:
        if envelope.get("status") != "ok":
            findings.append(Finding(STATUS, f"{envelope.get('status')!r}, not 'ok'"))
        if "hello from the kit" not in str(envelope.get("summary")):
            findings.append(Finding(SUMMARY, "", envelope.get("summary")))
    if log is not None:
        findings += upstream_findings(log.since(mark), ECHO, args)
    emit.judge("", findings, input={"tool": ECHO, "args": args}, got=call.shown())


async def _wire_name(live: Live, emit: Emit) -> None:
    wire = await live.wire_name(ECHO)
    args = {"text": "by wire name"}
    call = await live.call("tool_execute", {"tool_id": wire, "args": args})
    emit.judge("", expect_success(call), input={"tool_id": wire, "args": args}, got=call.shown())


@functools.cache  # drawn once per run, though run and named separately
def _draw_valid(seed: int, n: int) -> list[Drawn]:
    return draw_cases("execute/args-valid", valid_instance(_ECHO_SCHEMA), seed, min(n, 10))


async def _args_valid(live: Live, emit: Emit) -> None:
    for case in _draw_valid(live.options.seed, live.options.max_examples):
        args = case.input["args"]
        call, new = await no_upstream(live, live.fixture_call(ECHO, args))
        findings = expect_success(call) + upstream_findings(new, ECHO, args)
        emit.judge(case.case, findings, input={"tool": ECHO, "args": args}, got=call.shown())


@functools.cache  # drawn once per run, though run and named separately
def _draw_invalid(seed: int, n: int) -> list[Drawn]:
    fixed = [
        Drawn("deep", {"tool": "deep_nesting", "args": _deep_wrong(8)}),
        Drawn("draft07", {"tool": "draft07_schema", "args": {"count": -1}}),
        Drawn("draft07-ref-type", {"tool": "draft07_schema", "args": {"count": "three"}}),
    ]
    drawn = draw_cases("execute/args-invalid", invalid_instance(_ECHO_SCHEMA), seed, n)
    return fixed + [Drawn(d.case, {"tool": ECHO, **d.input}, d.label) for d in drawn]


def _deep_wrong(levels: int) -> dict[str, Any]:
    node: Any = 12345  # the innermost value must be a string
    for depth in range(levels, 0, -1):
        node = {f"level{depth}": node}
    return dict(node)


async def _args_invalid(live: Live, emit: Emit) -> None:
    for case in _draw_invalid(live.options.seed, live.options.max_examples):
        tool, args = case.input["tool"], case.input["args"]
        if tool not in (await live.fixture_ids()):
            continue  # not served (--tools)
        tool_id = (await live.fixture_ids())[tool]
        # Arguments that break the IUT's own declared schema for tool_execute (args not an
        # object) may be refused by its MCP SDK at --level seed (payloads.judge_rejection).
        breaks = await live.breaks_declared("tool_execute", {"tool_id": tool_id, "args": args})
        call, new = await no_upstream(live, live.fixture_call(tool, args))
        findings = judge_rejection(call, {ARGS_INVALID}, breaks, live.level)
        if new:
            findings.append(Finding(REACHED, f"{len(new)} upstream call(s)", new[:2]))
        emit.judge(
            case.case,
            findings,
            input={"tool": tool, "args": args},
            expected={"error": ARGS_INVALID, "upstream_calls": 0},
            got={**call.shown(), "upstream_calls": len(new)},
            duration=call.duration,
        )


async def _unknown_tool(live: Live, emit: Emit) -> None:
    namespace = await live.namespace()
    missing = parsers.make_tool_id(namespace, MISSING_TOOL, {})
    codes = UNKNOWN_CODES[live.level]
    for case, tool_id in (("tool-id", missing), ("wire-name", parsers.encode_wire_name(missing))):
        if case == "wire-name" and live.level == "seed":
            emit.skip(case, "wire names exist by AM-WIRE-NAME")
            continue
        call = await live.call("tool_execute", {"tool_id": tool_id, "args": {}})
        emit.judge(
            case,
            expect_error(call, codes),
            input={"tool_id": tool_id},
            got=call.shown(),
            spec_only=unknown_basis(call),
        )


async def _upstream_error(live: Live, emit: Emit) -> None:
    """A tool that fails (isError) reaches the caller as an error: seed 002's envelope with
    status "error", or an UPSTREAM_ERROR payload. The spec adds that the result carries isError
    too (AM-UPSTREAM-ISERROR)."""
    call = await live.fixture_call(FAILS)
    found, _ = call.document()
    envelope = found if isinstance(found, dict) and "status" in found else {}
    problem: Any = None
    amended: tuple[str, ...] = ()
    through = seed_passthrough(live, call, FAILS)
    if through is not None:
        problem = through  # the upstream's isError result itself (seed 000 §4.1)
    elif call.result is None:
        problem = f"no result: {call.error}"
    elif call.result.is_error and envelope.get("status") == "error":
        pass  # the envelope, marked as an error result
    elif call.result.is_error:
        problem = expect_error(call, {ErrorCode.UPSTREAM_ERROR.value})
    elif envelope.get("status") != "error":
        problem = f"an upstream isError result gave status {envelope.get('status')!r}"
    else:
        problem = "the failed call's result says isError false"
        amended = ("AM-UPSTREAM-ISERROR",)
    if not problem and FAILURE_TEXT not in call.text + json.dumps(call.structured):
        problem = "the upstream's error text did not reach the caller"
    emit.judge(
        "",
        problem,
        input={"tool": FAILS},
        expected=FAILURE_TEXT,
        got=call.shown(),
        amended=amended,
    )


# ------------------------------------------------------------------ results and artifacts


async def _timeout(live: Live, emit: Emit) -> None:
    """The hanging tool comes back as an error within the bound. `args` is sent (empty) so an
    IUT that requires it still reaches the hang."""
    bound = live.options.hang_timeout
    tool_id = (await live.fixture_ids())[HANG]
    call = await live.session.call("tool_execute", {"tool_id": tool_id, "args": {}}, bound)
    codes = {ErrorCode.TIMEOUT.value, ErrorCode.UPSTREAM_ERROR.value}
    problem: Any = (
        expect_error(call, codes) if call.result is not None else f"{call.error} (bound {bound:g}s)"
    )
    emit.judge(
        "",
        problem,
        input={"tool": HANG},
        expected={"error": sorted(codes)},
        got=call.shown(),
        duration=call.duration,
    )


async def _after_timeout(live: Live, emit: Emit) -> None:
    call = await live.fixture_call(ECHO, {"text": "still there?"})
    emit.judge("", expect_success(call), input={"tool": ECHO}, got=call.shown())


# ------------------------------------------------------------------ transparent


async def _list_changed(live: Live, emit: Emit) -> None:
    session = live.session
    before = {t.name for t in await session.list_tools(live.options.timeout)}
    call, missing = await session.expect_list_changed(
        lambda: live.fixture_call(ADD_TOOL, {}), live.options.list_changed_timeout
    )
    problem: Any = expect_success(call) or missing
    new: list[str] = []
    if not problem:
        after = {t.name for t in await session.list_tools(live.options.timeout)}
        for name in sorted(after - before):
            tool_id = listed_tool_id(name)
            if tool_id and parsers.parse_tool_id(tool_id).name.startswith("added_"):
                new.append(name)
        if not new:
            problem = "tools/list does not show the added tool"
    emit.judge("", problem, input={"tool": ADD_TOOL}, got={"call": call.shown(), "new": new})


# ------------------------------------------------------------------ error shapes


async def _payloads(live: Live, emit: Emit) -> None:
    """Every error result of the run, grouped by meta-tool and code: the §3.4 payload, read
    from either carrier, with the code set the level allows."""
    groups: dict[str, list[CallResult]] = {}
    for tool, call in live.errors:
        if tool not in live.meta_tools or (call.result is None and "no answer" in str(call.error)):
            continue  # direct calls of stripped entries and hangs are judged elsewhere
        if call.rpc_error:
            continue  # refused by the IUT's MCP SDK: judged by the check that sent it
        if live.level == "seed" and await live.breaks_declared(tool, call.arguments):
            continue  # the IUT's SDK may refuse in its own words: judged by the sender
        document, _ = call.document()
        if isinstance(document, dict) and "status" in document and "error" not in document:
            continue  # a failed tool's envelope (AM-UPSTREAM-ISERROR): execute/upstream-error
        if tool == "tool_execute" and await _passed_failure(live, call):
            continue  # the upstream's own isError result passed through: execute/upstream-error
        payload, _ = payload_of(call)
        code = payload.get("error") if payload else None
        key = (
            code
            if isinstance(code, str)
            else ("protocol-error" if call.result is None else "malformed")
        )
        groups.setdefault(f"{tool}/{key}", []).append(call)
    for key, calls in sorted(groups.items()):
        found = [(c, f) for c in calls if (f := _shape(c))]
        call, findings = found[0] if found else (calls[0], [])
        emit.judge(
            key,
            findings,
            input={call.name: call.arguments, "results": len(calls)},
            got=call.shown(),
        )


async def _passed_failure(live: Live, call: CallResult) -> bool:
    """Whether a transparent proxy's error result is the failing fixture tool's own result
    passed through (seed 000 §4.1 "returns the result"), at --level seed."""
    args = call.arguments if isinstance(call.arguments, dict) else {}
    if live.level != "seed" or args.get("tool_id") != (await live.fixture_ids()).get(FAILS):
        return False
    return seed_passthrough(live, call, FAILS) == []


def _shape(call: CallResult) -> list[Finding]:
    payload, _ = payload_of(call)
    code = payload.get("error") if payload else None
    return expect_error(call, {code} if isinstance(code, str) else set())


_VALIDATE: Final = (
    "VALIDATE-BEFORE-UPSTREAM",
    "VALIDATE-ARGS-INVALID-ERROR",
    "VALIDATE-NO-UPSTREAM-ON-INVALID",
    "ERROR-META-TOOL-RESULT",
)

# The transparent profile's families first, the firewall's after execute's own, and
# errors/payload late: it judges the error answers of the families it runs with.
FAMILIES: Final[list[Family]] = [
    *transparent.FAMILIES,
    family(
        "execute/round-trip",
        _round_trip,
        via_requirements=(
            "ENVELOPE-EXECUTE-PIPELINE",
            "ENVELOPE-STATUS",
            "ENVELOPE-TEXT-SUMMARY",
            "TOOLID-SOLE-KEY",
        ),
    ),
    family(
        "execute/wire-name",
        _wire_name,
        amended_by=("AM-WIRE-NAME",),
        seed=WIRE,
        via_requirements=("EXPOSE-TRANSPARENT-NAME-IS-TOOLID", "TOOLID-SOLE-KEY"),
    ),
    family(
        "execute/args-valid",
        _args_valid,
        via_requirements=("VALIDATE-BEFORE-UPSTREAM", "ENVELOPE-EXECUTE-PIPELINE"),
        draw=_draw_valid,
    ),
    family("execute/args-invalid", _args_invalid, via_requirements=_VALIDATE, draw=_draw_invalid),
    family(
        "execute/meta-args-invalid",
        meta_invalid("tool_execute"),
        via_requirements=("ERROR-META-TOOL-RESULT", "VALIDATE-NO-UPSTREAM-ON-INVALID"),
        draw=draw_meta("tool_execute"),
    ),
    family("execute/unknown-tool", _unknown_tool, via_requirements=("ROUTE-UNKNOWN-TOOL", *SHAPE)),
    family(
        "execute/upstream-error",
        _upstream_error,
        via_requirements=("ROUTE-PROPAGATE-ERRORS", *SHAPE),
    ),
    *artifacts.FAMILIES,
    # The timeout's error result is judged with every other one by errors/payload.
    family("execute/timeout", _timeout, via_requirements=("ROUTE-TIMEOUT",)),
    family("execute/after-timeout", _after_timeout, via_requirements=("ROUTE-TIMEOUT",)),
    family(
        "errors/payload",
        _payloads,
        via_requirements=("ERROR-BROWSE-SHAPE", "ERROR-BROWSE-CARRIER", *SHAPE),
    ),
    family(
        "list-changed/propagation",
        _list_changed,
        TRANSPARENT,
        via_requirements=("TRANSPORT-LIST-CHANGED-NOTIFY",),
    ),
]
