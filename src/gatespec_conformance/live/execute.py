"""Layer-2 families of invocation: tool_execute round trips and argument validation (proved
against the fixture's call log), the result firewall and tool_view on stored artifacts,
hydration, the transparent profile's stripped entries, error shapes, timeouts and
list_changed propagation."""

from __future__ import annotations

import base64
import functools
import inspect
import json
import urllib.parse
from collections.abc import Awaitable, Callable
from typing import Any, Final

from gatespec_conformance.fixtures.upstream import (
    ADD_TOOL,
    BIG_TEXT,
    ECHO,
    FAILS,
    FAILURE_TEXT,
    HANG,
    IMAGE,
    IMAGE_BYTES,
    STRUCTURED,
    STRUCTURED_CONTENT,
    big_text,
    by_name,
    direct_result,
)
from gatespec_conformance.functions.card_rules import banned_in_text
from gatespec_conformance.functions.run import same_json
from gatespec_conformance.live import readings
from gatespec_conformance.live.browse import annotation_findings
from gatespec_conformance.live.checks import (
    Drawn,
    Emit,
    Family,
    allowed_codes,
    expect_error,
    expect_success,
)
from gatespec_conformance.live.client import CallResult
from gatespec_conformance.live.draws import (
    draw_cases,
    grammar_values,
    invalid_instance,
    meta_args,
    valid_instance,
    vector_errors,
)
from gatespec_conformance.live.facts import Live, NoFact, listed_tool_id
from gatespec_conformance.live.payloads import (
    judge_answer,
    judge_rejection,
    judge_success,
    payload_of,
)
from gatespec_conformance.live.truncation_judge import truncation_findings
from gatespec_conformance.rules import SEED, SPEC, Finding, Rule, recorded, seed_value
from gatespec_conformance.tokens import count_tokens
from gatespec_surface import parsers
from gatespec_surface.budgets import (
    CARD_HARD_CAP_TOKENS,
    STRUCTURED_CONTENT_LABEL,
    SUMMARY_MAX_CHARS,
)
from gatespec_surface.errors import ErrorCode, GatewayError
from gatespec_surface.grammars import WIRE_NAME, is_tool_id, is_wire_name
from gatespec_surface.schemas import STRIPPED_INPUT_SCHEMA

__all__ = ["FAMILIES"]

_ARGS_INVALID: Final = ErrorCode.ARGS_INVALID.value
_VIEW_FAILED: Final = ErrorCode.VIEW_FAILED.value
_NOT_FOUND: Final = ErrorCode.TOOL_NOT_FOUND.value
_ECHO_SCHEMA: Final = by_name(ECHO).input_schema
_UNKNOWN_HANDLE: Final = "art_" + "0" * 16
_MISSING_TOOL: Final = "zz_no_such_tool"
# An unknown tool: the spec says TOOL_NOT_FOUND (seed 001's "Tool not found"); seed 000/002 give
# no code of their own, and HYDRATE_FAILED (§5.5) or ARGS_INVALID read as fairly.
_UNKNOWN_CODES: Final = {
    "spec": {_NOT_FOUND},
    "seed": {_NOT_FOUND, ErrorCode.HYDRATE_FAILED.value, _ARGS_INVALID},
}
# Seed 002: "envelope.summary contains truncated text (max 500 chars)".
SEED_SUMMARY_MAX: Final = int(seed_value(("S002-SUMMARY-MAX",), SUMMARY_MAX_CHARS))

_STATUS: Final = Rule("the envelope's status is not the expected one", ("ENVELOPE-STATUS",))
_SUMMARY: Final = Rule("the summary does not carry the upstream text", ("ENVELOPE-TEXT-SUMMARY",))
_UPSTREAM: Final = Rule(
    "upstream did not receive exactly this call", ("ENVELOPE-EXECUTE-PIPELINE", "TOOLID-SOLE-KEY")
)
_REACHED: Final = Rule(
    "a call that must not reach upstream did", ("VALIDATE-NO-UPSTREAM-ON-INVALID",)
)
_ARTIFACT: Final = Rule(
    "no artifact of the expected size holds the result",
    levels=SPEC,
    spec_only="budgets.yaml's text artifact threshold and models.yaml ArtifactRef.size_bytes",
)


