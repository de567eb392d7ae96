"""Layer 1: the surface's pure functions, checked in another process over JSON lines.

Cases come from two places, both owned by the generated package:

* every case of every shipped vector file (`gatespec_surface.vectors.load_cases`);
* cases drawn from the generated hypothesis strategies (`gatespec_surface.strategies`), one
  *family* per emitted check id that a pure function can evidence, with the expected answer
  computed by gatespec itself (`adapter.reference_answer`).

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
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Final

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from gatespec.conformance import DEFAULT_MAX_EXAMPLES
from gatespec.conformance.adapter import all_functions, reference_answer
from gatespec.conformance.report import (
    CheckResult,
    Example,
    Outcome,
    Progress,
    RequirementRef,
    requirements_for,
)
from gatespec_surface import SPEC_HASH, SPEC_VERSION
from gatespec_surface import strategies as s
from gatespec_surface import vectors as v
from gatespec_surface.budgets import (
    BANNED_FIELDS,
    CARD_HARD_CAP_TOKENS,
    SENTENCE_TERMINATORS,
    TERMINATORS_NEEDING_SPACE,
)
from gatespec_surface.grammars import GRAMMARS

__all__ = [
    "DEFAULT_MAX_EXAMPLES",
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

SUITE: Final = "functions"


@dataclass(frozen=True)
class Case:
    name: str
    function: str
    input: dict[str, Any]
    expect: dict[str, Any]  # {"ok": value} | {"error": CODE}
    check_ids: tuple[str, ...]
    requirements: tuple[RequirementRef, ...] = field(default=())
    group: str = ""  # failures are summarised per group ("": the name's parent)

    @property
    def requirement_ids(self) -> tuple[str, ...]:
        return tuple(r.id for r in self.requirements)

    def result(
        self,
        outcome: Outcome,
        reason: str = "",
        got: Any = None,
        duration: float = 0.0,
    ) -> CheckResult:
        """This case's CheckResult; a failure carries (input, expected, got)."""
        example = Example(self.input, self.expect, got) if outcome is Outcome.FAIL else None
        return CheckResult(
            self.name,
            outcome,
            self.requirements,
            self.check_ids,
            reason,
            example,
            duration,
            self.group,
        )


def _case(
    name: str,
    function: str,
    inp: dict[str, Any],
    expect: dict[str, Any],
    ids: Sequence[str],
    group: str = "",
) -> Case:
    return Case(name, function, inp, expect, tuple(ids), requirements_for(ids), group)


# ------------------------------------------------------------------ vector cases


def _vector_docs() -> Iterator[tuple[str, dict[str, Any]]]:
    root = resources.files(v)
    for filename in v.VECTOR_FILES:
        yield filename, json.loads(root.joinpath(filename).read_text(encoding="utf-8"))


def _vector_check_ids(stem: str, case: dict[str, Any]) -> list[str]:
    ids = [f"vectors.{stem}"]
    # A grammar vector that is one of the spec's own examples evidences grammar.<g>.examples.
    if case["function"] == "grammar_match":
        g, value = case["input"]["grammar"], case["input"]["value"]
        if value in s.SPEC_VALID.get(g, ()) or value in s.SPEC_INVALID.get(g, ()):
            ids.append(f"grammar.{g}.examples")
    return ids


def vector_cases() -> list[Case]:
    """Every shipped vector case, in file order, with a unique hierarchical name."""
    out: list[Case] = []
    seen: set[str] = set()
    for filename, doc in _vector_docs():
        stem = filename.removesuffix(".json")
        for case in doc["cases"]:
            name = f"{SUITE}/{case['function']}/vectors/{stem}/{case['name']}"
            base, n = name, 1
            while name in seen:  # a vector file may repeat a case name
                n += 1
                name = f"{base}~{n}"
            seen.add(name)
            ids = _vector_check_ids(stem, case)
            group = f"{SUITE}/{case['function']}/vectors/{stem}"
            out.append(_case(name, case["function"], case["input"], case["expect"], ids, group))
    return out


# ------------------------------------------------------------------ drawn families

Draw = st.SearchStrategy[tuple[str, dict[str, Any]]]  # (label, input); label "" for none


@dataclass(frozen=True)
class Family:
    path: str  # "<function>/<family>", the name prefix after "functions/"
    function: str
    check_ids: tuple[str, ...]
    draw: Callable[[], Draw]
    expect: Callable[[dict[str, Any]], dict[str, Any]] | None = None  # None: the reference
    # Labelled families draw `oversample` times more and keep a label-balanced subset:
    # hypothesis favours the first option of a sampled_from (about half the draws).
    oversample: int = 1


