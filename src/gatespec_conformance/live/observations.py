"""What layer 2 reads from the IUT's answers and expects of them: a browse answer parsed
(cards, prompt lines, each card's text as carried), a walk of the tree, and the catalog
the fixture's tools must give (which are admitted, under which ids)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final

from gatespec_conformance.fixtures.catalog import FixtureTool
from gatespec_conformance.live import readings
from gatespec_conformance.live.client import CallResult
from gatespec_conformance.live.payloads import judge_answer
from gatespec_conformance.oracle.tool_ids import make_tool_id, seed_id_candidates
from gatespec_conformance.rules import Finding, seed_value
from gatespec_surface.grammars import TOOL_ID_MAX_LENGTH, TOOL_ID_RE, is_name
from gatespec_surface.requirements import AMENDMENTS

# Seed 000 §1.1 caps a tool_id at 240 characters (AM-TOOLID-CAP: 235, the grammar's maximum).
SEED_TOOL_ID_MAX: Final = int(seed_value(("S000-TOOLID-MAX-LENGTH",), 240))


@dataclass(frozen=True)
class BrowseObs:
    """One tool_browse call: its arguments, the raw call, and the parsed parts."""

    label: str
    args: dict[str, Any]
    call: CallResult
    cards: list[dict[str, Any]] | None  # the cards of the answer (None: the browse failed)
    lines: list[str]  # the text content, split at "\n"
    problem: str | None  # why the response is unusable, if it is
    # The spec's rules on how the answer is carried (structuredContent, BrowseResult).
    findings: tuple[Finding, ...] = ()
    # The prompt-facing text: one line per card (after a preamble line), when the answer
    # has one; None when it only carries the cards' JSON.
    prompt: str | None = None
    card_texts: tuple[str, ...] = ()  # each card as the answer carries it (line, else JSON)

    @property
    def text(self) -> str:
        return self.call.text

    @property
    def prompt_lines(self) -> list[str] | None:
        """The card lines of the prompt text (the preamble left out), or None."""
        if self.prompt is None or self.cards is None:
            return None
        return self.prompt.split("\n")[-len(self.cards) :] if self.cards else []


@dataclass
class Walk:
    """The whole path tree from "/": every node browsed, every tool card seen."""

    nodes: dict[str, BrowseObs] = field(default_factory=dict)
    tool_cards: dict[str, dict[str, Any]] = field(default_factory=dict)
    parent: dict[str, str] = field(default_factory=dict)  # tool id -> the path listing it
    truncated: bool = False


@dataclass(frozen=True)
class ExpectedCatalog:
    """The fixture's tools as the IUT must identify them. At --level spec one id each (the
    fixture's namespace, AM-NAMESPACE-FROM-CONFIG); at --level seed any id seed 000 §1.2-§1.4
    allows (a namespace inferred from the name, or the server's, with the name verbatim)."""

    namespace: str
    ids: dict[str, str]  # fixture tool name -> the id to address it by
    candidates: dict[str, frozenset[str]] = field(default_factory=dict)  # name -> allowed ids

    def allowed(self, name: str) -> frozenset[str]:
        return self.candidates.get(name) or frozenset({self.ids[name]})


# AM-NAME-MAPPING (when the spec has it): a name the name grammar rejects is mapped, not dropped.
NAME_MAPPING: Final = "AM-NAME-MAPPING" in AMENDMENTS


def admitted(tool: FixtureTool, level: str) -> bool:
    """Whether the IUT must list this fixture tool: a well-formed one always; at --level spec
    also one whose name only the mapping of AM-NAME-MAPPING makes an id of."""
    if tool.expect == "admit":
        return True
    mapped = NAME_MAPPING and tool.expect == "exclude" and not is_name(tool.name)
    return level == "spec" and mapped


def valid_id(tool_id: str, cap: int) -> bool:
    return len(tool_id) <= cap and TOOL_ID_RE.fullmatch(tool_id) is not None


def expected_catalog(
    namespace: str, tools: tuple[FixtureTool, ...], level: str, listed: set[str]
) -> ExpectedCatalog:
    ids: dict[str, str] = {}
    candidates: dict[str, frozenset[str]] = {}
    for tool in tools:
        if level == "seed":
            allowed = {
                i
                for i in seed_id_candidates(tool.name, tool.schema_dict, tool.version, namespace)
                if valid_id(i, SEED_TOOL_ID_MAX)
            }
            if allowed:
                candidates[tool.name] = frozenset(allowed)
                ids[tool.name] = min(allowed & listed or allowed)
            continue
        tool_id = make_tool_id(namespace, tool.name, tool.schema_dict, tool.version)
        if valid_id(tool_id, TOOL_ID_MAX_LENGTH):  # else no tool_id can carry it: excluded
            ids[tool.name] = tool_id
    return ExpectedCatalog(namespace, ids, candidates)


def _prompt_of(cards: list[dict[str, Any]], text: str) -> bool:
    """Whether `text` is one line per card (after an optional preamble), each naming its card."""
    lines = text.split("\n")
    if len(lines) not in (len(cards), len(cards) + 1):
        return False
    tail = lines[-len(cards) :] if cards else []
    return all(str(c.get("id")) in line for c, line in zip(cards, tail, strict=True))


def _json_texts(text: str, cards: list[dict[str, Any]]) -> dict[int, str]:
    """Each card's JSON exactly as it appears in `text` (position in cards -> substring)."""
    decoder = json.JSONDecoder()
    out: dict[int, str] = {}
    start = text.find("{")
    while start != -1 and len(out) < len(cards):
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            value, end = None, start
        for i, card in enumerate(cards):
            if i not in out and value == card:
                out[i] = text[start:end]
                break
        start = text.find("{", start + 1)
    return out


def _carried(
    cards: list[dict[str, Any]], call: CallResult, document: Any
) -> tuple[str | None, tuple[str, ...]]:
    """(the prompt text, each card as sent). The prompt text is the text content when it is
    one line per card, else a string of the answer that is; without one, a card is measured
    on its JSON text as sent (or, in structuredContent only, compact JSON)."""
    strings = (
        [v for v in document.values() if isinstance(v, str)] if isinstance(document, dict) else []
    )
    _, carrier = call.document()
    echoed = set(call.arguments.values()) if isinstance(call.arguments, dict) else set()
    strings = [v for v in strings if v not in echoed]  # the request echoed back is no prompt
    # JSON text is no prompt; a text item of prose beside it may be
    texts = [*readings.prose(call.texts), *strings]
    if carrier != "text":
        texts.insert(0, call.text)
    for candidate in texts:
        if _prompt_of(cards, candidate):
            lines = candidate.split("\n")[-len(cards) :] if cards else []
            return candidate, tuple(lines)
    found = _json_texts(call.text, cards)
    compact = [json.dumps(c, ensure_ascii=False, separators=(",", ":")) for c in cards]
    return None, tuple(found.get(i, compact[i]) for i in range(len(cards)))


def parse_browse(label: str, args: dict[str, Any], call: CallResult) -> BrowseObs:
    lines = call.text.split("\n") if call.result is not None else []
    if call.result is None:
        return BrowseObs(label, args, call, None, lines, f"no result: {call.error}")
    if call.result.is_error:
        return BrowseObs(label, args, call, None, lines, f"error result: {call.text[:300]}")
    document, findings = judge_answer(call, "tool_browse")
    cards = readings.cards_of(document)
    if cards is None:
        why = (
            "the answer holds no list of cards (a list, an object wrapping one, or a card; "
            f"in structuredContent or JSON text); it sent: {readings.sent(call)!r}"
        )
        return BrowseObs(label, args, call, None, lines, why, tuple(findings))
    prompt, texts = _carried(cards, call, document)
    return BrowseObs(label, args, call, cards, lines, None, tuple(findings), prompt, texts)