_PASSED: Final = Rule("neither a ResultEnvelope nor the upstream's result passed through")


def _through(live: Live, call: CallResult, tool: str, args: Any = None) -> list[Finding] | None:
    """At --level seed, a transparent proxy's tool_execute may return the upstream's result
    itself (seed 000 §4.1 "calls upstream, and returns the result"; readings.passed_through):
    then it must BE the fixture's result for this call (content, structuredContent, isError).
    None when the answer is to be judged as an envelope or error payload."""
    if live.level != "seed" or live.profile != "transparent":
        return None
    differs = readings.passed_through(call, direct_result(tool, args or {}))
    if differs is None:
        return None
    return [Finding(_PASSED, "; ".join(differs), call.shown())] if differs else []


def _envelope(call: CallResult) -> dict[str, Any]:
    found, _ = call.document()
    return found if isinstance(found, dict) and not call.is_error else {}


def _upstream_findings(new: list[dict[str, Any]], name: str, args: Any) -> list[Finding]:
    if len(new) != 1:
        return [Finding(_UPSTREAM, f"{len(new)} calls, not exactly one", new[:3])]
    if new[0].get("name") != name:
        return [Finding(_UPSTREAM, f"called as {new[0].get('name')!r}, not {name!r}", new[0])]
    if not same_json(new[0].get("arguments"), args):
        return [Finding(_UPSTREAM, "the arguments changed on the way", new[0])]
    return []


async def _no_upstream(live: Live, pending: Awaitable[CallResult]) -> tuple[CallResult, list[Any]]:
    """Await a call (a coroutine does not start before it is awaited) and return it with
    what the fixture logged meanwhile."""
    try:
        log = live.require_log()
    except NoFact:
        if inspect.iscoroutine(pending):
            pending.close()  # never sent
        raise
    mark = log.mark()
    call = await pending
    return call, log.since(mark)


# ------------------------------------------------------------------ execute


async def _round_trip(live: Live, emit: Emit) -> None:
    args = {"text": "hello from the kit", "times": 2}
    log = live.log
    mark = log.mark() if log else 0
    call = await live.fixture_call(ECHO, args)
    through = _through(live, call, ECHO, args)
    envelope, findings = judge_success(call, "tool_execute") if through is None else ({}, through)
    if envelope:
        if envelope.get("status") != "ok":
            findings.append(Finding(_STATUS, f"{envelope.get('status')!r}, not 'ok'"))
        if "hello from the kit" not in str(envelope.get("summary")):
            findings.append(Finding(_SUMMARY, "", envelope.get("summary")))
    if log is not None:
        findings += _upstream_findings(log.since(mark), ECHO, args)
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
        call, new = await _no_upstream(live, live.fixture_call(ECHO, args))
        findings = expect_success(call) + _upstream_findings(new, ECHO, args)
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
        call, new = await _no_upstream(live, live.fixture_call(tool, args))
        findings = judge_rejection(call, {_ARGS_INVALID}, breaks, live.level)
        if new:
            findings.append(Finding(_REACHED, f"{len(new)} upstream call(s)", new[:2]))
        emit.judge(
            case.case,
            findings,
            input={"tool": tool, "args": args},
            expected={"error": _ARGS_INVALID, "upstream_calls": 0},
            got={**call.shown(), "upstream_calls": len(new)},
            duration=call.duration,
        )


