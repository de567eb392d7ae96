"""Layer 1: the surface's pure functions, checked in another process over JSON lines.

Cases come from two places, both owned by the generated package:

* every case of every shipped vector file (`gatespec_surface.vectors.load_cases`);
* cases drawn from the generated hypothesis strategies (`gatespec_surface.strategies`), one
  *family* per emitted check id that a pure function can evidence, with the expected answer
  worked out by the kit itself (families.py, oracle/), never by gatespec.

Reproducibility. Each family is drawn by a hypothesis `@given` run pinned with `@seed`
(a per-family seed derived from `--seed` and the family's name), `derandomize=False`,
`database=None`, only the generate phase, and no "local constants" (see
`_without_local_constants`). The same seed, max-examples, spec and hypothesis version give the
same case list in any process; a family added later does not shift the others.
Duplicate inputs within a family are dropped, so a family may hold fewer than max-examples.
Families whose strategy labels its examples (which way a card is broken, which kind of text)
draw more and keep a label-balanced subset, since hypothesis favours the first option of a
`sampled_from`.

Case names: ``functions/<function>/vectors/<file>/<case name>`` for vector cases and
``functions/<function>/<family>[/<label>]/<NNNN>`` for drawn ones.

This module judges answers and runs the suite; cases.py builds the cases (families.py holds
the drawn families), process.py drives the adapter process, export.py writes `vectors export`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from gatespec_conformance import DEFAULT_MAX_EXAMPLES
from gatespec_conformance.functions.cases import (
    SUITE,
    Case,
    build_cases,
    generated_cases,
    vector_cases,
)
from gatespec_conformance.functions.export import describe_functions, export_vectors
from gatespec_conformance.functions.process import AdapterFailure, AdapterProcess
from gatespec_conformance.functions.protocol import all_functions
from gatespec_conformance.report import (
    CheckResult,
    Example,
    Outcome,
    Progress,
    refs_for_ids,
)
from gatespec_conformance.tokens import count_tokens
from gatespec_surface import SPEC_HASH, SPEC_VERSION
from gatespec_surface.budgets import CARD_HARD_CAP_TOKENS as CAP
from gatespec_surface.errors import ErrorCode

START = f"{SUITE}/adapter/start"  # the one failure of an adapter that cannot start

__all__ = [
    "DEFAULT_MAX_EXAMPLES",
    "START",
    "SUITE",
    "AdapterFailure",
    "AdapterProcess",
    "Case",
    "build_cases",
    "describe_functions",
    "export_vectors",
    "generated_cases",
    "judge",
    "run_cases",
    "vector_cases",
]


# ------------------------------------------------------------------ judging


def same_json(a: Any, b: Any) -> bool:
    """JSON equality: 1 == 1.0 (languages differ in how they print numbers), true != 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


# A function that gives no answer at all (a crash, or an error where the seed wants a value)
# breaks the one rule that says it answers, not every rule of its family: seed 000 §2.4's first
# step, "Encode the candidate description with cl100k_base. If the token count is within
# budget, emit verbatim", is the one a crash on any text (a special token's spelling) breaks.
_NO_ANSWER_RULES: Final = {"truncate_description": ("TRUNC-VERBATIM-WITHIN-BUDGET",)}


def no_answer(case: Case) -> Case:
    """`case` charged as a function that gave no answer (see _NO_ANSWER_RULES)."""
    rules = _NO_ANSWER_RULES.get(case.function)
    return replace(case, requirements=refs_for_ids(rules)) if rules else case


