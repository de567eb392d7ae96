"""The rules of seed 000 §2.1-§2.2 for one ChoiceCard, each judged on its own and charged to its
own requirement, plus the spec's additions (tag characters, required fields, cost_hint >= 0),
which apply at --level spec only.

Field names, the permitted set, the kinds and the banned names are the spec's (generated
models and budgets, which state the seed's lists); the grouping of banned names into §2.2's
four kinds is the seed's own list.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final

from gatespec_conformance.functions.families import banned_field_requirement
from gatespec_conformance.oracle.seed_answers import seed_stringified
from gatespec_conformance.oracle.tool_ids import join_tool_id
from gatespec_conformance.rules import SPEC, Finding, Rule, with_facts
from gatespec_surface.budgets import BANNED_FIELDS, BANNED_STRINGIFIED, CACHE_MARKER_ID
from gatespec_surface.grammars import GRAMMARS, TOOL_ID_PATTERN, is_path
from gatespec_surface.models import ChoiceCard
from gatespec_surface.schemas import MODEL_SCHEMAS
from gatespec_surface.validators import LINE_BREAKS

__all__ = ["RULES", "banned_in_text", "card_findings"]

_SCHEMA: Final = MODEL_SCHEMAS["ChoiceCard"]
_PROPS: Final = _SCHEMA["properties"]
_PERMITTED: Final = frozenset(ChoiceCard.model_fields)
_KINDS: Final = tuple(_PROPS["kind"]["enum"])
_NAME_MAX: Final[int] = _PROPS["name"]["maxLength"]
_TAGS_MAX: Final[int] = _PROPS["tags"]["maxItems"]
_TAG_MAX: Final = GRAMMARS["tag"].max_length or 24
_TAG_RE: Final = GRAMMARS["tag"].pattern
_REQUIRED: Final = tuple(_SCHEMA.get("required", ()))


def _rule(cause: str, *requirements: str, **kw: Any) -> Rule:
    return Rule(cause, requirements, **kw)


RULES: Final = {
    "fields": _rule("carries a field §2.1 does not permit", "CARD-ALLOWED-FIELDS"),
    "id": _rule("the id is not a tool_id", "CARD-ID-IS-TOOLID"),
    # Seed 000 §5.4: the marker is "a real ChoiceCard (kind="internal")" with id
    # __cache_breakpoint__, so an internal card's id is not a tool_id; that it is a browse path
    # (or the marker) is AM-BROWSE-TREE's, judged at --level spec only.
    "internal_id": _rule(
        "an internal card's id is neither a browse path nor the marker",
        levels=SPEC,
        amended_by=("AM-BROWSE-TREE",),
    ),
    "name": _rule(f"the name is not text of at most {_NAME_MAX} characters", "CARD-NAME-MAX-64"),
    "description": _rule("the description is not one line of text", "CARD-DESCRIPTION-SINGLE-LINE"),
    "tags_sorted": _rule("the tags are not sorted", "CARD-TAGS-SORTED"),
    "tags_unique": _rule("a tag repeats", "CARD-TAGS-DEDUPLICATED"),
    "tags_max": _rule(f"more than {_TAGS_MAX} tags", "CARD-TAGS-MAX-5"),
    "tag_length": _rule(f"a tag is longer than {_TAG_MAX} characters", "CARD-TAG-MAX-24-CHARS"),
    "kind": _rule(f"the kind is not one of {', '.join(_KINDS)}", "CARD-KIND-ENUM"),
    "namespace": _rule("the namespace is not the id's", "CARD-NAMESPACE-MATCHES-ID"),
    "has_schema": _rule("has_schema is not a boolean", "CARD-NO-SCHEMAS"),
    "score": _rule("score is not a number", "CARD-SCORE-JSON-ONLY"),
    "cost_hint": _rule("cost_hint is not a number", "CARD-COST-HINT-RENDER-POSITIVE"),
    "side_effects": _rule("side_effects is not a boolean", "CARD-SIDE-EFFECTS-RENDER-TRUE"),
    # The spec's own additions: no seed states them and no amendment records them.
    "tag_charset": with_facts(
        _rule(
            "a tag breaks the tag grammar",
            levels=SPEC,
            spec_only="grammars.yaml `tag` (lower case, [a-z0-9_-]); seed 000 §2.1 bounds length "
            "only",
        ),
        "S000-TAG-ANY-TEXT",
    ),
    "required": _rule(
        "a field the spec requires is missing",
        levels=SPEC,
        spec_only="models.yaml ChoiceCard.required; seed 000 §2.1 lists permitted fields",
    ),
    "cost_negative": with_facts(
        _rule(
            "cost_hint is negative",
            levels=SPEC,
            spec_only="models.yaml cost_hint minimum 0; seed 000 §2.1 says only 'float'",
        ),
        "S000-COST-HINT-NO-MINIMUM",
    ),
    "name_empty": _rule(
        "the name is empty",
        levels=SPEC,
        spec_only="models.yaml name minLength 1",
    ),
}
_BANNED_RULES: Final = {
    req: _rule("carries banned content (§2.2)", req)
    for req in (
        "CARD-NO-SCHEMAS",
        "CARD-NO-EXAMPLES",
        "CARD-NO-METADATA-MAPS",
        "CARD-NO-TRANSPORT-IDENTIFIERS",
        "CARD-ALLOWED-FIELDS",
    )
}
_NOT_SCANNED: Final = frozenset({"id", "namespace", "score"})  # identity fields, numbers


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for k, v in value.items() for s in (str(k), *_strings(v))]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


def banned_in_text(text: str) -> list[Finding]:
    """Stringified banned fields in `text` (budgets.yaml banned.stringified), each charged to
    the §2.2 kind it belongs to. One the seed's own wording does not ban (no §2.2 field given a
    value of its kind: oracle/seed_answers.seed_stringified) is judged at --level spec only."""
    out = []
    seed_found = seed_stringified(text)
    for pattern in BANNED_STRINGIFIED:
        found = pattern.search(text)
        if found is not None:
            rule = _BANNED_RULES[banned_field_requirement(found.group(0))]
            if seed_found is None:
                rule = replace(
                    rule,
                    levels=SPEC,
                    spec_only="budgets.yaml banned.stringified; seed 000 §2.2 bans the named "
                    "fields given values of their kind",
                )
            out.append(
                Finding(rule, f"{found.group(0)!r} stringifies a banned field", found.group(0))
            )
    return out


def _id_ok(card_id: Any, kind: Any) -> bool:
    if not isinstance(card_id, str):
        return False
    if kind == "internal":
        return is_path(card_id) or card_id == CACHE_MARKER_ID
    m = re.fullmatch(TOOL_ID_PATTERN, card_id)
    return m is not None and join_tool_id(m.groupdict()) == card_id


def _tags(card: Mapping[str, Any], out: list[Finding]) -> None:
    tags = card.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        out.append(Finding(RULES["tags_max"], "tags is not a list of text", tags))
        return
    if len(tags) > _TAGS_MAX:
        out.append(Finding(RULES["tags_max"], f"{len(tags)} tags", tags))
    if tags != sorted(tags):
        out.append(Finding(RULES["tags_sorted"], "", tags))
    if len(set(tags)) != len(tags):
        out.append(Finding(RULES["tags_unique"], "", tags))
    for tag in tags:
        if len(tag) > _TAG_MAX:
            out.append(Finding(RULES["tag_length"], f"{len(tag)} characters", tag))
        elif re.fullmatch(_TAG_RE, tag) is None:
            out.append(Finding(RULES["tag_charset"], repr(tag), tag))


def card_findings(card: Any) -> list[Finding]:
    """Every rule `card` breaks, one finding per rule (and per offending tag or field)."""
    if not isinstance(card, Mapping):
        return [Finding(RULES["fields"], f"a card is an object, not {type(card).__name__}", card)]
    out: list[Finding] = []
    for key in card:
        if key not in _PERMITTED:
            rule = _BANNED_RULES[banned_field_requirement(key)] if key in BANNED_FIELDS else None
            out.append(Finding(rule or RULES["fields"], repr(key), {key: card[key]}))
    missing = [k for k in _REQUIRED if k not in card]
    if missing:
        out.append(Finding(RULES["required"], f"{missing}", sorted(card)))
    kind = card.get("kind")
    if "kind" in card and kind not in _KINDS:
        out.append(Finding(RULES["kind"], repr(kind), kind))
    if "id" in card and not _id_ok(card["id"], kind):
        internal = kind == "internal" and isinstance(card["id"], str)
        out.append(
            Finding(RULES["internal_id" if internal else "id"], repr(card["id"]), card["id"])
        )
    name = card.get("name", "")
    if not isinstance(name, str) or len(name) > _NAME_MAX:
        shown = len(name) if isinstance(name, str) else type(name).__name__
        out.append(Finding(RULES["name"], f"{shown} characters", name))
    elif "name" in card and not name:
        out.append(Finding(RULES["name_empty"], "", name))
    description = card.get("description", "")
    if not isinstance(description, str) or any(b in description for b in LINE_BREAKS):
        out.append(Finding(RULES["description"], "", description))
    _tags(card, out)
    card_id, namespace = card.get("id"), card.get("namespace")
    if kind != "internal" and isinstance(card_id, str) and ":" in card_id:
        if namespace != card_id.split(":", 1)[0]:
            out.append(Finding(RULES["namespace"], f"{namespace!r} for {card_id!r}", namespace))
    for key in ("has_schema", "side_effects"):
        if key in card and not isinstance(card[key], bool):
            out.append(Finding(RULES[key], repr(card[key]), card[key]))
    for key in ("score", "cost_hint"):
        value = card.get(key)
        if value is not None and not _number(value):
            out.append(Finding(RULES[key], repr(value), value))
    if _number(card.get("cost_hint")) and card["cost_hint"] < 0:
        out.append(Finding(RULES["cost_negative"], repr(card["cost_hint"]), card["cost_hint"]))
    texts = [s for k, v in card.items() if k not in _NOT_SCANNED for s in _strings(v)]
    out += banned_in_text("\x00".join(texts))
    return out