def _meta_invalid(tool: str) -> Callable[[Live, Emit], Awaitable[None]]:
    """A family runner: drawn invalid arguments of a meta-tool never reach upstream. At
    --level seed, arguments that break only the spec's schema (not one the seeds state, nor the
    IUT's own declared one) are not judged."""

    async def run(live: Live, emit: Emit) -> None:
        for case in _draw_meta(tool)(live.options.seed, live.options.max_examples):
            prop = next((p for p in case.input if p != "unexpected"), None)
            codes = allowed_codes(tool, prop) if case.label == "invalid_value" else {_ARGS_INVALID}
            breaks = await live.breaks_declared(tool, case.input)
            if live.level == "seed" and not breaks and case.label != "missing_required":
                emit.skip(case.case, "the seeds do not make these arguments invalid")
                continue
            log = live.log
            mark = log.mark() if log else 0
            call = await live.call(tool, case.input)
            findings = judge_rejection(call, codes, breaks, live.level)
            new = log.since(mark) if log else []
            if new:
                findings.append(Finding(_REACHED, f"{len(new)} upstream call(s)", new[:2]))
            emit.judge(
                case.case,
                findings,
                input=case.input,
                expected={"error": sorted(codes)},
                got=call.shown(),
                duration=call.duration,
                spec_only="" if breaks or case.label == "missing_required" else _SPEC_ARGS,
            )

    return run


_SPEC_ARGS: Final = (
    "the meta-tools' argument rules of profiles.yaml; the seeds name the arguments only"
)


@functools.cache
def _draw_meta(tool: str) -> Callable[[int, int], list[Drawn]]:
    @functools.cache
    def draw(seed: int, n: int) -> list[Drawn]:
        return draw_cases(f"{tool}/meta-args-invalid", meta_args(tool), seed, n)

    return draw


async def _unknown_tool(live: Live, emit: Emit) -> None:
    namespace = await live.namespace()
    missing = parsers.make_tool_id(namespace, _MISSING_TOOL, {})
    codes = _UNKNOWN_CODES[live.level]
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
            spec_only=_unknown_basis(call),
        )


def _unknown_basis(call: CallResult) -> str:
    """Why an unknown tool's code is the spec's alone, when the seeds would accept it."""
    seed = [f for f in expect_error(call, _UNKNOWN_CODES["seed"]) if "seed" in f.rule.levels]
    if seed:
        return ""
    return "errors.yaml: TOOL_NOT_FOUND for an unknown tool; seeds 000/002 name no code for it"


async def _upstream_error(live: Live, emit: Emit) -> None:
    """A tool that fails (isError) reaches the caller as an error: seed 002's envelope with
    status "error", or an UPSTREAM_ERROR payload. The spec adds that the result carries isError
    too (AM-UPSTREAM-ISERROR)."""
    call = await live.fixture_call(FAILS)
    found, _ = call.document()
    envelope = found if isinstance(found, dict) and "status" in found else {}
    problem: Any = None
    amended: tuple[str, ...] = ()
    through = _through(live, call, FAILS)
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


def _artifacts(call: CallResult) -> list[dict[str, Any]]:
    found = _envelope(call).get("artifacts")
    return [a for a in found if isinstance(a, dict)] if isinstance(found, list) else []


async def _large_text(live: Live, emit: Emit) -> None:
    """Seed 002: the summary is the text cut to at most 500 characters; the spec adds an
    artifact that holds the whole text."""
    call = await live.fixture_call(BIG_TEXT)
    text = big_text()
    through = _through(live, call, BIG_TEXT)
    envelope, findings = judge_success(call, "tool_execute") if through is None else ({}, through)
    summary = str(envelope.get("summary", ""))
    size = len(text.encode("utf-8"))
    if envelope:
        kept = summary.rstrip("…").rstrip()
        if len(summary) > SEED_SUMMARY_MAX or not text.startswith(kept):
            findings.append(Finding(_SUMMARY, f"{len(summary)} characters", summary[:80]))
        if not any(a.get("size_bytes") == size for a in _artifacts(call)):
            findings.append(Finding(_ARTIFACT, f"none of {size} bytes", _artifacts(call)))
    emit.judge(
        "", findings, input={"tool": BIG_TEXT}, expected={"size_bytes": size}, got=call.shown()
    )


def _handles(call: CallResult) -> list[str]:
    return [str(a["handle"]) for a in _artifacts(call) if isinstance(a.get("handle"), str)]


