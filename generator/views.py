"""Typed view-models: what each template receives, built from the IR and the grammar analyses.

A template gets two objects: `header` (the provenance line every file starts with) and `view`,
one of the dataclasses below. Every value a template prints is computed here or is an IR
object printed as it is; templates compute nothing and emit.py knows no spec value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import ir
from .arguments import ArgClass, ArgumentClasses
from .errors import SpecError
from .facts import render_text
from .grammar import Analysis
from .schema import SchemaResolver
from .support.card_rules import CardRules

# Models the generated code binds to by name: GatewayError clips to ErrorPayload's bounds,
# the card validator and strategies follow ChoiceCard, the tool-id parsers build ToolIdParts
# (the one model that also gets a plain record).
ERROR_PAYLOAD = "ErrorPayload"
CHOICE_CARD = "ChoiceCard"
TOOL_ID_PARTS = "ToolIdParts"
RECORD_MODELS = (TOOL_ID_PARTS,)
TOOL_ID_GRAMMAR = "tool_id"
TAG_GRAMMAR = "tag"


@dataclass(frozen=True)
class Header:
    sources: str
    spec_version: str
    spec_hash_short: str


@dataclass(frozen=True)
class Init:
    spec_version: str
    spec_hash: str
    profiles: tuple[str, ...]  # the exposure profile names (profiles.yaml)


@dataclass(frozen=True)
class ErrorRow:
    name: str
    summary: str
    seed: str
    section: str


@dataclass(frozen=True)
class Errors:
    codes: tuple[ErrorRow, ...]
    message_max: int
    path_max: int


@dataclass(frozen=True)
class GrammarRow:
    name: str
    const: str  # the prefix of its module-level names (TOOL_ID_PATTERN, ...)
    summary: str
    summary_line: str
    regex: str
    portable: str
    min_len: int
    cap: int | None
    error: str
    captures: tuple[str, ...]
    syntax: str
    alphabet: str | None


@dataclass(frozen=True)
class Grammars:
    grammars: tuple[GrammarRow, ...]


@dataclass(frozen=True)
class HintRow:
    hint: str
    rule: ir.AnnotationRule


@dataclass(frozen=True)
class Parsers:
    name_mapping: ir.NameMapping
    wire: ir.WireEncoding
    hints: tuple[HintRow, ...]
    annotation_tags: dict[str, str]
    read_only_side_effects: bool | None
    side_effects_default: bool


@dataclass(frozen=True)
class Order:
    """(key, descending?) pairs, applied in order."""

    keys: tuple[tuple[str, bool], ...]


@dataclass(frozen=True)
class Budgets:
    b: ir.Budgets
    default_order: Order
    seen_order: Order
    new_order: Order
    marker_id: str


@dataclass(frozen=True)
class Render:
    render: ir.Render


@dataclass(frozen=True)
class Validators:
    card_rules: dict[str, str]


@dataclass(frozen=True)
class Schemas:
    model_schemas: dict[str, Any]
    input_schemas: dict[str, Any]
    stripped_input_schema: dict[str, Any]


@dataclass(frozen=True)
class Descriptors:
    profiles: tuple[tuple[str, ir.ProfileSpec], ...]
    advertise_output_schemas: bool
    meta_tools: tuple[tuple[str, ir.MetaToolSpec], ...]
    aggregate_listing: ir.AggregateListing


@dataclass(frozen=True)
class OperationRow:
    tool: str  # the meta-tool, also the name of the runtime's method
    args_class: str
    summary: str


@dataclass(frozen=True)
class Operations:
    classes: tuple[ArgClass, ...]  # nested item classes before the classes that hold them
    operations: tuple[OperationRow, ...]


@dataclass(frozen=True)
class CardBounds:
    tags_max: int
    name_max: int
    kinds: tuple[str, ...]
    tag_max_length: int


@dataclass(frozen=True)
class Strategies:
    trees: dict[str, Any]
    spec_valid: dict[str, tuple[str, ...]]
    spec_invalid: dict[str, tuple[str, ...]]
    natural_max: dict[str, int | None]
    arg_grammars: dict[str, dict[str, tuple[str, ...]]]
    arg_required: dict[str, tuple[str, ...]]
    arg_exactly_one: dict[str, tuple[str, ...]]
    card: CardBounds


@dataclass(frozen=True)
class Requirements:
    requirements: tuple[ir.Requirement, ...]
    amendments: tuple[tuple[str, ir.Amendment], ...]


@dataclass(frozen=True)
class FactRow:
    id: str
    seed: str
    section: str
    statement: str
    value: Any
    spec_value: Any  # what the amended spec states, from the amendment's own words
    amended_by: tuple[str, ...]
    at: tuple[str, ...]


@dataclass(frozen=True)
class SeedFacts:
    facts: tuple[FactRow, ...]


@dataclass(frozen=True)
class Vectors:
    files: tuple[str, ...]


@dataclass(frozen=True)
class GrammarTests:
    grammar_names: tuple[str, ...]


@dataclass(frozen=True)
class DescriptorTests:
    profile_facts: dict[str, str]  # profile -> the seed fact that states its meta-tools


@dataclass(frozen=True)
class Nothing:
    """For a template that needs no data."""


class Views:
    """Builds each template's view-model from the spec."""

    def __init__(
        self,
        spec: ir.Spec,
        analyses: dict[str, Analysis],
        caps: dict[str, int | None],
        resolver: SchemaResolver,
        vector_files: list[str],
    ) -> None:
        self.spec = spec
        self.analyses = analyses
        self.caps = caps
        self.resolver = resolver
        self.vector_files = vector_files

    def header(self, sources: tuple[str, ...]) -> Header:
        return Header(
            sources=", ".join(f"spec/{s}" for s in sources),
            spec_version=self.spec.surface.spec_version,
            spec_hash_short=f"sha256 {self.spec.spec_hash[:16]}",
        )

    def init(self) -> Init:
        return Init(
            self.spec.surface.spec_version,
            self.spec.spec_hash,
            tuple(self.spec.profiles.profiles),
        )

    def errors(self) -> Errors:
        payload = self.spec.model_shape(ERROR_PAYLOAD)
        codes = tuple(
            ErrorRow(name, c.summary, c.source.seed, c.source.section)
            for name, c in self.spec.error_codes.items()
        )
        return Errors(
            codes, payload.integer("message", "maxLength"), payload.integer("path", "maxLength")
        )

    def grammars(self) -> Grammars:
        rows = []
        for name, g in self.spec.grammars.items():
            a = self.analyses[name]
            summary = " ".join(g.spec.summary.split())
            rows.append(
                GrammarRow(
                    name=name,
                    const=name.upper(),
                    summary=summary,
                    summary_line=summary[:80],
                    regex=a.regex,
                    portable=a.portable,
                    min_len=a.min_len,
                    cap=self.caps[name],
                    error=g.spec.error,
                    captures=a.captures,
                    syntax=a.syntax,
                    alphabet=a.alphabet,
                )
            )
        return Grammars(tuple(rows))

    def parsers(self) -> Parsers:
        ann = self.spec.budgets.annotations
        hints = ann.hints()
        captures = set(self.analyses[TOOL_ID_GRAMMAR].captures)
        parts = set(self.spec.model_shape(TOOL_ID_PARTS).properties)
        if captures != parts:
            raise SpecError(
                "grammars.yaml",
                f"grammars.{TOOL_ID_GRAMMAR}.syntax",
                f"captures {sorted(captures)}, but {TOOL_ID_PARTS} has {sorted(parts)}",
            )
        return Parsers(
            name_mapping=self.spec.name_mapping,
            wire=self.spec.profiles.wire_encoding,
            hints=tuple(HintRow(h, r) for h, r in hints.items()),
            annotation_tags={h: r.tag for h, r in hints.items() if r.tag},
            read_only_side_effects=ann.readOnlyHint.side_effects,
            side_effects_default=ann.side_effects_default,
        )

    def budgets(self) -> Budgets:
        b = self.spec.budgets
        marker = b.cache_stable.marker.id_grammar
        marker_id = self.analyses[marker].constant
        if marker_id is None:
            raise SpecError(
                "grammars.yaml",
                f"grammars.{marker}",
                "the cache marker's grammar must admit one id",
            )
        stable = b.cache_stable
        return Budgets(
            b=b,
            default_order=_order(b.ordering.default),
            seen_order=_order([stable.seen_prefix_order]),
            new_order=_order([stable.new_suffix_order]),
            marker_id=marker_id,
        )

    def render(self) -> Render:
        return Render(self.spec.budgets.render)

    def validators(self) -> Validators:
        rules = self.spec.models[CHOICE_CARD].rules
        if set(rules) != set(CardRules.RULES):
            raise SpecError(
                "models.yaml",
                f"models.{CHOICE_CARD}.rules",
                f"the card validator implements {sorted(CardRules.RULES)}, the spec names "
                f"{sorted(rules)}",
            )
        return Validators({k: render_text(self.spec, v) for k, v in rules.items()})

    def schemas(self) -> Schemas:
        spec = self.spec
        return Schemas(
            model_schemas={n: self.resolver.standalone(n, "portable") for n in spec.models},
            input_schemas={
                n: self.resolver.resolve(t.input_schema, "portable")
                for n, t in spec.profiles.meta_tools.items()
            },
            stripped_input_schema=spec.profiles.stripped_entry.input_schema,
        )

    def descriptors(self) -> Descriptors:
        p = self.spec.profiles
        return Descriptors(
            tuple(p.profiles.items()),
            p.advertise_output_schemas,
            tuple(p.meta_tools.items()),
            p.aggregate_listing,
        )

    def operations(self) -> Operations:
        classes = ArgumentClasses()
        rows = []
        for tool, spec in self.spec.profiles.meta_tools.items():
            args_class = classes.add(tool, spec.input_schema)
            rows.append(OperationRow(tool, args_class, " ".join(spec.description.split())))
        return Operations(tuple(classes.classes), tuple(rows))

    def strategies(self) -> Strategies:
        spec = self.spec
        inputs = {tool: spec.input_shape(tool) for tool in spec.profiles.meta_tools}
        card = spec.model_shape(CHOICE_CARD)
        tag_cap = self.caps[TAG_GRAMMAR]
        if tag_cap is None:
            raise SpecError("grammars.yaml", f"grammars.{TAG_GRAMMAR}", "a tag needs a length cap")
        return Strategies(
            trees={n: a.tree for n, a in self.analyses.items()},
            spec_valid={n: tuple(g.spec.plain(g.spec.valid)) for n, g in spec.grammars.items()},
            spec_invalid={n: tuple(g.spec.plain(g.spec.invalid)) for n, g in spec.grammars.items()},
            natural_max={n: a.max_len for n, a in self.analyses.items()},
            arg_grammars={
                tool: {p.name: p.grammars for p in shape.properties.values()}
                for tool, shape in inputs.items()
            },
            arg_required={tool: shape.required for tool, shape in inputs.items()},
            arg_exactly_one={tool: shape.exactly_one for tool, shape in inputs.items()},
            card=CardBounds(
                tags_max=card.integer("tags", "maxItems"),
                name_max=card.integer("name", "maxLength"),
                kinds=card.strings("kind", "enum"),
                tag_max_length=tag_cap,
            ),
        )

    def requirements(self) -> Requirements:
        return Requirements(tuple(self.spec.requirements), tuple(self.spec.amendments.items()))

    def seed_facts(self) -> SeedFacts:
        claims: dict[str, list[tuple[str, Any]]] = {}
        for am_id, am in self.spec.amendments.items():
            for fact_id, value in am.changes.items():
                claims.setdefault(fact_id, []).append((am_id, value))
        rows = []
        for fact_id, f in self.spec.seed_facts.items():
            amended = claims.get(fact_id, [])
            # static checks have made sure the spec holds an amendment's value; a later
            # amendment (file order) supersedes an earlier one that names the same fact
            spec_value = amended[-1][1] if amended else f.value
            rows.append(
                FactRow(
                    id=fact_id,
                    seed=f.seed,
                    section=f.section,
                    statement=f.statement,
                    value=f.value,
                    spec_value=spec_value,
                    amended_by=tuple(a for a, _ in amended),
                    at=tuple(f.at),
                )
            )
        return SeedFacts(tuple(rows))

    def vectors(self) -> Vectors:
        return Vectors(tuple(self.vector_files))

    def test_grammars(self) -> GrammarTests:
        return GrammarTests(tuple(self.spec.grammars))

    def test_descriptors(self) -> DescriptorTests:
        out = {}
        for fact_id, f in self.spec.seed_facts.items():
            for at in f.at:
                for profile in self.spec.profiles.profiles:
                    if at == f"profiles.yaml#profiles.{profile}.meta_tools":
                        out[profile] = fact_id
        return DescriptorTests(out)

    def nothing(self) -> Nothing:
        return Nothing()


def _order(keys: list[ir.OrderKey]) -> Order:
    return Order(tuple((k.key, k.descending) for k in keys))
