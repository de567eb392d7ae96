"""Layer-2 families of the result firewall: large text, structured content and images
become artifacts (ResultEnvelope), and tool_view reads them back by handle and selector."""

from __future__ import annotations

import base64
import functools
import json
from collections.abc import Callable
from typing import Any, Final

from gatespec_conformance.fixtures.catalog import (
    BIG_TEXT,
    IMAGE,
    IMAGE_BYTES,
    STRUCTURED,
    STRUCTURED_CONTENT,
    big_text,
)
from gatespec_conformance.functions.run import same_json
from gatespec_conformance.live import readings
from gatespec_conformance.live.checks import (
    Drawn,
    Emit,
    Family,
    allowed_codes,
    expect_error,
)
from gatespec_conformance.live.client import CallResult
from gatespec_conformance.live.draws import (
    draw_cases,
    grammar_values,
    vector_errors,
)
from gatespec_conformance.live.facts import Live, NoFact
from gatespec_conformance.live.invocation import (
    ARGS_INVALID,
    ARTIFACT,
    GATEWAY,
    SEED_SUMMARY_MAX,
    SHAPE,
    SUMMARY,
    UNKNOWN_HANDLE,
    VIEW_FAILED,
    draw_meta,
    envelope_of,
    family,
    meta_invalid,
    seed_passthrough,
)
from gatespec_conformance.live.payloads import (
    judge_success,
)
from gatespec_conformance.rules import SPEC, Finding, Rule, recorded
from gatespec_surface.budgets import (
    STRUCTURED_CONTENT_LABEL,
)

__all__ = ["FAMILIES"]

_SELECTORS: Final = "tool_view's selectors are gatespec's (seed 000 §4.2 defers tool_view to #34)"
_SELECTOR_AMENDMENT: Final = recorded("AM-VIEW-SELECTOR")


def _artifacts(call: CallResult) -> list[dict[str, Any]]:
    found = envelope_of(call).get("artifacts")
    return [a for a in found if isinstance(a, dict)] if isinstance(found, list) else []


async def _large_text(live: Live, emit: Emit) -> None:
    """Seed 002: the summary is the text cut to at most 500 characters; the spec adds an
    artifact that holds the whole text."""
    call = await live.fixture_call(BIG_TEXT)
    text = big_text()
    through = seed_passthrough(live, call, BIG_TEXT)
    envelope, findings = judge_success(call, "tool_execute") if through is None else ({}, through)
    summary = str(envelope.get("summary", ""))
    size = len(text.encode("utf-8"))
    if envelope:
        kept = summary.rstrip("…").rstrip()
        if len(summary) > SEED_SUMMARY_MAX or not text.startswith(kept):
            findings.append(Finding(SUMMARY, f"{len(summary)} characters", summary[:80]))
        if not any(a.get("size_bytes") == size for a in _artifacts(call)):
            findings.append(Finding(ARTIFACT, f"none of {size} bytes", _artifacts(call)))
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
    got = envelope_of(call).get("content")
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
    cases = [("unknown-handle", UNKNOWN_HANDLE, "all")]
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
            expect_error(call, {VIEW_FAILED}),
            input={"handle": handle, "selector": selector},
            expected={"error": VIEW_FAILED},
            got=call.shown(),
        )


@functools.cache  # drawn once per run, though run and named separately
def _draw_selectors(seed: int, n: int) -> list[Drawn]:
    vectors = vector_errors("parse_view_selector", ARGS_INVALID)
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
    through = seed_passthrough(live, call, STRUCTURED)
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
    through = seed_passthrough(live, call, IMAGE)
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
            seen = envelope_of(view)
            try:
                whole = base64.b64decode(str(seen.get("content"))) == IMAGE_BYTES
            except ValueError:
                whole = False
            if seen.get("encoding") != "base64" or not whole:
                findings.append(Finding(_IMAGE_VIEW, "", view.shown()))
    emit.judge("", findings, input={"tool": IMAGE}, got=call.shown())


# ------------------------------------------------------------------ timeouts


FAMILIES: Final[list[Family]] = [
    family(
        "execute/large-text",
        _large_text,
        via_requirements=("ENVELOPE-TEXT-SUMMARY", "ENVELOPE-EXECUTE-PIPELINE"),
    ),
    family(
        "execute/structured",
        _structured,
        via_requirements=(
            "ENVELOPE-STRUCTURED-CONTENT-ARTIFACT",
            "ENVELOPE-STRUCTURED-CONTENT-FACTS",
        ),
    ),
    family("execute/image", _image, via_requirements=("ENVELOPE-BINARY-ARTIFACTS",)),
    family(
        "view/handles",
        _view_handles,
        GATEWAY,
        via_requirements=("VIEW-DRILLDOWN",),
        summary="every artifact handle tool_execute returned works with tool_view",
    ),
    family(
        "view/text",
        _view_text,
        GATEWAY,
        via_requirements=("VIEW-DRILLDOWN",),
        seed=_SELECTORS,
        amended_by=_SELECTOR_AMENDMENT,
    ),
    family(
        "view/json-pointer",
        _view_json,
        GATEWAY,
        seed=_SELECTORS,
        amended_by=_SELECTOR_AMENDMENT,
        via_requirements=("VIEW-DRILLDOWN", "ENVELOPE-STRUCTURED-CONTENT-ARTIFACT"),
    ),
    family(
        "view/misses",
        _view_missing,
        GATEWAY,
        via_requirements=("VIEW-DRILLDOWN", *SHAPE),
        seed=_SELECTORS,
        amended_by=_SELECTOR_AMENDMENT,
    ),
    family(
        "view/selector-invalid",
        _selector_invalid,
        GATEWAY,
        seed=_SELECTORS,
        amended_by=_SELECTOR_AMENDMENT,
        via_checks=("grammar.view_selector.invalid",),
        via_requirements=SHAPE,
        draw=_draw_selectors,
    ),
    family(
        "view/meta-args-invalid",
        meta_invalid("tool_view"),
        GATEWAY,
        via_requirements=SHAPE,
        draw=draw_meta("tool_view"),
    ),
]