async def _handle(live: Live, tool: str, match: Callable[[dict[str, Any]], bool]) -> str:
    async def find() -> str:
        call = await live.fixture_call(tool)
        for art in _artifacts(call):
            if match(art) and isinstance(art.get("handle"), str):
                return str(art["handle"])
        raise NoFact(f"tool_execute({tool}) returned no suitable artifact", call)

    return await live.once(f"handle:{tool}", find)


async def _text_handle(live: Live) -> str:
    size = len(big_text().encode("utf-8"))
    return await _handle(live, BIG_TEXT, lambda a: a.get("size_bytes") == size)


async def _json_handle(live: Live) -> str:
    return await _handle(live, STRUCTURED, lambda a: a.get("label") == STRUCTURED_CONTENT_LABEL)


async def _view(live: Live, emit: Emit, case: str, handle: str, selector: str, want: Any) -> None:
    call = await live.call("tool_view", {"handle": handle, "selector": selector})
    findings = judge_success(call, "tool_view")[1]
    got = _envelope(call).get("content")
    if not findings and not want(got):
        findings = [Finding(_VIEW, f"{selector} returned other content than the artifact holds")]
    emit.judge(case, findings, input={"selector": selector}, got=call.shown())


_VIEW: Final = Rule("tool_view does not give the artifact's content", ("VIEW-DRILLDOWN",))


async def _seed_selectors(live: Live) -> tuple[Any, ...]:
    """The selectors tried on a handle at --level seed, where their syntax is not a seed
    statement (seed 000 §4.2 defers tool_view to #34): values of the form the IUT's own
    declared inputSchema gives tool_view's selector (a string, an object, or none at all)."""
    return tuple(readings.selectors(await live.declared_schema("tool_view")))


async def _view_handles(live: Live, emit: Emit) -> None:
    """Every handle tool_execute returned works with tool_view: opaque handles, judged by
    use. At --level spec the selector is "all"; at --level seed any the IUT declares."""
    seed_selectors = await _seed_selectors(live)
    selectors = ("all",) if live.level == "spec" else seed_selectors
    for tool in (BIG_TEXT, STRUCTURED, IMAGE):
        if tool not in await live.fixture_ids():
            continue
        call = await live.fixture_call(tool)
        for handle in _handles(call):
            tried = await _viewed(live, handle, selectors)
            problem = None
            basis = ""
            amended: tuple[str, ...] = ()
            if tried is not None:
                problem = [Finding(_VIEW, "no selector gave a result", tried)]
                if live.level == "spec" and await _viewed(live, handle, seed_selectors) is None:
                    amended = _SELECTOR_AMENDMENT
                    basis = "" if amended else "the selector 'all' is gatespec's"
            emit.judge(
                f"{tool}/{handle}",
                problem,
                input={"handle": handle, "selectors": [repr(s) for s in selectors]},
                got=tried,
                spec_only=basis,
                amended=amended,
            )


async def _viewed(live: Live, handle: str, selectors: tuple[Any, ...]) -> Any:
    """None when tool_view answers `handle` with one of `selectors`, else the last refusal."""
    refusal = None
    for selector in selectors:
        view = await live.call("tool_view", readings.view_arguments(handle, selector))
        if not view.is_error:
            return None
        refusal = {repr(selector): view.shown()}
    return refusal


async def _view_text(live: Live, emit: Emit) -> None:
    handle = await _text_handle(live)
    text = big_text()
    lines = text.split("\n")[:-1]
    data = text.encode("utf-8")
    last = len(lines)

    def lines_of(start: int, end: int) -> Callable[[Any], bool]:
        return lambda got: (
            isinstance(got, str) and got.rstrip("\n").split("\n") == lines[start - 1 : end]
        )

    cases: list[tuple[str, str, Callable[[Any], bool]]] = [
        ("all", "all", lambda got: got == text),
        ("lines/10-12", "lines:10-12", lines_of(10, 12)),
        ("lines/1", "lines:1", lines_of(1, 1)),
        ("lines/open-end", f"lines:{last - 1}-", lines_of(last - 1, last)),
        ("lines/end-clamped", f"lines:{last}-{last + 50}", lines_of(last, last)),
        ("bytes/0-99", "bytes:0-99", lambda got: got == data[:100].decode()),
        ("bytes/7", "bytes:7", lambda got: got == data[7:8].decode()),
        ("bytes/open-end", f"bytes:{len(data) - 30}-", lambda got: got == data[-30:].decode()),
    ]
    for case, selector, want in cases:
        await _view(live, emit, case, handle, selector, want)


