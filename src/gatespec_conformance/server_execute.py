"""Layer-2 families of invocation: tool_execute round trips and argument validation (proved
against the fixture's call log), the result firewall and tool_view on stored artifacts,
hydration, the transparent profile's stripped entries, error shapes, timeouts and
list_changed propagation."""

from __future__ import annotations

import base64
import functools
import inspect
import json
from collections.abc import Awaitable, Callable
from typing import Any, Final

from jsonschema import Draft202012Validator

from gatespec_conformance.fixture_upstream import (
    ADD_TOOL,
    BIG_TEXT,
    ECHO,
    FAILS,
    FAILURE_TEXT,
    FIXTURE_TOOLS,
    HANG,
    IMAGE,
    IMAGE_BYTES,
    STRUCTURED,
    STRUCTURED_CONTENT,
    big_text,
    by_name,
)
from gatespec_conformance.functions import same_json
from gatespec_conformance.live_client import CallResult
from gatespec_conformance.server_browse import annotation_problem, truncation_problem
from gatespec_conformance.server_checks import (
    Drawn,
    Emit,
    Family,
    allowed_codes,
    expect_error,
    expect_success,
)
from gatespec_conformance.server_draws import (
    draw_cases,
    grammar_values,
    invalid_instance,
    meta_args,
    valid_instance,
    vector_errors,
)
from gatespec_conformance.server_facts import Live, NoFact
from gatespec_conformance.tokens import count_tokens
from gatespec_surface import parsers
from gatespec_surface.budgets import CARD_HARD_CAP_TOKENS, STRUCTURED_CONTENT_LABEL
from gatespec_surface.descriptors import output_schema
from gatespec_surface.errors import ErrorCode, GatewayError
from gatespec_surface.grammars import is_wire_name
from gatespec_surface.schemas import STRIPPED_INPUT_SCHEMA

__all__ = ["FAMILIES"]

_ARGS_INVALID: Final = ErrorCode.ARGS_INVALID.value
_VIEW_FAILED: Final = ErrorCode.VIEW_FAILED.value
_NOT_FOUND: Final = ErrorCode.TOOL_NOT_FOUND.value
_OUTPUT: Final = {
    name: Draft202012Validator(output_schema(name) or {})
    for name in ("tool_execute", "tool_view", "tool_hydrate")
}
_ECHO_SCHEMA: Final = by_name(ECHO).input_schema
_UNKNOWN_HANDLE: Final = "art_" + "0" * 16
_MISSING_TOOL: Final = "zz_no_such_tool"


def _shape_problem(tool: str, call: CallResult) -> str | None:
    problem = expect_success(call)
    if problem is None:
        errors = list(_OUTPUT[tool].iter_errors(call.structured))
        if errors:
            where = "/".join(str(p) for p in errors[0].path) or "(root)"
            problem = f"structuredContent breaks {tool}'s output model at {where}: {errors[0].message[:200]}"
    return problem


def _envelope(call: CallResult) -> dict[str, Any]:
    return call.structured if isinstance(call.structured, dict) else {}


def _upstream_problem(new: list[dict[str, Any]], name: str, args: Any) -> str | None:
    if len(new) != 1:
        return f"upstream received {len(new)} calls, not exactly one"
    if new[0].get("name") != name:
        return f"upstream was called as {new[0].get('name')!r}, not {name!r}"
    if not same_json(new[0].get("arguments"), args):
        return "the arguments changed on the way upstream"
    return None


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
    problem = _shape_problem("tool_execute", call)
    envelope = _envelope(call)
    if problem is None and envelope.get("status") != "ok":
        problem = f"status is {envelope.get('status')!r}, not 'ok'"
    if problem is None and "hello from the kit" not in str(envelope.get("summary")):
        problem = "the summary does not carry the upstream text"
    if problem is None and log is not None:
        problem = _upstream_problem(log.since(mark), ECHO, args)
    emit.judge("", problem, input={"tool": ECHO, "args": args}, got=call.shown())


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
        problem = expect_success(call) or _upstream_problem(new, ECHO, args)
        emit.judge(case.case, problem, input={"tool": ECHO, "args": args}, got=call.shown())


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
        call, new = await _no_upstream(live, live.fixture_call(tool, args))
        problem = expect_error(call, {_ARGS_INVALID})
        if new:
            problem = f"upstream received {len(new)} call(s) for invalid args" + (
                f"; {problem}" if problem else ""
            )
        emit.judge(
            case.case,
            problem,
            input={"tool": tool, "args": args},
            expected={"error": _ARGS_INVALID, "upstream_calls": 0},
            got={**call.shown(), "upstream_calls": len(new)},
            duration=call.duration,
        )