def judge(case: Case, reply: dict[str, Any], duration: float = 0.0) -> CheckResult:
    """One case's result from the adapter's answer line."""

    def result(outcome: Outcome, reason: str = "", got: Any = None) -> CheckResult:
        return case.result(outcome, reason, got, duration)

    answer = {k: reply[k] for k in ("ok", "error", "message") if k in reply}
    if reply.get("unsupported") is True:
        return result(Outcome.SKIP, f"unsupported by the adapter: {case.function}")
    given = {k: reply[k] for k in ("ok", "error") if k in reply}
    if any(same_json(given, accepted) for accepted in case.accepts):
        return result(Outcome.PASS)  # another answer the seed permits (--level seed)
    if ("ok" in reply) == ("error" in reply):
        return result(
            Outcome.FAIL, "protocol: an answer has exactly one of ok, error, unsupported", reply
        )
    if case.prop is not None:
        if "error" in reply:
            return no_answer(case).result(
                Outcome.FAIL, f"expected success, got error {reply['error']}", answer, duration
            )
        problem = case.prop.judge(reply["ok"])
        if problem is None:
            return result(Outcome.PASS)
        return case.result(
            Outcome.FAIL, problem, answer, duration, "the answer breaks the property"
        )
    if "ok" in case.expect:
        if "error" in reply:
            return no_answer(case).result(
                Outcome.FAIL, f"expected success, got error {reply['error']}", answer, duration
            )
        if same_json(case.expect["ok"], reply["ok"]):
            return result(Outcome.PASS)
        return result(Outcome.FAIL, "answer differs", answer)
    if "ok" in reply:
        return result(Outcome.FAIL, f"expected error {case.expect['error']}, got success", answer)
    if reply["error"] == case.expect["error"]:
        return result(Outcome.PASS)
    return result(
        Outcome.FAIL, f"expected error {case.expect['error']}, got {reply['error']}", answer
    )


# ------------------------------------------------------------------ a valid card refused

# Seed 000 §2.3: "Implementations MUST raise CatalogError if a single card exceeds the hard cap"
# and "The bounds apply to the prompt-facing rendered form", a form the seeds do not fix. So the
# one ground the seed gives for refusing a card that keeps every §2.1-§2.2 rule is its own
# rendering over the cap: such a refusal is charged to the budget rule, and at --level seed it
# passes when the implementation's own render_card of that card is over the hard cap in exact
# cl100k_base tokens (the kit counts; an adapter without render_card keeps the failure).
_REFUSAL_RULES: Final = ("BUDGET-OVER-CAP-ERROR",)


def refused_valid_card(case: Case, reply: dict[str, Any]) -> bool:
    return (
        case.function == "validate_card"
        and "ok" in case.expect
        and reply.get("error") == ErrorCode.CATALOG_ERROR.value
    )


def judge_refusal(
    case: Case, reply: dict[str, Any], rendered: dict[str, Any] | None, duration: float = 0.0
) -> CheckResult:
    """A CATALOG_ERROR for a valid card, given the implementation's own render_card answer for
    it (None when not asked: --level spec, where AM-CARD-RENDER fixes the rendering)."""
    budget = replace(case, requirements=refs_for_ids(_REFUSAL_RULES))
    answer = {k: reply[k] for k in ("error", "message") if k in reply}
    if rendered is None:
        return budget.result(
            Outcome.FAIL, f"expected success, got error {reply['error']}", answer, duration
        )
    line = rendered.get("ok")
    if rendered.get("unsupported") is True or not isinstance(line, str):
        why = (
            "the adapter gives no render_card of it"
            if rendered.get("unsupported")
            else (f"its render_card answered {rendered!r:.120}")
        )
        return budget.result(
            Outcome.FAIL,
            f"refused a valid card and nothing shows its rendering over the {CAP}-token hard "
            f"cap: {why}",
            answer,
            duration,
            "a valid card refused, its rendering not shown over the hard cap",
        )
    tokens = count_tokens(line)
    if tokens > CAP:
        return budget.result(Outcome.PASS, duration=duration)
    return budget.result(
        Outcome.FAIL,
        f"refused a valid card whose own rendering is {tokens} tokens (hard cap {CAP})",
        {**answer, "rendered": line},
        duration,
        "a valid card refused although its own rendering is within the hard cap",
    )


# ------------------------------------------------------------------ running


@dataclass
class RunInfo:
    implementation: str = ""
    spec_version: str = ""
    restarts: int = 0
    notes: list[str] = field(default_factory=list)