_POINTERS: Final[tuple[tuple[str, str, Any], ...]] = (
    ("whole", "", STRUCTURED_CONTENT),
    ("answer", "/answer", 42),
    ("escaped-slash", "/nested/a~1b", 1),
    ("escaped-tilde", "/nested/m~0n/2", 3),
    ("array-index", "/items/1/label", "second"),
)


async def _view_json(live: Live, emit: Emit) -> None:
    handle = await _json_handle(live)
    for case, pointer, value in _POINTERS:

        def want(got: Any, value: Any = value) -> bool:
            try:
                return same_json(json.loads(got), value)
            except (TypeError, ValueError):
                return False

        await _view(live, emit, case, handle, f"json:{pointer}", want)


async def _view_missing(live: Live, emit: Emit) -> None:
    cases = [("unknown-handle", _UNKNOWN_HANDLE, "all")]
    text = await _text_handle(live)
    cases += [
        ("past-last-line", text, "lines:100000-"),
        ("past-last-byte", text, "bytes:99999999-"),
    ]
    cases.append(("no-such-pointer", await _json_handle(live), "json:/no/such/key"))
    for case, handle, selector in cases:
        call = await live.call("tool_view", {"handle": handle, "selector": selector})
        emit.judge(
            case,
            expect_error(call, {_VIEW_FAILED}),
            input={"handle": handle, "selector": selector},
            expected={"error": _VIEW_FAILED},
            got=call.shown(),
        )


@functools.cache  # drawn once per run, though run and named separately
def _draw_selectors(seed: int, n: int) -> list[Drawn]:
    vectors = vector_errors("parse_view_selector", _ARGS_INVALID)
    return vectors + draw_cases(
        "view/selector-invalid", grammar_values("view_selector", False), seed, n
    )


async def _selector_invalid(live: Live, emit: Emit) -> None:
    handle = await _text_handle(live)
    codes = allowed_codes("tool_view", "selector")
    for case in _draw_selectors(live.options.seed, live.options.max_examples):
        selector = case.input["value"]
        call = await live.call("tool_view", {"handle": handle, "selector": selector})
        emit.judge(
            case.case,
            expect_error(call, codes),
            input={"selector": selector},
            expected={"error": sorted(codes)},
            got=call.shown(),
            duration=call.duration,
        )


_STRUCTURED_ARTIFACT: Final = Rule(
    "no JSON artifact holds the structuredContent", ("ENVELOPE-STRUCTURED-CONTENT-ARTIFACT",)
)
_FACTS: Final = Rule(
    "a top-level key has no 'key: value' fact", ("ENVELOPE-STRUCTURED-CONTENT-FACTS",)
)
_LABEL: Final = Rule(
    f"the structuredContent artifact is not labelled {STRUCTURED_CONTENT_LABEL!r}",
    ("ENVELOPE-STRUCTURED-CONTENT-ARTIFACT",),
    SPEC,
    spec_only="budgets.yaml's structured_content label (seed 002 shows it in a handle)",
)


def _json_artifact(art: dict[str, Any]) -> bool:
    """Seed 002 serialises structuredContent "as a JSON artifact" (its example handle ends in
    structured_content)."""
    named = STRUCTURED_CONTENT_LABEL in f"{art.get('label', '')} {art.get('handle', '')}"
    return named or str(art.get("media_type", "")).startswith("application/json")