def _plain(strategy: st.SearchStrategy[dict[str, Any]]) -> Draw:
    return strategy.map(lambda inp: ("", inp))


_GRAMMAR_VALUES: Final[dict[str, Callable[[str], st.SearchStrategy[str] | None]]] = {
    "valid": s.valid,
    "invalid": s.invalid,
    "cap": s.over_cap,
}


def _grammar_draw(g: str, kind: str) -> Draw:
    values = _GRAMMAR_VALUES[kind](g)
    assert values is not None
    return _plain(values.map(lambda value: {"grammar": g, "value": value}))


def _constant(answer: dict[str, Any], _inp: dict[str, Any]) -> dict[str, Any]:
    return answer


def _grammar_families() -> list[Family]:
    """valid, invalid and (where the syntax can pass the length cap) cap, for every grammar:
    the strategy's own claim is the expected answer."""
    out: list[Family] = []
    for g, info in GRAMMARS.items():
        answers: dict[str, dict[str, Any]] = {
            "valid": {"ok": True},
            "invalid": {"error": info.error.value},
        }
        if s.over_cap(g) is not None:
            answers["cap"] = answers["invalid"]
        for kind, answer in answers.items():
            out.append(
                Family(
                    f"grammar_match/{g}/{kind}",
                    "grammar_match",
                    (f"grammar.{g}.{kind}",),
                    functools.partial(_grammar_draw, g, kind),
                    functools.partial(_constant, answer),
                )
            )
    return out


def _schema(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required}


@st.composite
def _shape_schema(draw: st.DrawFn) -> dict[str, Any]:
    """An input schema whose prose and types vary: hash8 must see only its shape (§1.3)."""
    keys = draw(st.lists(st.text(max_size=8), max_size=4, unique=True))
    props = {
        k: {
            "type": draw(st.sampled_from(["string", "integer", "object", "array"])),
            "description": draw(st.text(max_size=30)),
        }
        for k in keys
    }
    required = draw(st.lists(st.sampled_from(keys), unique=True)) if keys else []
    return (
        _schema(props, required) if draw(st.booleans()) else {"type": "object", "properties": props}
    )


def _parts_of(tool_id: str) -> dict[str, Any]:
    return reference_answer("parse_tool_id", {"value": tool_id})["ok"]


def _wire_of(tool_id: str) -> str:
    return reference_answer("encode_wire_name", {"tool_id": tool_id})["ok"]


@st.composite
def _make_tool_id_input(draw: st.DrawFn) -> dict[str, Any]:
    inp = {
        "namespace": draw(s.valid("namespace")),
        "upstream_name": draw(s.valid("name")),
        "input_schema": draw(_shape_schema()),
    }
    if draw(st.integers(0, 3)) == 0:
        inp["version"] = draw(s.valid("version"))
    return inp


@st.composite
def _banned(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    card = draw(s.valid_choice_card())
    banned = draw(st.sampled_from(sorted(BANNED_FIELDS)))
    if draw(st.booleans()):
        return "field", {"card": {**card, banned: {"type": "object"}}}
    return "stringified", {"card": {**card, "description": banned + ': {"type": "object"}'}}


def _annotation_keys() -> list[str]:
    """The hint names the annotation vectors use: the kit invents none."""
    keys = {
        k
        for c in v.load_cases()
        if c["function"] == "annotation_fields"
        for k in c["input"]["annotations"]
    }
    return sorted(keys)


_JSON_SCALARS: Final = st.one_of(
    st.booleans(), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=3), st.none()
)

# Text for the token functions: plain Unicode, prose with sentence ends (and abbreviations
# that are not sentence ends), CJK with full-width terminators, and special-token spellings
# that must count as plain text.
_WIDE: Final = tuple(t for t in SENTENCE_TERMINATORS if t not in TERMINATORS_NEEDING_SPACE)
_WORD: Final = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEF0123456789-'", min_size=1, max_size=12
)


@st.composite
def _sentences(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 12))):
        words = draw(
            st.lists(
                st.one_of(_WORD, st.sampled_from(["e.g.", "file.txt", "v1.2"])),
                min_size=1,
                max_size=14,
            )
        )
        parts.append(" ".join(words) + draw(st.sampled_from(TERMINATORS_NEEDING_SPACE or ("",))))
    return draw(st.sampled_from([" ", "  ", "\n", "\t "])).join(parts)


