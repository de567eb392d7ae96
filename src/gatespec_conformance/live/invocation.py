"""What the invocation families share: the error codes and rules of an execute answer, how
one is read (a ResultEnvelope, or at --level seed the upstream's result passed through),
what reached the fixture meanwhile, the meta-tools' invalid-argument families, and the
family registry's helpers."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Final

from gatespec_conformance.fixtures.catalog import direct_result
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
    meta_args,
)
from gatespec_conformance.live.facts import Live, NoFact
from gatespec_conformance.live.payloads import (
    judge_rejection,
)
from gatespec_conformance.rules import SPEC, Finding, Rule, seed_value
from gatespec_surface.budgets import (
    SUMMARY_MAX_CHARS,
)
from gatespec_surface.errors import ErrorCode

ARGS_INVALID: Final = ErrorCode.ARGS_INVALID.value
VIEW_FAILED: Final = ErrorCode.VIEW_FAILED.value
_NOT_FOUND: Final = ErrorCode.TOOL_NOT_FOUND.value
UNKNOWN_HANDLE: Final = "art_" + "0" * 16
MISSING_TOOL: Final = "zz_no_such_tool"
# An unknown tool: the spec says TOOL_NOT_FOUND (seed 001's "Tool not found"); seed 000/002 give
# no code of their own, and HYDRATE_FAILED (§5.5) or ARGS_INVALID read as fairly.
UNKNOWN_CODES: Final = {
    "spec": {_NOT_FOUND},
    "seed": {_NOT_FOUND, ErrorCode.HYDRATE_FAILED.value, ARGS_INVALID},
}
# Seed 002: "envelope.summary contains truncated text (max 500 chars)".
SEED_SUMMARY_MAX: Final = int(seed_value(("S002-SUMMARY-MAX",), SUMMARY_MAX_CHARS))

STATUS: Final = Rule("the envelope's status is not the expected one", ("ENVELOPE-STATUS",))
SUMMARY: Final = Rule("the summary does not carry the upstream text", ("ENVELOPE-TEXT-SUMMARY",))
_UPSTREAM: Final = Rule(
    "upstream did not receive exactly this call", ("ENVELOPE-EXECUTE-PIPELINE", "TOOLID-SOLE-KEY")
)
REACHED: Final = Rule(
    "a call that must not reach upstream did", ("VALIDATE-NO-UPSTREAM-ON-INVALID",)
)
ARTIFACT: Final = Rule(
    "no artifact of the expected size holds the result",
    levels=SPEC,
    spec_only="budgets.yaml's text artifact threshold and models.yaml ArtifactRef.size_bytes",
)


_PASSED: Final = Rule("neither a ResultEnvelope nor the upstream's result passed through")


def seed_passthrough(
    live: Live, call: CallResult, tool: str, args: Any = None
) -> list[Finding] | None:
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


def envelope_of(call: CallResult) -> dict[str, Any]:
    found, _ = call.document()
    return found if isinstance(found, dict) and not call.is_error else {}


def upstream_findings(new: list[dict[str, Any]], name: str, args: Any) -> list[Finding]:
    if len(new) != 1:
        return [Finding(_UPSTREAM, f"{len(new)} calls, not exactly one", new[:3])]
    if new[0].get("name") != name:
        return [Finding(_UPSTREAM, f"called as {new[0].get('name')!r}, not {name!r}", new[0])]
    if not same_json(new[0].get("arguments"), args):
        return [Finding(_UPSTREAM, "the arguments changed on the way", new[0])]
    return []


async def no_upstream(live: Live, pending: Awaitable[CallResult]) -> tuple[CallResult, list[Any]]:
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


def unknown_basis(call: CallResult) -> str:
    """Why an unknown tool's code is the spec's alone, when the seeds would accept it."""
    seed = [f for f in expect_error(call, UNKNOWN_CODES["seed"]) if "seed" in f.rule.levels]
    if seed:
        return ""
    return "errors.yaml: TOOL_NOT_FOUND for an unknown tool; seeds 000/002 name no code for it"


def meta_invalid(tool: str) -> Callable[[Live, Emit], Awaitable[None]]:
    """A family runner: drawn invalid arguments of a meta-tool never reach upstream. At
    --level seed, arguments that break only the spec's schema (not one the seeds state, nor the
    IUT's own declared one) are not judged."""

    async def run(live: Live, emit: Emit) -> None:
        for case in draw_meta(tool)(live.options.seed, live.options.max_examples):
            prop = next((p for p in case.input if p != "unexpected"), None)
            codes = allowed_codes(tool, prop) if case.label == "invalid_value" else {ARGS_INVALID}
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
                findings.append(Finding(REACHED, f"{len(new)} upstream call(s)", new[:2]))
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
def draw_meta(tool: str) -> Callable[[int, int], list[Drawn]]:
    @functools.cache
    def draw(seed: int, n: int) -> list[Drawn]:
        return draw_cases(f"{tool}/meta-args-invalid", meta_args(tool), seed, n)

    return draw


# ------------------------------------------------------------------ registry

_BOTH: Final = ("gateway", "transparent")
GATEWAY: Final = ("gateway",)
TRANSPARENT: Final = ("transparent",)
SHAPE: Final = ("ERROR-META-TOOL-RESULT", "ERROR-NEVER-RAISE")
WIRE: Final = "AM-WIRE-NAME: wire names exist by the amendment"


def family(key: str, run: Any, profiles: tuple[str, ...] = _BOTH, **kw: Any) -> Family:
    check_id = "server." + key.replace("/", ".").replace("-", "_")
    return Family(key, check_id, run, profiles=profiles, **kw)
