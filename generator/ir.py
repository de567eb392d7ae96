"""Intermediate representation: the spec's YAML, validated.

Unknown keys are errors (every model forbids extras) and so are dangling references; each error
names the spec file and the key path. `load_spec` returns a fully cross-checked `Spec`.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import SpecError, SpecErrors
from .shapes import ObjectShape, object_shape

# libyaml's safe loader when PyYAML was built with it (10x faster on the requirements file).
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
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


@dataclass(frozen=True)
class Lit:
    text: str


@dataclass(frozen=True)
class CharSet:
    body: str  # a regex character-class body, e.g. "a-z0-9_-"
    min: int
    max: int | None
    capture: str | None = None


@dataclass(frozen=True)
class Ref:
    name: str
    capture: str | None = None


@dataclass(frozen=True)
class Opt:
    nodes: tuple[Node, ...]


@dataclass(frozen=True)
class Rep:
    nodes: tuple[Node, ...]
    min: int
    max: int | None


@dataclass(frozen=True)
class Alt:
    options: tuple[tuple[Node, ...], ...]


@dataclass(frozen=True)
class Group:
    nodes: tuple[Node, ...]
    capture: str | None = None


Node = Lit | CharSet | Ref | Opt | Rep | Alt | Group


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


def _parse_nodes(raw: Any, file: str, where: str) -> tuple[Node, ...]:
    if not isinstance(raw, list) or not raw:
        raise SpecError(file, where, "expected a non-empty list of grammar nodes")
    return tuple(_parse_node(item, file, f"{where}[{i}]") for i, item in enumerate(raw))


def _count(value: Any, file: str, where: str, *, allow_none: bool) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SpecError(file, where, f"expected a non-negative integer, got {value!r}")
    return value


def _parse_node(raw: Any, file: str, where: str) -> Node:
    if not isinstance(raw, dict):
        raise SpecError(file, where, f"expected a mapping, got {type(raw).__name__}")
    kinds = [k for k in ("lit", "set", "ref", "opt", "rep", "alt", "group") if k in raw]
    if len(kinds) != 1:
        raise SpecError(file, where, "a node has exactly one of lit/set/ref/opt/rep/alt/group")
    kind = kinds[0]
    allowed = {
        "lit": {"lit"},
        "set": {"set", "min", "max", "as"},
        "ref": {"ref", "as"},
        "opt": {"opt"},
        "rep": {"rep", "min", "max"},
        "alt": {"alt"},
        "group": {"group", "as"},
    }[kind]
    extra = sorted(set(raw) - allowed)
    if extra:
        raise SpecError(file, f"{where}.{extra[0]}", f"unknown key for a {kind} node")
    capture = raw.get("as")
    if capture is not None and not re.fullmatch(r"[a-z][a-z0-9_]*", str(capture)):
        raise SpecError(file, f"{where}.as", f"capture name {capture!r} is not an identifier")
    if kind == "lit":
        if not isinstance(raw["lit"], str) or not raw["lit"]:
            raise SpecError(file, f"{where}.lit", "expected a non-empty string")
        return Lit(raw["lit"])
    if kind == "set":
        body = raw["set"]
        if not isinstance(body, str) or not body:
            raise SpecError(file, f"{where}.set", "expected a character-class body")
        try:
            re.compile(f"[{body}]")
        except re.error as exc:
            raise SpecError(file, f"{where}.set", f"not a valid character class: {exc}") from None
        lo = _count(raw.get("min", 1), file, f"{where}.min", allow_none=False)
        hi = _count(raw.get("max", lo), file, f"{where}.max", allow_none=True)
        assert lo is not None
        if hi is not None and hi < lo:
            raise SpecError(file, where, f"max {hi} is below min {lo}")
        if hi == 0:
            raise SpecError(file, where, "max 0 makes the node match nothing")
        return CharSet(body, lo, hi, capture)
    if kind == "ref":
        return Ref(str(raw["ref"]), capture)
    if kind == "opt":
        return Opt(_parse_nodes(raw["opt"], file, f"{where}.opt"))
    if kind == "group":
        return Group(_parse_nodes(raw["group"], file, f"{where}.group"), capture)
    if kind == "rep":
        lo = _count(raw.get("min", 0), file, f"{where}.min", allow_none=False)
        hi = _count(raw.get("max"), file, f"{where}.max", allow_none=True)
        assert lo is not None
        if hi is not None and hi < lo:
            raise SpecError(file, where, f"max {hi} is below min {lo}")
        return Rep(_parse_nodes(raw["rep"], file, f"{where}.rep"), lo, hi)
    options = raw["alt"]
    if not isinstance(options, list) or len(options) < 2:
        raise SpecError(file, f"{where}.alt", "expected at least two alternatives")
    return Alt(tuple(_parse_nodes(opt, file, f"{where}.alt[{i}]") for i, opt in enumerate(options)))


# ---------------------------------------------------------------- errors, models


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


def _load_yaml(path: Path) -> Any:
    try:
        return yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)  # noqa: S506 - a safe loader
    except FileNotFoundError:
        raise SpecError(path.name, "", "file is missing") from None
    except yaml.YAMLError as exc:
        raise SpecError(path.name, "", f"invalid YAML: {exc}") from None


def _validate(model: type[BaseModel], data: Any, file: str, prefix: str = "") -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = []
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"])
            key = f"{prefix}.{loc}" if prefix and loc else (prefix or loc)
            msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
            errors.append(SpecError(file, key, msg))
        raise SpecErrors(errors) from None


def load_spec(root: Path) -> Spec:
    """Load and cross-check spec/ at `root`. Raises SpecErrors listing every problem found."""
    surface_raw = _load_yaml(root / "surface.yaml")
    surface: Surface = _validate(Surface, surface_raw, "surface.yaml")
    if not SEMVER.fullmatch(surface.spec_version):
        raise SpecError("surface.yaml", "spec_version", "not a semantic version")
    # The spec hash covers surface.yaml and every listed file, in the listed order.
    digest = hashlib.sha256()
    file_hashes = {}
    raw: dict[str, Any] = {}
    for name in ["surface.yaml", *surface.files]:
        data = (root / name).read_bytes() if (root / name).exists() else b""
        if not data:
            raise SpecError(name, "", "file is missing or empty")
        digest.update(name.encode() + b"\0" + data + b"\0")
        file_hashes[name] = hashlib.sha256(data).hexdigest()
        if name != "surface.yaml":
            raw[name] = _load_yaml(root / name)
    expected = {
        "grammars.yaml", "errors.yaml", "models.yaml", *RULE_FILES, "profiles.yaml",
        "amendments.yaml", "requirements.yaml", "vectors.yaml", "seed_facts.yaml",
        "extensions.yaml",
    }  # fmt: skip
    missing = expected - set(surface.files)
    if missing:
        raise SpecError("surface.yaml", "files", f"must list {sorted(missing)}")

    errors: list[SpecError] = []

    def collect(fn: Any) -> Any:
        try:
            return fn()
        except SpecErrors as exc:
            errors.extend(exc.errors)
        except SpecError as exc:
            errors.append(exc)
        return None

    grammars: dict[str, Grammar] = {}
    graw = raw["grammars.yaml"]
    name_mapping = None
    if not isinstance(graw, dict) or set(graw) != {"grammars", "name_mapping"}:
        errors.append(
            SpecError(
                "grammars.yaml", "", "expected exactly the keys 'grammars' and 'name_mapping'"
            )
        )
    else:
        name_mapping = collect(
            lambda: _validate(NameMapping, graw["name_mapping"], "grammars.yaml", "name_mapping")
        )
        for gname, gdata in graw["grammars"].items():
            gspec = collect(
                lambda gd=gdata, gn=gname: _validate(
                    GrammarSpec, gd, "grammars.yaml", f"grammars.{gn}"
                )
            )
            if gspec is None:
                continue
            nodes = collect(
                lambda gs=gspec, gn=gname: _parse_nodes(
                    gs.syntax, "grammars.yaml", f"grammars.{gn}.syntax"
                )
            )
            if nodes is not None:
                grammars[gname] = Grammar(gname, gspec, nodes)

    def section(file: str, key: str) -> Any:
        data = raw[file]
        if not isinstance(data, dict) or key not in data:
            raise SpecError(file, key, "missing")
        return data

    codes = collect(
        lambda: {
            k: _validate(ErrorCodeSpec, v, "errors.yaml", f"codes.{k}")
            for k, v in section("errors.yaml", "codes")["codes"].items()
        }
    )
    models = collect(
        lambda: {
            k: _validate(ModelSpec, v, "models.yaml", f"models.{k}")
            for k, v in section("models.yaml", "models")["models"].items()
        }
    )
    rule_sections: dict[str, Any] = {}
    for file, model in RULE_FILES.items():
        checked = collect(lambda f=file, m=model: _validate(m, raw[f], f))
        if checked is not None:
            rule_sections.update({k: getattr(checked, k) for k in type(checked).model_fields})
    budgets = Budgets(**rule_sections) if len(rule_sections) == len(Budgets.model_fields) else None
    profiles = collect(lambda: _validate(Profiles, raw["profiles.yaml"], "profiles.yaml"))
    amendments = collect(
        lambda: {
            k: _validate(Amendment, v, "amendments.yaml", f"amendments.{k}")
            for k, v in section("amendments.yaml", "amendments")["amendments"].items()
        }
    )
    reqs = collect(lambda: _validate(Requirements, raw["requirements.yaml"], "requirements.yaml"))
    vectors = collect(lambda: _validate(Vectors, raw["vectors.yaml"], "vectors.yaml"))
    facts = collect(lambda: _validate(SeedFacts, raw["seed_facts.yaml"], "seed_facts.yaml"))
    extensions = collect(lambda: _validate(Extensions, raw["extensions.yaml"], "extensions.yaml"))
    if errors:
        raise SpecErrors(errors)
    # Each is None only after an error collected above.
    assert name_mapping is not None and budgets is not None

    spec = Spec(
        root=root,
        surface=surface,
        grammars=grammars,
        name_mapping=name_mapping,
        error_codes=codes,
        models=models,
        budgets=budgets,
        profiles=profiles,
        amendments=amendments,
        requirements=reqs.requirements,
        external_checks=reqs.external_checks,
        vectors=vectors.cases,
        seed_facts=facts.facts,
        extensions=extensions.extensions,
        spec_hash=digest.hexdigest(),
        file_hashes=file_hashes,
        raw=raw,
    )
    resolve_references(spec)
    return spec


def _walk_sources(obj: Any, where: str, out: list[tuple[str, Source]]) -> None:
    if isinstance(obj, Source):
        out.append((where, obj))
    elif isinstance(obj, BaseModel):
        for name in type(obj).model_fields:
            _walk_sources(getattr(obj, name), f"{where}.{name}" if where else name, out)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _walk_sources(v, f"{where}.{k}" if where else str(k), out)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _walk_sources(v, f"{where}[{i}]", out)


def _grammar_refs(nodes: tuple[Node, ...]) -> list[str]:
    out: list[str] = []
    for n in nodes:
        if isinstance(n, Ref):
            out.append(n.name)
        elif isinstance(n, (Opt, Rep, Group)):
            out.extend(_grammar_refs(n.nodes))
        elif isinstance(n, Alt):
            for opt in n.options:
                out.extend(_grammar_refs(opt))
    return out


def _schema_refs(schema: Any, where: str, out: list[tuple[str, str, Any]]) -> None:
    """Collect (where, extension key, value) for every x- extension in a JSON Schema."""
    if isinstance(schema, dict):
        for k, v in schema.items():
            if k.startswith("x-"):
                out.append((f"{where}.{k}", k, v))
            _schema_refs(v, f"{where}.{k}", out)
    elif isinstance(schema, list):
        for i, v in enumerate(schema):
            _schema_refs(v, f"{where}[{i}]", out)


def resolve_references(spec: Spec) -> None:
    """Every name a spec file uses must exist where it points. Raises SpecErrors."""
    errors: list[SpecError] = []
    seeds = set(spec.surface.seeds)
    files: list[tuple[str, Any]] = [
        ("grammars.yaml", {f"grammars.{k}": g.spec for k, g in spec.grammars.items()}),
        ("errors.yaml", {f"codes.{k}": v for k, v in spec.error_codes.items()}),
        ("models.yaml", {f"models.{k}": v for k, v in spec.models.items()}),
        *(
            (file, {k: getattr(spec.budgets, k) for k in model.model_fields})
            for file, model in RULE_FILES.items()
        ),
        ("profiles.yaml", spec.profiles),
        ("amendments.yaml", {f"amendments.{k}": v for k, v in spec.amendments.items()}),
        ("requirements.yaml", {f"requirements[{i}]": r for i, r in enumerate(spec.requirements)}),
    ]
    for file, obj in files:
        found: list[tuple[str, Source]] = []
        _walk_sources(obj, "", found)
        for where, src in found:
            if src.seed not in seeds:
                errors.append(SpecError(file, where, f"unknown seed {src.seed!r}"))

    def amendment(file: str, where: str, name: str) -> None:
        if name not in spec.amendments:
            errors.append(SpecError(file, where, f"unknown amendment {name!r}"))

    def code(file: str, where: str, name: str) -> None:
        if name not in spec.error_codes:
            errors.append(SpecError(file, where, f"unknown error code {name!r}"))

    for a in spec.name_mapping.amendments:
        amendment("grammars.yaml", "name_mapping.amendments", a)
    for gname, g in spec.grammars.items():
        code("grammars.yaml", f"grammars.{gname}.error", g.spec.error)
        for a in g.spec.amendments:
            amendment("grammars.yaml", f"grammars.{gname}.amendments", a)
        for ref in _grammar_refs(g.nodes):
            if ref not in spec.grammars:
                errors.append(
                    SpecError(
                        "grammars.yaml", f"grammars.{gname}.syntax", f"unknown grammar {ref!r}"
                    )
                )

    # Reference cycles would make the grammar infinite.
    def visit(name: str, stack: tuple[str, ...]) -> None:
        if name in stack:
            errors.append(
                SpecError("grammars.yaml", f"grammars.{name}", "cycle: " + " -> ".join(stack))
            )
            return
        if name in spec.grammars:
            for ref in _grammar_refs(spec.grammars[name].nodes):
                visit(ref, (*stack, name))

    for gname in spec.grammars:
        visit(gname, ())

    def schema_ext(file: str, where: str, schema: Any) -> None:
        found: list[tuple[str, str, Any]] = []
        _schema_refs(schema, where, found)
        for w, key, value in found:
            if key == "x-grammar":
                for g in value if isinstance(value, list) else [value]:
                    if g not in spec.grammars:
                        errors.append(SpecError(file, w, f"unknown grammar {g!r}"))
            elif key == "x-model":
                if value not in spec.models:
                    errors.append(SpecError(file, w, f"unknown model {value!r}"))
            elif key == "x-bound":
                if not isinstance(value, dict) or not value:
                    errors.append(SpecError(file, w, "expected {JSON-Schema keyword: rule}"))
                    continue
                for keyword, ref in value.items():
                    if keyword not in BOUND_KEYWORDS:
                        errors.append(SpecError(file, f"{w}.{keyword}", "not a bound keyword"))
                    section_name, _, attr = str(ref).partition(".")
                    sec = getattr(spec.budgets, section_name, None)
                    bound = getattr(sec, attr, None)
                    if not isinstance(bound, int) or isinstance(bound, bool):
                        errors.append(
                            SpecError(file, f"{w}.{keyword}", f"{ref!r} is not an integer rule")
                        )
            elif key == "x-exactly-one-of":
                props = set(_props_of(schema, w, where))
                if not isinstance(value, list) or len(value) < 2 or not set(value) <= props:
                    errors.append(SpecError(file, w, "must list two or more declared properties"))
            elif key == "x-error-code":
                pass
            else:
                errors.append(SpecError(file, w, f"unknown extension {key!r}"))

    for mname, m in spec.models.items():
        schema_ext("models.yaml", f"models.{mname}.schema", m.json_schema)
        for a in m.amendments:
            amendment("models.yaml", f"models.{mname}.amendments", a)
    for tname, t in spec.profiles.meta_tools.items():
        where = f"meta_tools.{tname}"
        for a in t.amendments:
            amendment("profiles.yaml", f"{where}.amendments", a)
        schema_ext("profiles.yaml", f"{where}.input_schema", t.input_schema)
        if t.output is not None and t.output not in spec.models:
            errors.append(
                SpecError("profiles.yaml", f"{where}.output", f"unknown model {t.output!r}")
            )
        if (t.result == "upstream") != (t.output is None):
            errors.append(
                SpecError(
                    "profiles.yaml",
                    f"{where}.output",
                    "a meta-tool has an output model, or returns the upstream result: not both",
                )
            )
        for c in t.errors:
            code("profiles.yaml", f"{where}.errors", c)
    for pname, p in spec.profiles.profiles.items():
        for seed in p.seeds:
            if seed not in seeds:
                errors.append(
                    SpecError("profiles.yaml", f"profiles.{pname}.seeds", f"unknown seed {seed!r}")
                )
        for tool in p.meta_tools:
            if tool not in spec.profiles.meta_tools:
                errors.append(
                    SpecError(
                        "profiles.yaml",
                        f"profiles.{pname}.meta_tools",
                        f"unknown meta-tool {tool!r}",
                    )
                )
    for a in spec.profiles.stripped_entry.amendments:
        amendment("profiles.yaml", "stripped_entry.amendments", a)
    b = spec.budgets
    for file, model in RULE_FILES.items():
        for sec_name in model.model_fields:
            for a in getattr(getattr(b, sec_name), "amendments", []):
                amendment(file, f"{sec_name}.amendments", a)
    if b.cache_stable.marker.id_grammar not in spec.grammars:
        errors.append(SpecError("browse.yaml", "cache_stable.marker.id_grammar", "unknown grammar"))
    seen_ids: set[str] = set()
    for i, r in enumerate(spec.requirements):
        if r.id in seen_ids:
            errors.append(
                SpecError("requirements.yaml", f"requirements[{i}].id", f"duplicate {r.id}")
            )
        seen_ids.add(r.id)
        if r.amended_by:
            amendment("requirements.yaml", f"requirements[{i}].amended_by", r.amended_by)

    def requirement(file: str, where: str, rid: str) -> None:
        if rid not in seen_ids:
            errors.append(SpecError(file, where, f"unknown requirement {rid!r}"))

    for gname, g in spec.grammars.items():
        where = f"grammars.{gname}"
        for rid in g.spec.requirements:
            requirement("grammars.yaml", f"{where}.requirements", rid)
        for a in g.spec.examples_amended_by:
            amendment("grammars.yaml", f"{where}.examples_amended_by", a)
        for kind in ("valid", "invalid"):
            for j, ex in enumerate(getattr(g.spec, kind)):
                for a in [] if isinstance(ex, str) else ex.amended_by:
                    amendment("grammars.yaml", f"{where}.{kind}[{j}].amended_by", a)
    for file, cases in spec.vectors.items():
        names: set[str] = set()
        for j, case in enumerate(cases):
            where = f"cases.{file}[{j}]"
            if case.name in names:
                errors.append(SpecError("vectors.yaml", f"{where}.name", f"duplicate {case.name}"))
            names.add(case.name)
            if not case.requirements:
                errors.append(SpecError("vectors.yaml", f"{where}.requirements", "empty"))
            for rid in case.requirements:
                requirement("vectors.yaml", f"{where}.requirements", rid)
            for a in case.amended_by:
                amendment("vectors.yaml", f"{where}.amended_by", a)
            if case.seed_expect is not None and case.seed_expect_any is not None:
                errors.append(
                    SpecError("vectors.yaml", f"{where}.seed_expect_any", "not with seed_expect")
                )
            if case.seed_expect_any is not None and len(case.seed_expect_any) < 2:
                errors.append(
                    SpecError("vectors.yaml", f"{where}.seed_expect_any", "two answers or more")
                )
            seed_answers = [case.seed_expect, *(case.seed_expect_any or [])]
            if any(a is not None for a in seed_answers) and not case.amended_by:
                errors.append(
                    SpecError(
                        "vectors.yaml",
                        f"{where}.seed_expect",
                        "a seed answer differs from the expected one only under an amendment: "
                        "name it in amended_by",
                    )
                )
            answers = [("expect", case.expect), ("seed_expect", case.seed_expect)]
            answers += [
                (f"seed_expect_any[{i}]", a) for i, a in enumerate(case.seed_expect_any or [])
            ]
            for key, answer in answers:
                if answer is None:
                    continue
                if len(answer) != 1 or not ({"ok", "error"} & set(answer)):
                    errors.append(
                        SpecError(
                            "vectors.yaml", f"{where}.{key}", "expected {ok: V} or {error: CODE}"
                        )
                    )
                elif "error" in answer:
                    code("vectors.yaml", f"{where}.{key}.error", answer["error"])
    for file in spec.extensions:
        if file not in spec.raw:
            errors.append(SpecError("extensions.yaml", f"extensions.{file}", "not a spec file"))
    if errors:
        raise SpecErrors(errors)


def _props_of(schema: Any, target: str, where: str) -> list[str]:
    """Property names of the object schema that holds the extension at `target`."""
    parent = target.rsplit(".", 1)[0]
    node = schema
    rel = parent[len(where) :].lstrip(".")
    for part in [p for p in rel.split(".") if p]:
        node = node.get(part, {}) if isinstance(node, dict) else {}
    return list((node or {}).get("properties", {}))