@st.composite
def _cjk(draw: st.DrawFn) -> str:
    han = st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF)
    kana = st.characters(min_codepoint=0x3041, max_codepoint=0x30FF)
    parts = [
        draw(st.text(alphabet=st.one_of(han, kana), min_size=1, max_size=40))
        + draw(st.sampled_from(_WIDE or ("",)))
        for _ in range(draw(st.integers(1, 8)))
    ]
    return "".join(parts)


def _texts() -> dict[str, st.SearchStrategy[str]]:
    special = st.sampled_from(["<|endoftext|>", "<|fim_prefix|>", "<|im_start|>"])
    return {
        "plain": st.text(max_size=300),
        "sentences": _sentences(),
        "cjk": _cjk(),
        "special": st.tuples(st.text(max_size=20), special, st.text(max_size=20)).map("".join),
    }


def _labelled(
    options: dict[str, st.SearchStrategy[Any]], build: Callable[[Any], dict[str, Any]]
) -> Draw:
    """One strategy over all options, each example labelled with its option's name."""

    def tagged(label: str, strat: st.SearchStrategy[Any]) -> Draw:
        return strat.map(lambda x: (label, build(x)))

    return st.one_of(*[tagged(k, strat) for k, strat in options.items()])


def _budget() -> st.SearchStrategy[int]:
    return st.integers(1, CARD_HARD_CAP_TOKENS)


def _other_families() -> list[Family]:
    ann_keys = _annotation_keys()
    return [
        Family(
            "parse_tool_id/roundtrip",
            "parse_tool_id",
            ("grammar.tool_id.roundtrip",),
            lambda: _plain(s.valid("tool_id").map(lambda x: {"value": x})),
        ),
        Family(
            "format_tool_id/roundtrip",
            "format_tool_id",
            ("grammar.tool_id.roundtrip",),
            lambda: _plain(s.valid("tool_id").map(lambda x: {"parts": _parts_of(x)})),
        ),
        Family(
            "make_tool_id/emitted",
            "make_tool_id",
            ("hash8.emitted",),
            lambda: _plain(_make_tool_id_input()),
        ),
        Family(
            "hash8/shape",
            "hash8",
            ("hash8.shape_only",),
            lambda: _plain(
                st.fixed_dictionaries(
                    {"upstream_name": s.valid("name"), "input_schema": _shape_schema()}
                )
            ),
        ),
        Family(
            "parse_path/parse",
            "parse_path",
            ("grammar.path.parse",),
            lambda: _plain(s.valid("path").map(lambda x: {"value": x})),
        ),
        Family(
            "encode_wire_name/roundtrip",
            "encode_wire_name",
            ("wire_name.roundtrip",),
            lambda: _plain(s.valid("tool_id").map(lambda x: {"tool_id": x})),
        ),
        Family(
            "decode_wire_name/roundtrip",
            "decode_wire_name",
            ("wire_name.roundtrip",),
            lambda: _plain(s.valid("tool_id").map(lambda x: {"name": _wire_of(x)})),
        ),
        Family(
            "parse_aggregate_name/roundtrip",
            "parse_aggregate_name",
            ("grammar.aggregate_name.roundtrip",),
            lambda: _plain(s.valid("aggregate_name").map(lambda x: {"value": x})),
        ),
        Family(
            "parse_search_operation/roundtrip",
            "parse_search_operation",
            ("grammar.search_operation.roundtrip",),
            lambda: _plain(s.valid("search_operation").map(lambda x: {"value": x})),
        ),
        Family(
            "parse_view_selector/parse",
            "parse_view_selector",
            ("grammar.view_selector.parse",),
            lambda: _plain(s.valid("view_selector").map(lambda x: {"value": x})),
        ),
        Family(
            "server_key/normalise",
            "server_key",
            ("server_key.normalise",),
            lambda: _plain(st.text(max_size=40).map(lambda x: {"config_key": x})),
        ),
        Family(
            "annotation_fields/untrusted",
            "annotation_fields",
            ("annotations.untrusted",),
            lambda: _plain(
                st.dictionaries(st.sampled_from(ann_keys), _JSON_SCALARS).map(
                    lambda a: {"annotations": a}
                )
            ),
        ),
        Family(
            "validate_card/valid",
            "validate_card",
            ("model.ChoiceCard.valid",),
            lambda: _plain(s.valid_choice_card().map(lambda c: {"card": c})),
            lambda _i: {"ok": True},
        ),
        Family(
            "validate_card/invalid",
            "validate_card",
            ("model.ChoiceCard.invalid",),
            lambda: s.invalid_choice_card().map(lambda hc: (hc[0], {"card": hc[1]})),
            oversample=4,
        ),
        Family("validate_card/banned", "validate_card", ("model.ChoiceCard.banned",), _banned),
        Family(
            "render_card/render",
            "render_card",
            ("model.ChoiceCard.render",),
            lambda: _plain(s.valid_choice_card().map(lambda c: {"card": c})),
        ),
        # No requirement lists these check ids yet (TRUNC-*, BUDGET-EXACT-CL100K are pending):
        # the report says so, and names them once requirements.yaml does.
        Family(
            "truncate_description/budget",
            "truncate_description",
            ("truncate.description",),
            lambda: _labelled(
                {k: st.tuples(t, _budget()) for k, t in _texts().items()},
                lambda tb: {"text": tb[0], "budget_tokens": tb[1]},
            ),
            oversample=2,
        ),
        Family(
            "count_tokens/text",
            "count_tokens",
            ("tokens.count",),
            lambda: _labelled(_texts(), lambda t: {"text": t}),
            oversample=2,
        ),
    ]


