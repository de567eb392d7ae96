"""How the kit reads what an implementation answers: every representation a seed permits.

The seeds fix what a meta-tool answer says, not how MCP carries it. Every layer-2 family reads
answers through this module, so one reading holds for all of them (docs/conformance.md,
"How answers are read", has the table: family, the seed sentence, the representations):

* `answer`: the answer as JSON, from ``structuredContent`` or from the text content (the text
  holding JSON; several items each holding one JSON value, read as a list; or the one item
  holding a JSON document beside items of prose, such as the prompt lines);
* `cards_of`: the cards of a tool_browse answer. Seed 000 §4.2: "tool_browse(query|path) —
  returns list[ChoiceCard]": a bare list, or an object wrapping one (``cards``, or the one
  member that is a list of cards, such as an SDK's ``result``); §3.3's leaf "returns a single
  card", so one card object reads as a list of one;
* `hydrated`: the schemas of a hydration. Seed 000 §4.3 routes tool_hydrate through
  ``Catalog.hydrate(item_id) -> HydrationResult``; the seeds name the schema fields
  ``inputSchema`` (§4.1), ``args_schema`` (§2.2, §7), ``input_schema`` (seed 002's example)
  and ``outputSchema`` / ``output_schema`` (§2.2, seed 002); a whole hydration result may nest
  them (``{"item": {...}, "args_schema": ...}``). The shallowest object carrying one is read;
  its fields must agree;
* `selectors`: the ``selector`` values to try on tool_view, in the form the implementation's
  own declared inputSchema takes (a string, an object, or none at all): seed 000 §4.2 defers
  tool_view's selector to #34;
* `error_payload`: a §3.4 payload, any other fields allowed (its judgement is payloads.py's);
* `search_hits`, `hit_operation`, `batch_items`, `call_error_code`: the hits of a search-profile `search` and the operation each
  names. Seed 003 Decision 3: search "returns operation names, namespaces, types, and short
  descriptions": no container and no field names, so the hits may be a bare list, the spec's
  ``hits`` or an object's one list of objects (``operations``, ``results``), and a hit's
  operation may sit under ``operation`` (§4's `call` takes ``{ operation: "/fs/readFile" }``)
  or ``name`` (its "operation names"); batch's items likewise (Decision 4 "returns an array of
  results"), and an error's code under whichever member holds it (Decision 4 "a `CallError`
  with the typed `details` payload": no field named).

Nothing here decides pass or fail: a reading gives the value and says where it was found;
the families judge it. A reading never invents content: what no permitted form carries is
None, and the family fails with what was sent (`sent`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

if TYPE_CHECKING:
    from gatespec_conformance.live.client import CallResult

__all__ = [
    "BATCH_OUTPUT_KEYS",
    "HIT_OPERATION_KEYS",
    "INPUT_SCHEMA_KEYS",
    "OMITTED",
    "OUTPUT_SCHEMA_KEYS",
    "SENT_MAX",
    "STRING_SELECTORS",
    "Hydrated",
    "answer",
    "answer_of",
    "cards_of",
    "batch_items",
    "call_error_code",
    "error_payload",
    "hit_operation",
    "prose",
    "search_hits",
    "hydrated",
    "selectors",
    "sent",
    "view_arguments",
]

SENT_MAX: Final = 500  # characters of what the IUT sent, quoted when a reading finds nothing
# The schema fields the seeds name, in the order they are preferred when several are present.
INPUT_SCHEMA_KEYS: Final = ("inputSchema", "input_schema", "args_schema")
OUTPUT_SCHEMA_KEYS: Final = ("outputSchema", "output_schema")
_NEST_DEPTH: Final = 3  # how deep a whole hydration result may nest its schema


# ------------------------------------------------------------------ the answer


def answer_of(structured: Any, texts: Iterable[str]) -> tuple[Any, str]:
    """(the answer as JSON, its carrier): "structured" for structuredContent, "text" for JSON
    in the text content, ("", None) when neither holds JSON."""
    if structured is not None:
        return structured, "structured"
    parts = list(texts)
    try:
        return json.loads("\n".join(parts)), "text"
    except ValueError:
        pass
    if len(parts) > 1:
        values = [_json_or_none(p) for p in parts]
        if all(v is not None for v in values):  # one JSON value per item (an SDK's list)
            return values, "text"
        documents = [v for v in values if isinstance(v, dict | list)]
        if len(documents) == 1:  # one JSON item beside prose (such as the prompt lines)
            return documents[0], "text"
    return None, ""


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def prose(texts: Iterable[str]) -> list[str]:
    """The text items that are not JSON documents (where a prompt-facing form can be)."""
    return [t for t in texts if not isinstance(_json_or_none(t), dict | list)]


def answer(call: CallResult) -> tuple[Any, str]:
    """`answer_of` a tools/call result ((None, "") when there is no result)."""
    if call.result is None:
        return None, ""
    return answer_of(call.structured, call.texts)


def sent(call: CallResult) -> str:
    """The first SENT_MAX characters the IUT actually sent (its text content, else its
    structuredContent as JSON, else the protocol error): a report's "got" when no reading
    found what a check needs."""
    if call.result is None:
        return f"(no result) {call.error}"[:SENT_MAX]
    text = call.text
    if not text and call.structured is not None:
        text = json.dumps(call.structured, ensure_ascii=False)
    return text[:SENT_MAX]


# ------------------------------------------------------------------ cards


def _is_card(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("id"), str)


def _card_list(value: Any) -> bool:
    return isinstance(value, list) and all(_is_card(c) for c in value)


def cards_of(document: Any) -> list[dict[str, Any]] | None:
    """The cards of a tool_browse answer, or None when it carries no list of cards: a bare
    list of cards; an object whose ``cards`` is one, else whose only member that is a list of
    cards (an empty list counts only as ``cards`` or as the object's only list); a single card
    object (§3.3's leaf)."""
    if _card_list(document):
        return list(document)
    if not isinstance(document, dict):
        return None
    if "cards" in document:
        found = document["cards"]
        return list(found) if _card_list(found) else None
    lists = [v for v in document.values() if isinstance(v, list)]
    filled = [v for v in lists if v and _card_list(v)]
    if len(filled) == 1:
        return list(filled[0])
    if filled:
        return None  # two lists of cards: no one answer
    if _is_card(document) and "name" in document:
        return [document]
    if len(lists) == 1 and lists[0] == []:
        return []
    return None


# ------------------------------------------------------------------ hydration


@dataclass(frozen=True)
class Hydrated:
    """The schemas one hydration answer carries, and where."""

    input_schema: Any = None
    output_schema: Any = None
    where: str = ""  # "args_schema", "item.args_schema", ...: the field the input was read at
    # A field of the same object that carries another input schema (the answer says two things).
    disagrees: str = ""
    found: bool = False


def _objects(document: Any, prefix: str = "", depth: int = 0) -> Iterator[tuple[str, Any]]:
    """(dotted path, object) breadth-first: the document, then the objects it nests."""
    level = [(prefix, document)]
    while level and depth <= _NEST_DEPTH:
        nxt: list[tuple[str, Any]] = []
        for path, obj in level:
            if not isinstance(obj, dict):
                continue
            yield path, obj
            for key, value in obj.items():
                if isinstance(value, dict) and key not in (*INPUT_SCHEMA_KEYS, *OUTPUT_SCHEMA_KEYS):
                    nxt.append((f"{path}{key}.", value))
        level = nxt
        depth += 1


def hydrated(document: Any) -> Hydrated:
    """The input and output schemas of a hydration answer: read at the shallowest object that
    carries a schema field the seeds name; there, every input-schema field must say the same."""
    for path, obj in _objects(document):
        keys = [k for k in INPUT_SCHEMA_KEYS if k in obj]
        if not keys:
            continue
        first = obj[keys[0]]
        other = next((k for k in keys[1:] if obj[k] != first), "")
        output_key = next((k for k in OUTPUT_SCHEMA_KEYS if k in obj), None)
        output = obj[output_key] if output_key else _output_anywhere(document)
        return Hydrated(first, output, path + keys[0], path + other if other else "", True)
    return Hydrated(output_schema=_output_anywhere(document))


def _output_anywhere(document: Any) -> Any:
    for _, obj in _objects(document):
        for key in OUTPUT_SCHEMA_KEYS:
            if key in obj:
                return obj[key]
    return None


# ------------------------------------------------------------------ tool_view's selector

# String selectors tried when the IUT declares a string (gatespec's "all", then forms other
# designs use): the seeds leave the syntax to #34.
STRING_SELECTORS: Final = ("all", "", "lines:1-3", "json:", "bytes:0-15")


def _validator(schema: Any) -> Draft202012Validator | None:
    if not isinstance(schema, dict):
        return None
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError:
        return None
    return Draft202012Validator(schema)


def _samples(schema: Any, depth: int = 0) -> list[Any]:
    """A few values an implementation's own schema describes (const, enum, default, examples,
    then small values of each declared type); not all of them need to be valid."""
    if not isinstance(schema, dict) or depth > 3:
        return ["all", "", {}]
    out: list[Any] = []
    if "const" in schema:
        out.append(schema["const"])
    out += list(schema.get("enum") or [])[:6]
    if "default" in schema:
        out.append(schema["default"])
    out += list(schema.get("examples") or [])[:3]
    for branch in (*schema.get("anyOf", ()), *schema.get("oneOf", ())):
        out += _samples(branch, depth + 1)
    types = schema.get("type")
    types = [types] if isinstance(types, str) else list(types or [])
    if not types and "properties" in schema:
        types = ["object"]
    if not types and not out:  # no type declared: any value
        types = ["string", "object"]
    for kind in types:
        if kind == "string":
            out += list(STRING_SELECTORS)
        elif kind == "object":
            out += _object_samples(schema, depth)
        elif kind in ("integer", "number"):
            out += [0, 1]
        elif kind == "boolean":
            out += [True, False]
        elif kind == "array":
            out.append([])
        elif kind == "null":
            out.append(None)
    return out


def _object_samples(schema: dict[str, Any], depth: int) -> list[Any]:
    """{} and an object filling the required properties (each with its first sample), then one
    per sample of each property that has an enum or const (a kind of selection)."""
    props: dict[str, Any] = (
        schema["properties"] if isinstance(schema.get("properties"), dict) else {}
    )
    required = [p for p in schema.get("required") or [] if isinstance(p, str)]
    base: dict[str, Any] = {}
    for name in required:
        values = _samples(props.get(name), depth + 1)
        base[name] = values[0] if values else ""
    out: list[Any] = [{}, dict(base)] if required else [{}]
    for name, sub in props.items():
        if not isinstance(sub, dict):
            continue
        if "enum" in sub or "const" in sub:
            out += [{**base, name: v} for v in _samples(sub, depth + 1)[:6]]
    return out


def selectors(declared: Any) -> list[Any]:
    """The selector values to try on tool_view, valid against the `declared` inputSchema of
    tool_view (its ``selector`` property), each once; `OMITTED` when the selector may be left
    out. With no usable declaration, the string selectors."""
    if not isinstance(declared, dict):
        return list(STRING_SELECTORS)
    props: dict[str, Any] = (
        declared["properties"] if isinstance(declared.get("properties"), dict) else {}
    )
    if "selector" not in props:  # none declared: leave it out (or guess, if allowed)
        closed = declared.get("additionalProperties") is False
        return [OMITTED] if closed else [OMITTED, *STRING_SELECTORS]
    schema = props.get("selector")
    required = "selector" in (declared.get("required") or [])
    out: list[Any] = [] if required else [OMITTED]
    check = _validator(schema) if schema is not None else None
    seen: list[str] = []
    for value in _samples(schema):
        key = json.dumps(value, sort_keys=True)
        if key in seen or (check is not None and not check.is_valid(value)):
            continue
        seen.append(key)
        out.append(value)
    if not out:
        out = [OMITTED] if "selector" not in props else list(STRING_SELECTORS)
    return out


class _Omitted:
    """The selector left out of the arguments."""

    def __repr__(self) -> str:
        return "(no selector)"


OMITTED: Final = _Omitted()


def view_arguments(handle: Any, selector: Any) -> dict[str, Any]:
    """tool_view's arguments for one selector (OMITTED: none)."""
    return {"handle": handle} if selector is OMITTED else {"handle": handle, "selector": selector}


# ------------------------------------------------------------------ errors


def error_payload(document: Any) -> dict[str, Any] | None:
    """A §3.4 error payload: a JSON object (its fields are judged by payloads.judge_error;
    fields §3.4 does not list are allowed by the seed, closed only by AM-ERROR-PAYLOAD-CLOSED).
    """
    return document if isinstance(document, dict) else None


# ------------------------------------------------------------------ a proxy's pass-through

# Seed 000 §4.1 (transparent proxy): "the proxy looks up the upstream schema ..., validates args,
# calls upstream, and returns the result"; seed 002: "Every gateway / proxy meta-tool returns
# either a ResultEnvelope or a typed GatewayError". Both readings are the seeds': an envelope
# (judged as one), or the upstream's own CallToolResult passed through unchanged.
_ENVELOPE_KEYS: Final = frozenset({"status", "summary", "facts", "artifacts", "error"})


def _part(part: Any) -> dict[str, Any]:
    """A content part's fields that carry the result (annotations and _meta aside)."""
    dumped = (
        part.model_dump(by_alias=True, exclude_none=True) if hasattr(part, "model_dump") else {}
    )
    return {k: v for k, v in dumped.items() if k not in ("annotations", "_meta", "meta")}


def passed_through(call: CallResult, upstream: Any) -> list[str] | None:
    """None when `call`'s answer reads as a ResultEnvelope or a §3.4 error payload (it is judged
    as one), or there is no result; else how it differs from `upstream` (the upstream's own
    CallToolResult): its content parts, structuredContent and isError, [] when all agree."""
    if call.result is None or upstream is None:
        return None
    document, _ = call.document()
    if isinstance(document, dict) and _ENVELOPE_KEYS & set(document):
        return None
    got = call.result
    differs = []
    if [_part(p) for p in got.content] != [_part(p) for p in upstream.content]:
        differs.append("its content is not the upstream's")
    if got.structured_content != upstream.structured_content:
        differs.append("its structuredContent is not the upstream's")
    if bool(got.is_error) != bool(upstream.is_error):
        differs.append(f"isError {bool(got.is_error)}, the upstream's {bool(upstream.is_error)}")
    return differs


# ------------------------------------------------------------------ search (seed 003)

# Where a hit names its operation: the spec's SearchHit field first (AM-SEARCH-HITS), then the
# seed's own word for it (Decision 3 "operation names").
HIT_OPERATION_KEYS: Final = ("operation", "name")


def _object_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(x, dict) for x in value)


def _one_list(document: Any, key: str) -> tuple[list[dict[str, Any]] | None, str | None]:
    """(a list of objects an answer holds, the member that held it: None for a bare list), or
    (None, None): a bare list of objects; an object's `key` (the spec's member) when it is one;
    else the object's only member that is a list of objects (two lists are no one answer)."""
    if _object_list(document):
        return list(document), None
    if not isinstance(document, dict):
        return None, None
    if key in document:
        found = document[key]
        return (list(found), key) if _object_list(found) else (None, None)
    lists = [(k, v) for k, v in document.items() if isinstance(v, list)]
    if len(lists) == 1 and _object_list(lists[0][1]):
        return list(lists[0][1]), lists[0][0]
    return None, None


def search_hits(document: Any) -> tuple[list[dict[str, Any]] | None, str | None]:
    """(the hits of a search answer, the member that held them: None for a bare list), or
    (None, None) when it carries no list of hits: a bare list of objects; an object's ``hits``
    (the spec's SearchResult) when it is one; else the object's only member that is a list of
    objects (``operations``; two such lists are no one answer)."""
    return _one_list(document, "hits")


def batch_items(document: Any) -> tuple[list[dict[str, Any]] | None, str | None]:
    """(the items of a batch answer, the member that held them), as `search_hits`: seed 003
    Decision 4 "returns an array of results" names no member; the spec's is ``results``."""
    return _one_list(document, "results")


# Where a batch item carries its call's output: the spec's BatchItemResult field, MCP's
# casing of it, and seed 003's own word (Decision 1: call "Returns the operation's output").
BATCH_OUTPUT_KEYS: Final = ("structured_content", "structuredContent", "output")
_CODE_TOKEN: Final = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*")


def call_error_code(payload: Any) -> Any:
    """The code of a search-profile error payload (seed 003 Decision 4 "a `CallError` with the
    typed `details` payload", Decision 5 "gets `FORBIDDEN`"; the seed names no field for the
    code): §3.4's ``error`` when it is text, else the payload's one top-level member whose
    value is a code (upper snake case, as ``FORBIDDEN``), else None (none, or several)."""
    if not isinstance(payload, dict):
        return None
    if isinstance(payload.get("error"), str):
        return payload["error"]
    codes = [v for v in payload.values() if isinstance(v, str) and _CODE_TOKEN.fullmatch(v)]
    return codes[0] if len(codes) == 1 else None


def hit_operation(hit: dict[str, Any]) -> Any:
    """The operation a hit names (HIT_OPERATION_KEYS, first present), or None."""
    return next((hit[k] for k in HIT_OPERATION_KEYS if k in hit), None)