def _handshake(adapter: AdapterProcess, timeout: float, info: RunInfo) -> None:
    hello = {
        "id": 0,
        "function": "hello",
        "input": {
            "spec_version": SPEC_VERSION,
            "spec_hash": SPEC_HASH,
            "functions": all_functions(),
        },
    }
    reply = adapter.request(hello, timeout)
    ok = reply.get("ok")
    if not isinstance(ok, dict):
        raise AdapterFailure(f"handshake: expected {{'id': 0, 'ok': {{...}}}}, got {reply!r}")
    info.implementation = str(ok.get("implementation", "?"))
    info.spec_version = str(ok.get("spec_version", "?"))
    if info.spec_version != SPEC_VERSION:
        note = f"adapter implements spec {info.spec_version}; these checks are spec {SPEC_VERSION}"
        if note not in info.notes:
            info.notes.append(note)


def run_cases(
    command: Sequence[str],
    cases: Sequence[Case],
    *,
    timeout: float = 10.0,
    startup_timeout: float = 60.0,
    restarts: int = 3,
    progress: Progress | None = None,
    env: dict[str, str] | None = None,
    level: str = "spec",
) -> tuple[list[CheckResult], RunInfo]:
    """Send every case to the adapter, one at a time, in order.

    A timeout, crash or protocol break fails that case and restarts the adapter (at most
    `restarts` times); after that every remaining case is skipped as "not run", naming the
    failure. An adapter that cannot start is ONE failure (``functions/adapter/start``, charged
    to no requirement: no function was judged) and every case is skipped as "not run". The
    adapter's stderr tail is kept in the notes of a run it finished, too (warnings such as a
    tokenizer fallback). At `level` seed, a valid card refused with CATALOG_ERROR is judged
    with the adapter's own render_card of it (judge_refusal).
    """
    info = RunInfo()
    adapter = AdapterProcess(command, env)
    dead: str | None = None

    def start() -> str | None:
        try:
            adapter.start()
            _handshake(adapter, startup_timeout, info)
            return None
        except AdapterFailure as exc:
            adapter.stop(kill=True)
            return f"adapter did not start: {exc}"

    dead = start()
    results: list[CheckResult] = []
    if dead is not None and any(not c.skip for c in cases):
        results.append(
            CheckResult(
                START,
                Outcome.FAIL,
                reason=dead,
                example=Example({"command": list(command)}, {"ok": "a hello answer"}, dead),
                group=START,
                blocking=True,
            )
        )
    try:
        for n, case in enumerate(cases, start=1):
            if case.skip:
                res = case.result(Outcome.SKIP, case.skip)
            elif dead is not None:
                res = case.result(Outcome.SKIP, f"not run: {dead}")
            else:
                began = time.monotonic()
                try:
                    reply = adapter.request(
                        {"id": n, "function": case.function, "input": case.input}, timeout
                    )
                    res = judge(case, reply, time.monotonic() - began)
                    if res.outcome is Outcome.FAIL and refused_valid_card(case, reply):
                        rendered = None
                        if level == "seed":
                            rendered = adapter.request(
                                {
                                    "id": n,
                                    "function": "render_card",
                                    "input": {"card": case.input["card"]},
                                },
                                timeout,
                            )
                        res = judge_refusal(case, reply, rendered, time.monotonic() - began)
                except AdapterFailure as exc:
                    res = no_answer(case).result(
                        Outcome.FAIL, str(exc), None, time.monotonic() - began
                    )
                    adapter.stop(kill=True)
                    if info.restarts < restarts:
                        info.restarts += 1
                        dead = start()
                    else:
                        dead = (
                            f"the adapter failed at {case.name} ({exc}) and no restarts "
                            f"are left (--restarts {restarts})"
                        )
            results.append(res)
            if progress is not None:
                progress.advance(res)
    finally:
        adapter.stop()
        time.sleep(0.05)  # let the stderr pump catch the last words
        tail = adapter.stderr_tail()
        if tail and dead is None:
            info.notes.append(f"the adapter's stderr ends: {tail}")
    return results, info
