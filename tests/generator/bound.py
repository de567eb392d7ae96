"""generator.support bound to the real spec, as the generated modules bind it, for the tests of
the support library: every table comes from the generator's own view-models of spec/.

The one generated piece used is the pydantic ChoiceCard model (datamodel-code-generator's
output, which `make check-generated` keeps in step with spec/)."""

from __future__ import annotations

import enum
import re
from dataclasses import field, make_dataclass
from pathlib import Path
from typing import Any

from gatespec_surface.models import ChoiceCard
from generator.emit import Generator
from generator.ir import load_spec
from generator.support.annotations import AnnotationMapping, HintRule
from generator.support.card_rules import CardRules
from generator.support.errors import SurfaceError
from generator.support.grammar import GrammarInfo
from generator.support.ids import NameMapping, ToolIds
from generator.support.names import AggregateNames, ResourceUris, SearchOperations, ServerKeys
from generator.support.paths import Paths
from generator.support.render import CardPart, Renderer
from generator.support.selectors import ViewSelectors
from generator.support.strategies import (
    ArgumentStrategies,
    CardBounds,
    CardStrategies,
    GrammarStrategies,
)
from generator.support.wire import WireNames

ROOT = Path(__file__).resolve().parents[2]
SPEC = load_spec(ROOT / "spec")
VIEWS = Generator(SPEC, ROOT).views

Code = enum.StrEnum("Code", {name: name for name in SPEC.error_codes})  # type: ignore[misc]
_errors = VIEWS.errors()


class Error(SurfaceError):
    codes = Code
    summaries = {c.name: c.summary for c in _errors.codes}
    message_max = _errors.message_max
    path_max = _errors.path_max
    ellipsis = SPEC.budgets.truncation.ellipsis


class CardError(Error):
    default_code = Code["CATALOG_ERROR"]


GRAMMARS: dict[str, GrammarInfo] = {
    g.name: GrammarInfo(
        name=g.name,
        summary=g.summary,
        syntax=g.syntax,
        pattern=g.regex,
        json_pattern=g.portable,
        min_length=g.min_len,
        max_length=g.cap,
        error=Code[g.error],
        captures=g.captures,
        alphabet=g.alphabet,
    )
    for g in VIEWS.grammars().grammars
}

# The ToolIdParts record: models.yaml's fields, the optional ones defaulting to None.
ToolIdParts: Any = make_dataclass(
    "ToolIdParts",
    [
        (p.name, str) if p.required else (p.name, str | None, field(default=None))
        for p in SPEC.model_shape("ToolIdParts").properties.values()
    ],
    slots=True,
)

_parsers = VIEWS.parsers()
TOOL_IDS = ToolIds(
    tool_id=GRAMMARS["tool_id"],
    namespace=GRAMMARS["namespace"],
    name=NameMapping(
        GRAMMARS["name"], _parsers.name_mapping.prefix, _parsers.name_mapping.replacement
    ),
    version=GRAMMARS["version"],
    hash8=GRAMMARS["hash8"],
    parts=ToolIdParts,
    error=Error.of,
)
PATHS = Paths(GRAMMARS["path"], Error.of)
_wire = _parsers.wire
WIRE = WireNames(
    tool_id=GRAMMARS["tool_id"],
    wire_name=GRAMMARS["wire_name"],
    escape=_wire.escape,
    escapes=_wire.escapes,
    marker=_wire.shortened.marker,
    digest_chars=_wire.shortened.digest_hex_chars,
    max_length=_wire.shortened.max_length,
    error=Error.of,
)
SERVER_KEYS = ServerKeys(GRAMMARS["server_key"], Error.of)
AGGREGATE = AggregateNames(GRAMMARS["aggregate_name"], Code["NOT_NAMESPACED"], Error.of)
RESOURCE_URIS = ResourceUris(GRAMMARS["resource_uri"], Code["NOT_NAMESPACED"], Error.of)
OPERATIONS = SearchOperations(GRAMMARS["search_operation"], Error.of)
SELECTORS = ViewSelectors(GRAMMARS["view_selector"], Error.of)
ANNOTATIONS = AnnotationMapping(
    [HintRule(h.hint, **h.rule.model_dump()) for h in _parsers.hints],
    _parsers.side_effects_default,
)

_render = VIEWS.render().render
RENDERER = Renderer(
    [CardPart(**p.model_dump()) for p in _render.card],
    _render.separator,
    _render.preamble.query,
    _render.preamble.path,
)
BANNED_FIELDS = frozenset(SPEC.budgets.banned.fields)
CARD_RULES = CardRules(
    model=ChoiceCard,
    banned_fields=BANNED_FIELDS,
    banned_stringified=[re.compile(p, re.IGNORECASE) for p in SPEC.budgets.banned.stringified],
    tool_ids=GRAMMARS["tool_id"].accepts,
    internal_ids=(GRAMMARS["path"].accepts, GRAMMARS["cache_marker_id"].accepts),
    error=CardError,
)

_strategies = VIEWS.strategies()
STRATEGIES = GrammarStrategies(
    GRAMMARS,
    _strategies.trees,
    _strategies.spec_valid,
    _strategies.spec_invalid,
    _strategies.natural_max,
)
_card = _strategies.card
CARDS = CardStrategies(
    STRATEGIES,
    CardBounds(_card.tags_max, _card.name_max, _card.kinds, BANNED_FIELDS, _card.tag_max_length),
)
ARGS = ArgumentStrategies(
    STRATEGIES,
    _strategies.arg_grammars,
    _strategies.arg_required,
    _strategies.arg_exactly_one,
)