def _meta_invalid(tool: str) -> Callable[[Live, Emit], Awaitable[None]]:
    """A family runner: drawn invalid arguments of a meta-tool never reach upstream."""

    async def run(live: Live, emit: Emit) -> None:
        for case in _draw_meta(tool)(live.options.seed, live.options.max_examples):
            prop = next((p for p in case.input if p != "unexpected"), None)
            codes = allowed_codes(tool, prop) if case.label == "invalid_value" else {_ARGS_INVALID}
            log = live.log
            mark = log.mark() if log else 0
            call = await live.call(tool, case.input)
            problem = expect_error(call, codes)
            new = log.since(mark) if log else []
            if new:
                problem = f"upstream received {len(new)} call(s)" + (
                    f"; {problem}" if problem else ""
                )
            emit.judge(
                case.case,
                problem,
                input=case.input,
                expected={"error": sorted(codes)},
                got=call.shown(),
                duration=call.duration,
            )

    return run


@functools.cache
def _draw_meta(tool: str) -> Callable[[int, int], list[Drawn]]:
    @functools.cache
    def draw(seed: int, n: int) -> list[Drawn]:
        return draw_cases(f"{tool}/meta-args-invalid", meta_args(tool), seed, n)

    return draw


async def _unknown_tool(live: Live, emit: Emit) -> None:
    namespace = await live.namespace()
    missing = parsers.make_tool_id(namespace, _MISSING_TOOL, {})
    for case, tool_id in (("tool-id", missing), ("wire-name", parsers.encode_wire_name(missing))):
        call = await live.call("tool_execute", {"tool_id": tool_id, "args": {}})
        emit.judge(
            case, expect_error(call, {_NOT_FOUND}), input={"tool_id": tool_id}, got=call.shown()
        )


async def _upstream_error(live: Live, emit: Emit) -> None:
    call = await live.fixture_call(FAILS)
    envelope = _envelope(call)
    problem = None
    if call.result is None:
        problem = f"no result: {call.error}"
    elif call.result.is_error:
        problem = expect_error(call, {ErrorCode.UPSTREAM_ERROR.value})
    elif envelope.get("status") != "error":
        problem = f"an upstream isError result gave status {envelope.get('status')!r}"
    if problem is None and FAILURE_TEXT not in call.text + json.dumps(call.structured):
        problem = "the upstream's error text did not reach the caller"
    emit.judge("", problem, input={"tool": FAILS}, expected=FAILURE_TEXT, got=call.shown())


# ------------------------------------------------------------------ results and artifacts


def _artifacts(call: CallResult) -> list[dict[str, Any]]:
    found = _envelope(call).get("artifacts")
    return [a for a in found if isinstance(a, dict)] if isinstance(found, list) else []


async def _large_text(live: Live, emit: Emit) -> None:
    call = await live.fixture_call(BIG_TEXT)
    text = big_text()
    problem = _shape_problem("tool_execute", call)
    summary = str(_envelope(call).get("summary", ""))
    size = len(text.encode("utf-8"))
    if problem is None and not any(a.get("size_bytes") == size for a in _artifacts(call)):
        problem = f"no artifact of {size} bytes holds the full text"
    if problem is None and not text.startswith(summary.rstrip("…").rstrip()):
        problem = "the summary is not the start of the text"
    emit.judge(
        "", problem, input={"tool": BIG_TEXT}, expected={"size_bytes": size}, got=call.shown()
    )


async def _handle(live: Live, tool: str, match: Callable[[dict[str, Any]], bool]) -> str:
    async def find() -> str:
        call = await live.fixture_call(tool)
        for art in _artifacts(call):
            if match(art) and isinstance(art.get("handle"), str):
                return str(art["handle"])
        raise NoFact(f"tool_execute({tool}) returned no suitable artifact: {call.shown()}")

    return await live.once(f"handle:{tool}", find)


async def _text_handle(live: Live) -> str:
    size = len(big_text().encode("utf-8"))
    return await _handle(live, BIG_TEXT, lambda a: a.get("size_bytes") == size)


async def _json_handle(live: Live) -> str:
    return await _handle(live, STRUCTURED, lambda a: a.get("label") == STRUCTURED_CONTENT_LABEL)


async def _view(live: Live, emit: Emit, case: str, handle: str, selector: str, want: Any) -> None:
    call = await live.call("tool_view", {"handle": handle, "selector": selector})
    problem = _shape_problem("tool_view", call)
    got = _envelope(call).get("content")
    if problem is None and not want(got):
        problem = f"{selector} returned other content than the artifact holds there"
    emit.judge(case, problem, input={"selector": selector}, got=call.shown())


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


