"""The IR's records: every spec file's YAML as typed, frozen models (unknown keys are errors),
and `Spec`, the whole spec once loaded (`load.load_spec`) and cross-checked
(`references.resolve_references`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import SpecError
from ..shapes import ObjectShape, object_shape
from .nodes import Node

SEMVER = re.compile(r"(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?")


# JSON-Schema keywords an x-bound may set from a rule file.
BOUND_KEYWORDS = frozenset(
    {"maxLength", "minLength", "maxItems", "minItems", "maximum", "minimum", "maxProperties"}
)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Source(Strict):
    seed: str
    section: str


class SeedInfo(Strict):
    title: str
    role: str
    # The seed's file in the seed folder (../shared/seeds beside the checkout).
    file: str


class Surface(Strict):
    spec_version: str
    title: str
    files: list[str]
    seeds: dict[str, SeedInfo]
    glossary: dict[str, str]


# ---------------------------------------------------------------- grammars


class Example(Strict):
    """A grammar example whose verdict depends on an amendment (the seed's wording alone would
    not decide it, or would decide it the other way)."""

    value: str
    amended_by: list[str]


class GrammarSpec(Strict):
    summary: str
    source: Source
    error: str
    syntax: list[Any]
    # Requirement ids the grammar's examples evidence (exported with each vector case).
    requirements: list[str]
    max_length: int | None = None
    amendments: list[str] = []
    # Amendments every example's verdict depends on (a grammar the seeds do not state).
    examples_amended_by: list[str] = []
    valid: list[str | Example] = []
    invalid: list[str | Example] = []

    @staticmethod
    def plain(examples: list[str | Example]) -> list[str]:
        return [e if isinstance(e, str) else e.value for e in examples]


class NameMapping(Strict):
    """AM-NAME-MAPPING: how an upstream tool name outside the name grammar becomes a name."""

    source: Source
    amendments: list[str]
    prefix: str
    replacement: str  # replaces each character outside the name grammar's alphabet


@dataclass(frozen=True)
class Grammar:
    name: str
    spec: GrammarSpec
    nodes: tuple[Node, ...]


class ErrorCodeSpec(Strict):
    summary: str
    source: Source


class ModelSpec(Strict):
    summary: str
    source: Source
    json_schema: dict[str, Any] = Field(alias="schema")
    rules: dict[str, str] = {}
    # Amendments the model's shape rests on.
    amendments: list[str] = []


# ---------------------------------------------------------------- budgets


class CardBudget(Strict):
    target: int
    hard_cap: int


class BrowseBudget(Strict):
    # The per-card target and cap of a browse response are the card's own (§2.3).
    preamble: int


class Tokens(Strict):
    encoder: Literal["cl100k_base"]
    source: Source
    measured_on: Literal["client_text"]
    amendments: list[str] = []
    card: CardBudget
    browse_response: BrowseBudget
    args_signature: int


class RenderPart(Strict):
    field: str
    format: str
    when: Literal[
        "always",
        "kind_not_tool",
        "name_differs_from_id",
        "non_empty",
        "positive",
        "true",
        "false",
        "false_unless_internal",
    ] = "always"
    join: str | None = None


class Preamble(Strict):
    query: str
    path: str


class Render(Strict):
    source: Source
    amendments: list[str] = []
    card: list[RenderPart]
    preamble: Preamble
    separator: str


class Truncation(Strict):
    source: Source
    terminators: list[str]
    terminators_needing_space: list[str]
    ellipsis: str
    cut_at: Literal["character"]
    amendments: list[str] = []
    collapse_whitespace: bool
    description_budget: Literal["card_line_target"]


class OrderKey(Strict):
    key: Literal["score", "id"]
    order: Literal["asc", "desc"]

    @property
    def descending(self) -> bool:
        return self.order == "desc"


class Ordering(Strict):
    source: Source
    default: list[OrderKey]


class Marker(Strict):
    id_grammar: str
    kind: Literal["internal"]
    name: str
    description: str


class CacheStable(Strict):
    source: Source
    marker: Marker
    seen_prefix_order: OrderKey
    new_suffix_order: OrderKey
    seen_by: list[Literal["browse", "hydrate", "execute"]]
    amendments: list[str] = []


class Banned(Strict):
    source: Source
    fields: list[str]
    stringified: list[str]


class AnnotationRule(Strict):
    when: bool | None = None
    side_effects: bool | None = None
    tag: str | None = None
    field: str | None = None


class Annotations(Strict):
    source: Source
    readOnlyHint: AnnotationRule  # noqa: N815 - MCP's own spelling
    destructiveHint: AnnotationRule  # noqa: N815
    costHint: AnnotationRule  # noqa: N815
    side_effects_default: bool

    def hints(self) -> dict[str, AnnotationRule]:
        """MCP hint name -> its rule, in spec order."""
        fields = type(self).model_fields
        return {n: r for n in fields if isinstance(r := getattr(self, n), AnnotationRule)}


class Firewall(Strict):
    source: Source
    amendments: list[str] = []
    summary_max_chars: int
    max_facts: int
    fact_max_chars: int
    text_artifact_threshold_chars: int
    structured_content_handle_label: str
    view_max_chars: int
    max_upstream_result_bytes: int


class Browse(Strict):
    source: Source
    default_top_k: int
    max_top_k: int
    query_max_chars: int


class LeafSlug(Strict):
    keep: str
    replacement: str
    strip_leading: str
    fallback: str
    digest_hex: int


class Tree(Strict):
    source: Source
    amendments: list[str] = []
    cluster_threshold: int
    other_cluster: str
    leaf_slug: LeafSlug


class BudgetsFile(Strict):
    tokens: Tokens


class Signature(Strict):
    source: Source
    amendments: list[str] = []
    optional_mark: str
    enum_values_max: int
    more: str


class CardsFile(Strict):
    render: Render
    truncation: Truncation
    banned: Banned
    annotations: Annotations
    signature: Signature


class BrowseFile(Strict):
    browse: Browse
    tree: Tree
    ordering: Ordering
    cache_stable: CacheStable


class FirewallFile(Strict):
    firewall: Firewall


# Spec files of rules, each validated on its own; Budgets joins their sections so that a
# reference such as `browse.query_max_chars` names a section and a key wherever it lives.
RULE_FILES: dict[str, type[Strict]] = {
    "budgets.yaml": BudgetsFile,
    "cards.yaml": CardsFile,
    "browse.yaml": BrowseFile,
    "firewall.yaml": FirewallFile,
}


class Budgets(Strict):
    tokens: Tokens
    render: Render
    truncation: Truncation
    ordering: Ordering
    cache_stable: CacheStable
    banned: Banned
    annotations: Annotations
    firewall: Firewall
    browse: Browse
    tree: Tree
    signature: Signature


# ---------------------------------------------------------------- profiles


class ProfileSpec(Strict):
    summary: str
    source: Source
    seeds: list[str]
    meta_tools: list[str]
    lists_upstream_tools: Literal["none", "stripped", "namespaced"]


class StrippedEntry(Strict):
    source: Source
    amendments: list[str] = []
    name: str
    description: str
    input_schema: dict[str, Any]


class Shortened(Strict):
    marker: str
    digest_hex_chars: int
    max_length: int


class WireEncoding(Strict):
    escape: str
    escapes: dict[str, str]
    shortened: Shortened


class MetaToolSpec(Strict):
    source: Source
    description: str
    input_schema: dict[str, Any]
    # The output model its structuredContent matches; with result "upstream" the meta-tool
    # returns the called tool's own result (content and structuredContent) and has no model.
    output: str | None
    result: Literal["model", "upstream"] = "model"
    errors: list[str]
    # Amendments the meta-tool's definition rests on.
    amendments: list[str] = []


class AggregateListing(Strict):
    """How the aggregate profile pages its merged lists (AM-AGGREGATE-LISTING)."""

    page_size: int = Field(ge=1)
    cursor_ttl_seconds: int = Field(ge=1)


class Profiles(Strict):
    advertise_output_schemas: bool
    profiles: dict[str, ProfileSpec]
    aggregate_listing: AggregateListing
    stripped_entry: StrippedEntry
    wire_encoding: WireEncoding
    meta_tools: dict[str, MetaToolSpec]


# ---------------------------------------------------------------- amendments, requirements


class Amendment(Strict):
    title: str
    # The seed sections it amends: one, or several when the facts it changes sit in several.
    # Every fact in `changes` must sit in one of them (or in a subsection of one).
    amends: Source | list[Source]
    # change: the spec departs from what a seed states; clarification: the seed is silent or
    # ambiguous and the spec decides; extension: the spec adds to what a seed requires and
    # keeps all of it. `changes` names the seed facts (seed_facts.yaml) the
    # amendment overrides, each with the value the spec holds instead (null for a fact that is a
    # statement with no single value). A change must name at least one.
    kind: Literal["change", "clarification", "extension"]
    changes: dict[str, Any] = {}
    decision: str
    rationale: str

    @property
    def sources(self) -> list[Source]:
        return self.amends if isinstance(self.amends, list) else [self.amends]


# ---------------------------------------------------------------- seed facts, extensions


class SeedFact(Strict):
    """Something a seed states (or what the spec infers from its words), pinned to where the
    spec holds it."""

    seed: str
    section: str
    # stated: the quoted words say it; inference: the spec reads it out of the quoted words
    # (refusals then say "inferred from", never "states").
    kind: Literal["stated", "inference"] = "stated"
    # The exact words of the seed section it rests on (whitespace aside), each a short quote;
    # generation fails when one is not in the cited section of the seed file.
    quote: list[str] = Field(min_length=1)
    statement: str
    # The value the seed states; absent for a statement with no single checkable value.
    value: Any = None
    # Where the spec holds it: "file#key.path" (`[i]` for list items, `{a,b}` for several keys,
    # `[id=A,B]` for the list items whose id is A or B), or a view "regex:GRAMMAR" /
    # "maxlen:GRAMMAR". Several places must all hold it.
    at: list[str] = []
    compare: Literal["equal", "set", "subset", "superset", "keys", "none_of", "contains"] = "equal"


class SeedFacts(Strict):
    facts: dict[str, SeedFact]


class Extensions(Strict):
    """Values the seeds never state: spec file -> key path -> why gatespec has it."""

    extensions: dict[str, dict[str, str]]


# ---------------------------------------------------------------- expected answers


class VectorCase(Strict):
    """One expected answer, hand-written from a seed or an amendment."""

    name: str
    function: str
    requirements: list[str]
    description: str
    input: dict[str, Any]
    expect: dict[str, Any]
    # Amendments the expectation depends on; seed_expect, when given, is what the seed's own
    # wording answers instead (checked at the kit's seed level).
    amended_by: list[str] = []
    seed_expect: dict[str, Any] | None = None
    # Where two seeds disagree (or one leaves room), every answer a seed permits: the kit's
    # seed level accepts any of them. Instead of seed_expect, never with it.
    seed_expect_any: list[dict[str, Any]] | None = None


class Vectors(Strict):
    cases: dict[str, list[VectorCase]]  # vector file name -> cases


class Requirement(Strict):
    id: str
    level: Literal["MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY"]
    source: Source
    scope: Literal["surface", "runtime", "transport"]
    profiles: list[Literal["gateway", "transparent", "search", "aggregate"]]
    text: str
    amended_by: str | None = None
    checks: list[str] = []
    # Work that will cover the requirement, when no check does yet (named in the report).
    pending: str | None = None


class Requirements(Strict):
    external_checks: dict[str, str] = {}
    requirements: list[Requirement]


# ---------------------------------------------------------------- the whole spec


@dataclass
class Spec:
    root: Path
    surface: Surface
    grammars: dict[str, Grammar]
    name_mapping: NameMapping
    error_codes: dict[str, ErrorCodeSpec]
    models: dict[str, ModelSpec]
    budgets: Budgets
    profiles: Profiles
    amendments: dict[str, Amendment]
    requirements: list[Requirement]
    external_checks: dict[str, str]
    vectors: dict[str, list[VectorCase]]
    seed_facts: dict[str, SeedFact]
    extensions: dict[str, dict[str, str]]
    spec_hash: str
    file_hashes: dict[str, str] = field(default_factory=dict)
    # Each file's YAML as loaded, for checks that address it by key path (seed facts).
    raw: dict[str, Any] = field(default_factory=dict)

    def model_shape(self, name: str) -> ObjectShape:
        """A model's schema, typed; a SpecError when the model is missing."""
        if name not in self.models:
            raise SpecError("models.yaml", "models", f"the generated code needs a model {name!r}")
        schema = self.models[name].json_schema
        return object_shape(schema, "models.yaml", f"models.{name}.schema")

    def input_shape(self, tool: str) -> ObjectShape:
        """A meta-tool's input schema, typed."""
        schema = self.profiles.meta_tools[tool].input_schema
        return object_shape(schema, "profiles.yaml", f"meta_tools.{tool}.input_schema")