def families() -> list[Family]:
    return [*_grammar_families(), *_other_families()]


def _family_seed(seed: int, path: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}/{path}".encode()).digest()[:8], "big")


@contextlib.contextmanager
def _without_local_constants() -> Iterator[None]:
    """Hypothesis mixes into ~5% of draws constants it scans from every *local* module in
    sys.modules, so the same seed drew different cases under pytest and under the CLI (and
    would after any new import). Draw with an empty local pool, and clear the cache of allowed
    constants on the way in and out. Private API: without it, fall back to plain drawing."""
    try:
        from hypothesis.internal.conjecture import providers

        original = providers._get_local_constants
        cache = providers.CONSTANTS_CACHE
        empty = providers.Constants()
    except (ImportError, AttributeError):  # pragma: no cover - another hypothesis
        yield
        return
    providers._get_local_constants = lambda: empty
    cache.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = original
        cache.cache.clear()


def _draw_all(strategy: Draw, n: int, seed: int) -> list[tuple[str, dict[str, Any]]]:
    """Up to n examples, reproducibly: a pinned @given run that only collects."""
    out: list[tuple[str, dict[str, Any]]] = []

    @hypothesis_seed(seed)
    @settings(
        max_examples=n,
        database=None,
        derandomize=False,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        print_blob=False,
    )
    @given(strategy)
    def collect(example: tuple[str, dict[str, Any]]) -> None:
        out.append(example)

    with _without_local_constants():
        collect()
    return out


def _json_safe(inp: dict[str, Any]) -> str | None:
    try:
        return json.dumps(inp, sort_keys=True, ensure_ascii=True, allow_nan=False)
    except (TypeError, ValueError):
        return None