async def _structured(live: Live, emit: Emit) -> None:
    call = await live.fixture_call(STRUCTURED)
    through = _through(live, call, STRUCTURED)
    envelope, findings = judge_success(call, "tool_execute") if through is None else ({}, through)
    arts = _artifacts(call)
    if envelope:
        if not any(_json_artifact(a) for a in arts):
            findings.append(Finding(_STRUCTURED_ARTIFACT, "", arts))
        elif STRUCTURED_CONTENT_LABEL not in [a.get("label") for a in arts]:
            findings.append(Finding(_LABEL, "", arts))
        facts = [str(f) for f in envelope.get("facts") or []]
        missing = [k for k in STRUCTURED_CONTENT if not any(f.startswith(f"{k}: ") for f in facts)]
        if missing:
            findings.append(Finding(_FACTS, f"{missing}", facts))
    emit.judge(
        "",
        findings,
        input={"tool": STRUCTURED},
        expected=list(STRUCTURED_CONTENT),
        got=call.shown(),
    )


_IMAGE: Final = Rule("no image/png artifact holds the image", ("ENVELOPE-BINARY-ARTIFACTS",))
_IMAGE_VIEW: Final = Rule(
    "the image does not come back whole as base64 through tool_view",
    ("ENVELOPE-BINARY-ARTIFACTS", "VIEW-DRILLDOWN"),
    SPEC,
    amended_by=recorded("AM-VIEW-SELECTOR"),
    spec_only="" if recorded("AM-VIEW-SELECTOR") else "tool_view's selector 'all' is gatespec's",
)
_IMAGE_SIZE: Final = Rule(
    "the image artifact's size_bytes is wrong",
    ("ENVELOPE-BINARY-ARTIFACTS",),
    SPEC,
    spec_only="models.yaml ArtifactRef.size_bytes",
)


async def _image(live: Live, emit: Emit) -> None:
    call = await live.fixture_call(IMAGE)
    through = _through(live, call, IMAGE)
    envelope, findings = judge_success(call, "tool_execute") if through is None else ({}, through)
    found = [a for a in _artifacts(call) if a.get("media_type") == "image/png"]
    if envelope and not found:
        findings.append(Finding(_IMAGE, "", _artifacts(call)))
    elif envelope:
        if found[0].get("size_bytes") != len(IMAGE_BYTES):
            findings.append(Finding(_IMAGE_SIZE, f"{found[0].get('size_bytes')}", found[0]))
        if "tool_view" in live.meta_tools and live.level == "spec":
            view = await live.call(
                "tool_view", {"handle": found[0].get("handle"), "selector": "all"}
            )
            seen = _envelope(view)
            try:
                whole = base64.b64decode(str(seen.get("content"))) == IMAGE_BYTES
            except ValueError:
                whole = False
            if seen.get("encoding") != "base64" or not whole:
                findings.append(Finding(_IMAGE_VIEW, "", view.shown()))
    emit.judge("", findings, input={"tool": IMAGE}, got=call.shown())


# ------------------------------------------------------------------ timeouts


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
        call, new = await _no_upstream(live, pending)
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
    missing = parsers.make_tool_id(await live.namespace(), _MISSING_TOOL, {})
    call = await live.call("tool_hydrate", {"tool_id": missing})
    codes = _UNKNOWN_CODES[live.level]
    findings = expect_error(call, codes)
    basis = _unknown_basis(call)
    emit.judge("", findings, input={"tool_id": missing}, got=call.shown(), spec_only=basis)


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
    return _through(live, call, FAILS) == []


def _shape(call: CallResult) -> list[Finding]:
    payload, _ = payload_of(call)
    code = payload.get("error") if payload else None
    return expect_error(call, {code} if isinstance(code, str) else set())


# ------------------------------------------------------------------ registry