async def _structured(live: Live, emit: Emit) -> None:
    call = await live.fixture_call(STRUCTURED)
    problem = _shape_problem("tool_execute", call)
    labels = [a.get("label") for a in _artifacts(call)]
    facts = [str(f) for f in _envelope(call).get("facts") or []]
    if problem is None and STRUCTURED_CONTENT_LABEL not in labels:
        problem = f"no artifact labelled {STRUCTURED_CONTENT_LABEL!r}"
    missing = [k for k in STRUCTURED_CONTENT if not any(f.startswith(f"{k}: ") for f in facts)]
    if problem is None and missing:
        problem = f"no 'key: value' fact for {missing}"
    emit.judge(
        "", problem, input={"tool": STRUCTURED}, expected=list(STRUCTURED_CONTENT), got=call.shown()
    )


async def _image(live: Live, emit: Emit) -> None:
    call = await live.fixture_call(IMAGE)
    problem = _shape_problem("tool_execute", call)
    found = [a for a in _artifacts(call) if a.get("media_type") == "image/png"]
    if problem is None and not found:
        problem = "no image/png artifact"
    elif problem is None and found[0].get("size_bytes") != len(IMAGE_BYTES):
        problem = f"the artifact has {found[0].get('size_bytes')} bytes, not {len(IMAGE_BYTES)}"
    elif problem is None and "tool_view" in live.meta_tools:
        view = await live.call("tool_view", {"handle": found[0]["handle"], "selector": "all"})
        problem = _shape_problem("tool_view", view)
        content = _envelope(view).get("content")
        if problem is None and _envelope(view).get("encoding") != "base64":
            problem = "a binary artifact is not viewed as base64"
        elif problem is None and base64.b64decode(str(content)) != IMAGE_BYTES:
            problem = "the viewed bytes differ from the image"
    emit.judge("", problem, input={"tool": IMAGE}, got=call.shown())


# ------------------------------------------------------------------ timeouts