def _unique(drawn: Sequence[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    seen: set[str] = set()
    out = []
    for label, inp in drawn:
        key = _json_safe(inp)
        if key is not None and key not in seen:
            seen.add(key)
            out.append((label, inp))
    return out


def _balanced(
    drawn: Sequence[tuple[str, dict[str, Any]]], n: int
) -> list[tuple[str, dict[str, Any]]]:
    """Up to n of `drawn`, taken round-robin across labels, kept in draw order."""
    by_label: dict[str, list[int]] = {}
    for i, (label, _inp) in enumerate(drawn):
        by_label.setdefault(label, []).append(i)
    queues = [deque(ix) for ix in by_label.values()]
    keep: list[int] = []
    while len(keep) < n and any(queues):
        for q in queues:
            if q and len(keep) < n:
                keep.append(q.popleft())
    return [drawn[i] for i in sorted(keep)]


def generated_cases(seed: int, max_examples: int, notes: list[str] | None = None) -> list[Case]:
    """Drawn cases of every family (at most max_examples each). A reference crash on a drawn
    input (a gatespec bug) drops the input and adds a note."""
    out: list[Case] = []
    if max_examples <= 0:
        return out
    for fam in families():
        drawn = _draw_all(fam.draw(), max_examples * fam.oversample, _family_seed(seed, fam.path))
        crashed = 0
        for n, (label, inp) in enumerate(_balanced(_unique(drawn), max_examples), start=1):
            try:
                expect = fam.expect(inp) if fam.expect else reference_answer(fam.function, inp)
            except Exception:
                crashed += 1
                continue
            name = f"{SUITE}/{fam.path}/{label + '/' if label else ''}{n:04d}"
            out.append(_case(name, fam.function, inp, expect, fam.check_ids))
        if crashed and notes is not None:
            notes.append(
                f"gatespec's reference raised on {crashed} drawn inputs of {fam.path} (dropped)"
            )
    return out


def build_cases(
    seed: int = 0, max_examples: int = DEFAULT_MAX_EXAMPLES, notes: list[str] | None = None
) -> list[Case]:
    """Vector cases, then drawn cases: the full layer-1 suite for this seed."""
    return [*vector_cases(), *generated_cases(seed, max_examples, notes)]


# ------------------------------------------------------------------ the adapter process


class AdapterFailure(Exception):
    """The adapter cannot go on answering: it exited, timed out or broke the protocol."""


class AdapterProcess:
    """One adapter subprocess. Lines are read by a thread into a queue so that every wait has
    a timeout; stderr is kept (last lines) to explain a crash."""

    def __init__(self, command: Sequence[str], env: dict[str, str] | None = None) -> None:
        self.command = list(command)
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._stderr: deque[str] = deque(maxlen=20)

    def start(self) -> None:
        try:
            self.proc = subprocess.Popen(
                self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self.env,
                start_new_session=True,  # so that stop() can end the adapter's own children
            )
        except OSError as exc:
            raise AdapterFailure(f"cannot start adapter {self.command!r}: {exc}") from exc
        self._lines = queue.Queue()
        self._stderr.clear()
        threading.Thread(
            target=self._pump_stdout, args=(self.proc, self._lines), daemon=True
        ).start()
        threading.Thread(target=self._pump_stderr, args=(self.proc,), daemon=True).start()

    @staticmethod
    def _pump_stdout(proc: subprocess.Popen[bytes], lines: queue.Queue[bytes | None]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    def _pump_stderr(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            self._stderr.append(line.decode("utf-8", "replace").rstrip())

    def stderr_tail(self, n: int = 5) -> str:
        lines = list(self._stderr)[-n:]
        return " | ".join(lines)

    def _exited(self, during: str) -> AdapterFailure:
        assert self.proc is not None
        try:
            status = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            status = None
        time.sleep(0.05)  # let the stderr pump catch the last words
        tail = self.stderr_tail()
        said = f"; its stderr ends: {tail}" if tail else ""
        how = f"exited with status {status}" if status is not None else "closed its stdout"
        return AdapterFailure(f"adapter {how} {during}{said}")

    def request(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send one request and wait for the answer with the same id."""
        if self.proc is None or self.proc.stdin is None:
            raise AdapterFailure("adapter is not running")
        data = (json.dumps(message, ensure_ascii=True, allow_nan=False) + "\n").encode("ascii")
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._exited("before reading this request") from None
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AdapterFailure(f"no answer within {timeout:g}s") from None
        if line is None:
            raise self._exited("while answering this request")
        try:
            reply = json.loads(line)
        except json.JSONDecodeError:
            shown = line[:200].decode("utf-8", "replace")
            raise AdapterFailure(
                f"protocol: adapter wrote a line that is not JSON: {shown!r}"
            ) from None
        if not isinstance(reply, dict) or reply.get("id") != message["id"]:
            raise AdapterFailure(
                f"protocol: expected an object with id {message['id']}, got {line[:200]!r}"
            )
        return reply

    def stop(self, kill: bool = False) -> None:
        """Close stdin (the normal end) and wait briefly; then, or at once with `kill` (a hung
        or broken adapter), end the adapter's process group."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            if proc.stdin is not None:
                proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=0 if kill else 2)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # its own session: see start()
            except (ProcessLookupError, PermissionError, AttributeError):
                proc.kill()
            proc.wait()


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


def judge(case: Case, reply: dict[str, Any], duration: float = 0.0) -> CheckResult:
    """One case's result from the adapter's answer line."""

    def result(outcome: Outcome, reason: str = "", got: Any = None) -> CheckResult:
        return case.result(outcome, reason, got, duration)

    answer = {k: reply[k] for k in ("ok", "error", "message") if k in reply}
    if reply.get("unsupported") is True:
        return result(Outcome.SKIP, f"unsupported by the adapter: {case.function}")
    if ("ok" in reply) == ("error" in reply):
        return result(
            Outcome.FAIL, "protocol: an answer has exactly one of ok, error, unsupported", reply
        )
    if "ok" in case.expect:
        if "error" in reply:
            return result(Outcome.FAIL, f"expected success, got error {reply['error']}", answer)
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
) -> tuple[list[CheckResult], RunInfo]:
    """Send every case to the adapter, one at a time, in order.

    A timeout, crash or protocol break fails that case and restarts the adapter (at most
    `restarts` times); after that, or when the adapter cannot start, every remaining case
    fails with the reason.
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
    try:
        for n, case in enumerate(cases, start=1):
            if dead is not None:
                res = case.result(Outcome.FAIL, f"not run: {dead}")
            else:
                began = time.monotonic()
                try:
                    reply = adapter.request(
                        {"id": n, "function": case.function, "input": case.input}, timeout
                    )
                    res = judge(case, reply, time.monotonic() - began)
                except AdapterFailure as exc:
                    res = case.result(Outcome.FAIL, str(exc), None, time.monotonic() - began)
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
    return results, info


# ------------------------------------------------------------------ export


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return f"array<{_shape(value, 0)}>" if value else "array"
    return "object"


_MAX_KEYS: Final = 8  # wider objects (cards, schemas) are shown as "object"


def _shape(values: Sequence[Any], depth: int) -> Any:
    """A compact description of the JSON values seen: type names joined by "|", objects
    expanded (optional keys marked "?") down to `depth` levels."""
    dicts = [x for x in values if isinstance(x, dict)]
    names = sorted({_type_name(x) for x in values if not isinstance(x, dict)})
    if any(n.startswith("array<") for n in names):  # an empty array says nothing more
        names = [n for n in names if n != "array"]
    if dicts:
        keys = sorted({k for d in dicts for k in d})
        if depth > 0 and len(keys) <= _MAX_KEYS:
            obj = {
                (k if all(k in d for d in dicts) else k + "?"): _shape(
                    [d[k] for d in dicts if k in d], depth - 1
                )
                for k in keys
            }
            return obj if not names else {"anyOf": [obj, "|".join(names)]}
        names = sorted({*names, "object"})
    return "|".join(names) if names else "unknown"


def describe_functions(cases: Sequence[Case]) -> list[dict[str, Any]]:
    """Each protocol function with the input and answer shapes its cases show, and the error
    codes they expect. Functions come from the generated FUNCTIONS and the kit's extras, so a
    function with no case still appears (with unknown shapes)."""
    out = []
    for fn in all_functions():
        mine = [c for c in cases if c.function == fn]
        vectors = [c for c in mine if any(i.startswith("vectors.") for i in c.check_ids)]
        oks = [c.expect["ok"] for c in mine if "ok" in c.expect]
        out.append(
            {
                "name": fn,
                "source": "vectors" if fn in v.FUNCTIONS else "kit",
                "vector_cases": len(vectors),
                "input": _shape([c.input for c in mine], 2) if mine else "unknown",
                "ok": _shape(oks, 2) if oks else "unknown",
                "errors": sorted({c.expect["error"] for c in mine if "error" in c.expect}),
            }
        )
    return out


def export_vectors(directory: str | Path, seed: int = 0) -> dict[str, Any]:
    """Copy the shipped vector files, meta-schema.json and schemas.json into `directory` and
    write index.json beside them. Returns the index."""
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    root = resources.files(v)
    files = []
    for name in [*v.VECTOR_FILES, "meta-schema.json", "schemas.json"]:
        data = root.joinpath(name).read_bytes()
        (target / name).write_bytes(data)
        entry: dict[str, Any] = {"name": name, "sha256": hashlib.sha256(data).hexdigest()}
        if name in v.VECTOR_FILES:
            entry["cases"] = len(json.loads(data)["cases"])
        files.append(entry)
    # Shapes of the kit's own functions come from a few drawn cases (they have no vectors).
    kit_only = [c for c in generated_cases(seed, 5) if c.function not in v.FUNCTIONS]
    index = {
        "format": "gatespec-vectors-index/1",
        "spec_version": SPEC_VERSION,
        "spec_hash": SPEC_HASH,
        "meta_schema": "meta-schema.json",
        "schemas": "schemas.json",
        "vector_files": list(v.VECTOR_FILES),
        "files": files,
        "functions": describe_functions([*vector_cases(), *kit_only]),
    }
    (target / "index.json").write_text(
        json.dumps(index, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return index