_BOTH: Final = ("gateway", "transparent")
_GATEWAY: Final = ("gateway",)
_TRANSPARENT: Final = ("transparent",)
_VALIDATE: Final = (
    "VALIDATE-BEFORE-UPSTREAM",
    "VALIDATE-ARGS-INVALID-ERROR",
    "VALIDATE-NO-UPSTREAM-ON-INVALID",
    "ERROR-META-TOOL-RESULT",
)
_SHAPE: Final = ("ERROR-META-TOOL-RESULT", "ERROR-NEVER-RAISE")
_SELECTORS: Final = "tool_view's selectors are gatespec's (seed 000 §4.2 defers tool_view to #34)"
_SELECTOR_AMENDMENT: Final = recorded("AM-VIEW-SELECTOR")
_WIRE: Final = "AM-WIRE-NAME: wire names exist by the amendment"


def _family(key: str, run: Any, profiles: tuple[str, ...] = _BOTH, **kw: Any) -> Family:
    check_id = "server." + key.replace("/", ".").replace("-", "_")
    return Family(key, check_id, run, profiles=profiles, **kw)


FAMILIES: Final[list[Family]] = [
    _family(
        "stripped/name",
        _stripped_names,
        _TRANSPARENT,
        via_requirements=("EXPOSE-TRANSPARENT-NAME-IS-TOOLID",),
    ),
    _family(
        "stripped/schema",
        _stripped_schemas,
        _TRANSPARENT,
        via_requirements=("EXPOSE-TRANSPARENT-SENTINEL-SCHEMA",),
    ),
    _family(
        "stripped/fields",
        _stripped_fields,
        _TRANSPARENT,
        via_requirements=(
            "EXPOSE-TRANSPARENT-SENTINEL-SCHEMA",
            "EXPOSE-SCHEMAS-ONLY-VIA-HYDRATION",
        ),
    ),
    _family(
        "stripped/description",
        _stripped_descriptions,
        _TRANSPARENT,
        via_requirements=(
            "EXPOSE-TRANSPARENT-DESCRIPTION-TRUNCATED",
            "TRUNC-SENTENCE-PREFIX",
            "TRUNC-HARD-CUT-ELLIPSIS",
        ),
    ),
    _family(
        "stripped/not-callable",
        _not_callable,
        _TRANSPARENT,
        via_requirements=("EXPOSE-STRIPPED-NOT-CALLABLE",),
    ),
    _family(
        "hydrate/round-trip",
        _hydrate,
        _TRANSPARENT,
        via_requirements=(
            "HYDRATE-SHARED-OPERATION",
            "REGISTRY-STORE-FULL-SCHEMA",
            "EXPOSE-SCHEMAS-ONLY-VIA-HYDRATION",
            "HYDRATE-OUTPUT-SCHEMA-KEPT",
            "TOOLID-SOLE-KEY",
        ),
    ),
    _family(
        "hydrate/wire-name",
        _hydrate_by_wire,
        _TRANSPARENT,
        amended_by=("AM-WIRE-NAME",),
        seed=_WIRE,
        via_requirements=("EXPOSE-TRANSPARENT-NAME-IS-TOOLID", "TOOLID-SOLE-KEY"),
    ),
    _family(
        "hydrate/annotations",
        _hydrate_annotations,
        _TRANSPARENT,
        seed="the seeds do not say what tool_hydrate returns besides the schema",
        via_requirements=("ANNOT-READ-ONLY", "ANNOT-DESTRUCTIVE-TAG", "ANNOT-COST-HINT"),
    ),
    _family("hydrate/unknown", _hydrate_unknown, _TRANSPARENT, via_requirements=_SHAPE),
    _family(
        "hydrate/meta-args-invalid",
        _meta_invalid("tool_hydrate"),
        _TRANSPARENT,
        via_requirements=_SHAPE,
        draw=_draw_meta("tool_hydrate"),
    ),
    _family(
        "execute/round-trip",
        _round_trip,
        via_requirements=(
            "ENVELOPE-EXECUTE-PIPELINE",
            "ENVELOPE-STATUS",
            "ENVELOPE-TEXT-SUMMARY",
            "TOOLID-SOLE-KEY",
        ),
    ),
    _family(
        "execute/wire-name",
        _wire_name,
        amended_by=("AM-WIRE-NAME",),
        seed=_WIRE,
        via_requirements=("EXPOSE-TRANSPARENT-NAME-IS-TOOLID", "TOOLID-SOLE-KEY"),
    ),
    _family(
        "execute/args-valid",
        _args_valid,
        via_requirements=("VALIDATE-BEFORE-UPSTREAM", "ENVELOPE-EXECUTE-PIPELINE"),
        draw=_draw_valid,
    ),
    _family("execute/args-invalid", _args_invalid, via_requirements=_VALIDATE, draw=_draw_invalid),
    _family(
        "execute/meta-args-invalid",
        _meta_invalid("tool_execute"),
        via_requirements=("ERROR-META-TOOL-RESULT", "VALIDATE-NO-UPSTREAM-ON-INVALID"),
        draw=_draw_meta("tool_execute"),
    ),
    _family(
        "execute/unknown-tool", _unknown_tool, via_requirements=("ROUTE-UNKNOWN-TOOL", *_SHAPE)
    ),
    _family(
        "execute/upstream-error",
        _upstream_error,
        via_requirements=("ROUTE-PROPAGATE-ERRORS", *_SHAPE),
    ),
    _family(
        "execute/large-text",
        _large_text,
        via_requirements=("ENVELOPE-TEXT-SUMMARY", "ENVELOPE-EXECUTE-PIPELINE"),
    ),
    _family(
        "execute/structured",
        _structured,
        via_requirements=(
            "ENVELOPE-STRUCTURED-CONTENT-ARTIFACT",
            "ENVELOPE-STRUCTURED-CONTENT-FACTS",
        ),
    ),
    _family("execute/image", _image, via_requirements=("ENVELOPE-BINARY-ARTIFACTS",)),
    _family(
        "view/handles",
        _view_handles,
        _GATEWAY,
        via_requirements=("VIEW-DRILLDOWN",),
        summary="every artifact handle tool_execute returned works with tool_view",
    ),
    _family(
        "view/text",
        _view_text,
        _GATEWAY,
        via_requirements=("VIEW-DRILLDOWN",),
        seed=_SELECTORS,
        amended_by=_SELECTOR_AMENDMENT,
    ),
    _family(
        "view/json-pointer",
        _view_json,
        _GATEWAY,
        seed=_SELECTORS,
        amended_by=_SELECTOR_AMENDMENT,
        via_requirements=("VIEW-DRILLDOWN", "ENVELOPE-STRUCTURED-CONTENT-ARTIFACT"),
    ),
    _family(
        "view/misses",
        _view_missing,
        _GATEWAY,
        via_requirements=("VIEW-DRILLDOWN", *_SHAPE),
        seed=_SELECTORS,
        amended_by=_SELECTOR_AMENDMENT,
    ),
    _family(
        "view/selector-invalid",
        _selector_invalid,
        _GATEWAY,
        seed=_SELECTORS,
        amended_by=_SELECTOR_AMENDMENT,
        via_checks=("grammar.view_selector.invalid",),
        via_requirements=_SHAPE,
        draw=_draw_selectors,
    ),
    _family(
        "view/meta-args-invalid",
        _meta_invalid("tool_view"),
        _GATEWAY,
        via_requirements=_SHAPE,
        draw=_draw_meta("tool_view"),
    ),
    # The timeout's error result is judged with every other one by errors/payload.
    _family("execute/timeout", _timeout, via_requirements=("ROUTE-TIMEOUT",)),
    _family("execute/after-timeout", _after_timeout, via_requirements=("ROUTE-TIMEOUT",)),
    _family(
        "errors/payload",
        _payloads,
        via_requirements=("ERROR-BROWSE-SHAPE", "ERROR-BROWSE-CARRIER", *_SHAPE),
    ),
    _family(
        "list-changed/propagation",
        _list_changed,
        _TRANSPARENT,
        via_requirements=("TRANSPORT-LIST-CHANGED-NOTIFY",),
    ),
]