async def _timeout(live: Live, emit: Emit) -> None:
    bound = live.options.hang_timeout
    call = await live.session.call(
        "tool_execute", {"tool_id": (await live.fixture_ids())[HANG]}, bound
    )
    codes = {ErrorCode.TIMEOUT.value, ErrorCode.UPSTREAM_ERROR.value}
    problem = (
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


async def _stripped(live: Live, emit: Emit, judge: Callable[[Any], str | None]) -> None:
    for tool in await live.stripped():
        emit.judge(tool.name, judge(tool), got=tool.model_dump(by_alias=True, exclude_none=True))


async def _stripped_names(live: Live, emit: Emit) -> None:
    def judge(tool: Any) -> str | None:
        if not is_wire_name(tool.name):
            return "not a wire name ([A-Za-z0-9_-]{1,64})"
        if parsers.is_shortened_wire_name(tool.name):
            return None
        try:
            parsers.decode_wire_name(tool.name)
        except GatewayError as exc:
            return f"does not decode to a tool_id: {exc.message}"
        return None

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


async def _stripped_descriptions(live: Live, emit: Emit) -> None:
    ids = await live.fixture_ids()
    full = {parsers.encode_wire_name(i): by_name(n).description for n, i in ids.items()}

    def judge(tool: Any) -> str | None:
        text = tool.description or ""
        tokens = count_tokens(text)
        if tokens > CARD_HARD_CAP_TOKENS:
            return f"{tokens} tokens; a card's hard cap is {CARD_HARD_CAP_TOKENS}"
        if tool.name in full:
            return truncation_problem(full[tool.name], text)
        return None

    await _stripped(live, emit, judge)


async def _not_callable(live: Live, emit: Emit) -> None:
    for name, args in ((ECHO, {"text": "called directly"}), ("read_file", {"path": "a.txt"})):
        wire = await live.wire_name(name)
        pending = live.session.call(wire, args, live.options.timeout)
        call, new = await _no_upstream(live, pending)
        problem = None
        if call.result is not None and not call.result.is_error:
            problem = "a stripped entry answered a direct call"
        if new:
            problem = f"a direct call of a stripped entry reached upstream ({len(new)} calls)"
        emit.judge(
            name,
            problem,
            input={"name": wire, "arguments": args},
            expected={"upstream_calls": 0},
            got={**call.shown(), "upstream_calls": len(new)},
        )


async def _hydrate(live: Live, emit: Emit) -> None:
    ids = await live.fixture_ids()
    for tool in FIXTURE_TOOLS:
        if tool.expect != "admit":
            continue
        tool_id = ids[tool.name]
        call = await live.call("tool_hydrate", {"tool_id": tool_id})
        problem = _shape_problem("tool_hydrate", call)
        got = _envelope(call)
        want = {
            "tool_id": tool_id,
            "name": tool.name,
            "description": tool.description or "",
            "input_schema": tool.input_schema,
            "output_schema": tool.output_schema,
        }
        if problem is None:
            differs = [k for k, v in want.items() if not same_json(got.get(k), v)]
            if differs:
                problem = f"differs from the fixture's tool in {differs}"
        emit.judge(
            tool.name, problem, input={"tool_id": tool_id}, expected=want, got=got or call.shown()
        )


async def _hydrate_annotations(live: Live, emit: Emit) -> None:
    ids = await live.fixture_ids()
    for tool in FIXTURE_TOOLS:
        if tool.expect != "admit" or (tool.annotations is None and tool.name != ECHO):
            continue
        call = await live.call("tool_hydrate", {"tool_id": ids[tool.name]})
        problem = expect_success(call) or annotation_problem(tool.annotations, _envelope(call))
        emit.judge(tool.name, problem, input={"annotations": tool.annotations}, got=call.shown())


async def _hydrate_by_wire(live: Live, emit: Emit) -> None:
    tool_id, wire = (await live.fixture_ids())[ECHO], await live.wire_name(ECHO)
    call = await live.call("tool_hydrate", {"tool_id": wire})
    problem = _shape_problem("tool_hydrate", call)
    if problem is None and _envelope(call).get("tool_id") != tool_id:
        problem = "hydrating by wire name names another tool"
    emit.judge(
        "",
        problem,
        input={"tool_id": wire},
        expected=tool_id,
        got=call.shown(),
    )


async def _hydrate_unknown(live: Live, emit: Emit) -> None:
    missing = parsers.make_tool_id(await live.namespace(), _MISSING_TOOL, {})
    call = await live.call("tool_hydrate", {"tool_id": missing})
    emit.judge("", expect_error(call, {_NOT_FOUND}), input={"tool_id": missing}, got=call.shown())


async def _list_changed(live: Live, emit: Emit) -> None:
    session = live.session
    before = {t.name for t in await session.list_tools(live.options.timeout)}
    call, missing = await session.expect_list_changed(
        lambda: live.fixture_call(ADD_TOOL, {}), live.options.list_changed_timeout
    )
    problem = expect_success(call) or missing
    new: list[str] = []
    if problem is None:
        after = {t.name for t in await session.list_tools(live.options.timeout)}
        for name in sorted(after - before):
            try:
                if parsers.parse_tool_id(parsers.decode_wire_name(name)).name.startswith("added_"):
                    new.append(name)
            except GatewayError:
                continue
        if not new:
            problem = "tools/list does not show the added tool"
    emit.judge("", problem, input={"tool": ADD_TOOL}, got={"call": call.shown(), "new": new})


# ------------------------------------------------------------------ error shapes


async def _payloads(live: Live, emit: Emit) -> None:
    groups: dict[str, list[CallResult]] = {}
    for tool, call in live.errors:
        if tool not in live.meta_tools or (call.result is None and "no answer" in str(call.error)):
            continue  # direct calls of stripped entries and hangs are judged elsewhere
        payload, _ = call.payload()
        code = (
            payload["error"]
            if payload
            else ("protocol-error" if call.result is None else "malformed")
        )
        groups.setdefault(f"{tool}/{code}", []).append(call)
    for key, calls in sorted(groups.items()):
        bad = next(((c, p) for c in calls if (p := c.payload()[1]) is not None), None)
        if bad is None:
            emit.judge(key, None)
        else:
            call, problem = bad
            emit.judge(
                key,
                f"{problem} ({len(calls)} such results)",
                input={call.name: call.arguments},
                got=call.shown(),
            )


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
        via_requirements=("EXPOSE-TRANSPARENT-NAME-IS-TOOLID", "TOOLID-SOLE-KEY"),
    ),
    _family(
        "hydrate/annotations",
        _hydrate_annotations,
        _TRANSPARENT,
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
    _family("view/text", _view_text, _GATEWAY, via_requirements=("VIEW-DRILLDOWN",)),
    _family(
        "view/json-pointer",
        _view_json,
        _GATEWAY,
        via_requirements=("VIEW-DRILLDOWN", "ENVELOPE-STRUCTURED-CONTENT-ARTIFACT"),
    ),
    _family("view/misses", _view_missing, _GATEWAY, via_requirements=("VIEW-DRILLDOWN", *_SHAPE)),
    _family(
        "view/selector-invalid",
        _selector_invalid,
        _GATEWAY,
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
    _family("execute/timeout", _timeout, via_requirements=("ROUTE-TIMEOUT", *_SHAPE)),
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
        via_requirements=("TRANSPORT-LIST-CHANGED-NOTIFY", "EXPOSE-TRANSPARENT-FULL-CATALOG"),
    ),
]
