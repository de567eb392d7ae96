"""Spec mutation score: single edits to a copy of spec/ that contradict a seed, each of which
generation must refuse.

Every mutation is what a maintainer might write by mistake (a bound off by one, a widened
character class, a meta-tool added to a profile, a wrong expected answer, a check removed ...).
It is applied to a temporary copy of spec/, and the generator runs on it: loading, static checks,
then rendering with every expected answer checked. A mutation counts as caught when generation
fails with an error that names what was broken (`expect`), so a mutation that happens to break
the YAML does not count. `python -m generator mutations` prints the score;
tests/generator/test_spec_mutations.py requires all of them caught.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .emit import Generator
from .errors import SpecError, SpecErrors
from .ir import load_spec

Edit = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class Mutation:
    id: str
    what: str
    file: str
    edit: Edit
    expect: str  # a fragment the generation error must contain
    # Edits of other files made with it (a fact changed together with the spec value it pins).
    more: tuple[tuple[str, Edit], ...] = ()


def _set(path: str, value: Any) -> Edit:
    return _apply(path, lambda _old: value)


def _apply(path: str, fn: Callable[[Any], Any]) -> Edit:
    def edit(data: dict[str, Any]) -> None:
        *parents, last = _keys(path)
        node: Any = data
        for key in parents:
            node = node[key]
        node[last] = fn(node[last])

    return edit


def _keys(path: str) -> list[str | int]:
    return [int(k) if k.isdigit() else k for k in path.split(".")]


def _both(*edits: Edit) -> Edit:
    """One mutation made of the edits a maintainer would make together (a bound and the spec's
    own examples that stood in its way)."""

    def edit(data: dict[str, Any]) -> None:
        for e in edits:
            e(data)

    return edit


def _case(file: str, name: str, fn: Callable[[dict[str, Any]], None]) -> Edit:
    def edit(data: dict[str, Any]) -> None:
        for case in data["cases"][file]:
            if case["name"] == name:
                fn(case)
                return
        raise KeyError(name)

    return edit


def _requirement(rid: str, fn: Callable[[dict[str, Any]], None]) -> Edit:
    def edit(data: dict[str, Any]) -> None:
        for req in data["requirements"]:
            if req["id"] == rid:
                fn(req)
                return
        raise KeyError(rid)

    return edit


G, M, P, B = "grammars.yaml", "models.yaml", "profiles.yaml", "budgets.yaml"
F, A, R = "seed_facts.yaml", "amendments.yaml", "requirements.yaml"
CARD = "models.ChoiceCard.schema.properties"


def _drop(path: str, item: Any) -> Edit:
    return _apply(path, lambda xs: [x for x in xs if x != item])


def _fact(fact_id: str, **fields: Any) -> Edit:
    def edit(data: dict[str, Any]) -> None:
        data["facts"][fact_id].update(fields)

    return edit


def _amendment(am_id: str, **fields: Any) -> Edit:
    def edit(data: dict[str, Any]) -> None:
        data["amendments"][am_id].update(fields)

    return edit


MUTATIONS: tuple[Mutation, ...] = (
    # ---- bounds, one off
    Mutation("namespace+1", "namespace up to 65 characters", G,
             _set("grammars.namespace.syntax.1.max", 64), "S000-GRAMMAR-NAMESPACE"),
    Mutation("namespace-1", "namespace up to 63 characters", G,
             _set("grammars.namespace.syntax.1.max", 62), "S000-GRAMMAR-NAMESPACE"),
    Mutation("name+1", "name up to 129 characters", G,
             _set("grammars.name.syntax.1.max", 128), "S000-GRAMMAR-NAME"),
    Mutation("version+1", "version up to 33 characters", G,
             _set("grammars.version.syntax.0.max", 33), "S000-GRAMMAR-VERSION"),
    Mutation("hash8-9", "hash8 of 9 hex digits", G,
             _set("grammars.hash8.syntax.0", {"set": "0-9a-f", "min": 9, "max": 9}),
             "S000-GRAMMAR-HASH8"),
    Mutation("tool_id-cap-240", "tool_id capped at the seed's unreachable 240", G,
             _set("grammars.tool_id.max_length", 240), "can never be reached"),
    Mutation("tool_id-cap-234", "tool_id capped at 234", G,
             _set("grammars.tool_id.max_length", 234), "S000-TOOLID-MAX-LENGTH"),
    Mutation("segment+1", "path segments up to 65 characters", G,
             _set("grammars.path_segment.syntax.1.max", 64), "S000-PATH-SEGMENT"),
    Mutation("tag-40", "tags up to 40 characters, the spec's own example removed", G,
             _both(_set("grammars.tag.syntax.1.max", 39),
                   _apply("grammars.tag.invalid",
                          lambda xs: [x for x in xs if x != "a-very-long-tag-name-over-24"])),
             "S000-CARD-TAG-MAX-CHARS"),
    Mutation("card-name+1", "card names up to 65 characters", M,
             _set(f"{CARD}.name.maxLength", 65), "S000-CARD-NAME-MAX"),
    Mutation("card-tags+1", "6 tags per card", M,
             _set(f"{CARD}.tags.maxItems", 6), "S000-CARD-TAGS-MAX"),
    Mutation("card-target+1", "a 61-token card target", B,
             _set("tokens.card.target", 61), "S000-CARD-TARGET"),
    Mutation("card-cap-1", "a 79-token card cap", B,
             _set("tokens.card.hard_cap", 79), "S000-CARD-HARD-CAP"),
    Mutation("preamble+1", "a 33-token browse preamble", B,
             _set("tokens.browse_response.preamble", 33), "S000-BROWSE-PREAMBLE"),
    Mutation("summary+1", "a 501-character envelope summary", "firewall.yaml",
             _set("firewall.summary_max_chars", 501), "S002-SUMMARY-MAX"),
    # ---- meta-tool sets
    Mutation("gateway+hydrate", "tool_hydrate added to the gateway", P,
             _apply("profiles.gateway.meta_tools", lambda ts: [*ts, "tool_hydrate"]),
             "S000-GATEWAY-META-TOOLS"),
    Mutation("gateway-view", "tool_view removed from the gateway", P,
             _apply("profiles.gateway.meta_tools", lambda ts: [t for t in ts if t != "tool_view"]),
             "S000-GATEWAY-META-TOOLS"),
    Mutation("transparent-hydrate", "tool_hydrate removed from the transparent proxy", P,
             _apply("profiles.transparent.meta_tools",
                    lambda ts: [t for t in ts if t != "tool_hydrate"]),
             "S000-TRANSPARENT-META-TOOLS"),
    Mutation("search-batch", "batch removed from the search profile", P,
             _apply("profiles.search.meta_tools", lambda ts: [t for t in ts if t != "batch"]),
             "S003-SEARCH-META-TOOLS"),
    Mutation("search-subscription", "search hits may be subscriptions", M,
             _apply("models.SearchHit.schema.properties.type.enum",
                    lambda es: [*es, "subscription"]),
             "S003-SUBSCRIPTIONS-EXCLUDED"),
    Mutation("schema-no-output", "schema answers no output schema", M,
             _apply("models.HydrationResult.schema.properties",
                    lambda ps: {k: v for k, v in ps.items() if k != "output_schema"}),
             "S003-SCHEMA-ERROR-SCHEMAS"),
    Mutation("call-input-renamed", "call's input renamed arguments", P,
             _apply("meta_tools.call.input_schema.properties",
                    lambda ps: {("arguments" if k == "input" else k): v for k, v in ps.items()}),
             "S003-CALL-ARGUMENTS"),
    Mutation("execute-args-renamed", "tool_execute's args renamed arguments", P,
             _apply("meta_tools.tool_execute.input_schema.properties",
                    lambda ps: {("arguments" if k == "args" else k): v for k, v in ps.items()}),
             "S000-EXECUTE-ARGUMENTS"),
    # ---- character classes
    Mutation("namespace-dot", "a dot allowed in namespaces", G,
             _set("grammars.namespace.syntax.1.set", "a-z0-9_.-"), "S000-GRAMMAR-NAMESPACE"),
    Mutation("name-leading-digit", "names may start with a digit", G,
             _set("grammars.name.syntax.0.set", "A-Za-z0-9_"), "S000-GRAMMAR-NAME"),
    Mutation("hash8-upper", "upper-case hex in hash8", G,
             _set("grammars.hash8.syntax.0.set", "0-9a-fA-F"), "S000-GRAMMAR-HASH8"),
    Mutation("separator-single", "aggregate names split at a single underscore", G,
             _set("grammars.aggregate_name.syntax.1.lit", "_"), "S004-SEPARATOR"),
    # ---- error codes
    Mutation("path-error-code", "a malformed path answers ARGS_INVALID", G,
             _set("grammars.path.error", "ARGS_INVALID"), "S000-PATH-INVALID-CODE"),
    Mutation("browse-no-not-found", "tool_browse can no longer answer PATH_NOT_FOUND", P,
             _apply("meta_tools.tool_browse.errors",
                    lambda cs: [c for c in cs if c != "PATH_NOT_FOUND"]),
             "S000-BROWSE-ERRORS"),
    Mutation("execute-name-invalid", "tool_execute may answer NAME_INVALID", P,
             _apply("meta_tools.tool_execute.errors", lambda cs: [*cs, "NAME_INVALID"]),
             "S002-ERROR-CODE-UNION"),
    Mutation("error-path-optional", "an error payload without path", M,
             _apply("models.ErrorPayload.schema.required",
                    lambda rs: [r for r in rs if r != "path"]),
             "S000-ERROR-REQUIRED"),
    # ---- card shape, ordering, rendering rules
    Mutation("card-icon", "a card field the seed does not list", M,
             _apply(CARD, lambda ps: {**ps, "icon": {"type": "string"}}), "S000-CARD-FIELDS"),
    Mutation("card-kind", "agent is no longer a card kind", M,
             _set(f"{CARD}.kind.enum", ["tool", "skill", "internal"]), "S000-CARD-KINDS"),
    Mutation("banned-inputschema", "inputSchema no longer banned", "cards.yaml",
             _apply("banned.fields", lambda fs: [f for f in fs if f != "inputSchema"]),
             "S000-BANNED-FIELDS"),
    Mutation("ellipsis", "three dots instead of the ellipsis", "cards.yaml",
             _set("truncation.ellipsis", "..."), "S000-TRUNC-ELLIPSIS"),
    Mutation("score-ascending", "cards ordered by ascending score", "browse.yaml",
             _set("ordering.default.0.order", "asc"), "S000-ORDERING"),
    Mutation("seen-descending", "the seen prefix sorted descending", "browse.yaml",
             _set("cache_stable.seen_prefix_order.order", "desc"), "S000-CACHE-SEEN-ORDER"),
    Mutation("marker-id", "another cache marker id", G,
             _set("grammars.cache_marker_id.syntax.0.lit", "__cache_marker__"),
             "S000-CACHE-MARKER-ID"),
    Mutation("read-only-tag", "readOnlyHint tagged readonly", "cards.yaml",
             _set("annotations.readOnlyHint.tag", "readonly"), "S002-READ-ONLY"),
    Mutation("sentinel-schema", "stripped entries carry properties", P,
             _set("stripped_entry.input_schema", {"type": "object", "properties": {}}),
             "S000-STRIPPED-SCHEMA"),
    # ---- wrong expected answers
    Mutation("vector-server-key", "server_key example answers WRONG", "vectors.yaml",
             _case("server_keys.json", "key/upper", lambda c: c.update(expect={"ok": "WRONG"})),
             "key/upper"),
    Mutation("vector-star", "a nonsense path parsed with star", "vectors.yaml",
             _case("paths.json", "parse/double-star",
                   lambda c: c.update(expect={"ok": {"segments": ["github"], "star": True}})),
             "parse/double-star"),
    Mutation("vector-code", "a rejection answering FORBIDDEN", "vectors.yaml",
             _case("aggregate_names.json", "reject/not-namespaced",
                   lambda c: c.update(expect={"error": "FORBIDDEN"})),
             "reject/not-namespaced"),
    Mutation("vector-aggregate", "an aggregate name routed to server WRONG", "vectors.yaml",
             _case("aggregate_names.json", "parse/read_file",
                   lambda c: c.update(expect={"ok": {"server": "WRONG", "tool": "read_file"}})),
             "parse/read_file"),
    Mutation("vector-resource-uri", "a namespaced URI split at its last +", "vectors.yaml",
             _case("resource_uris.json", "parse/scheme-with-plus",
                   lambda c: c.update(expect={"ok": {"server": "vcs+git",
                                                     "uri": "ssh://example.com/repo.git"}})),
             "parse/scheme-with-plus"),
    Mutation("resource-uri-underscore", "resource URIs' server part admits _", G,
             _set("grammars.resource_uri.syntax.0", {"set": "a-z_", "min": 1, "max": 32}),
             "my_server+file:///x"),
    Mutation("vector-hash8", "a hash8 that §1.3's code does not give", "vectors.yaml",
             _case("hash8.json", "hash8/order", lambda c: c.update(expect={"ok": "a19c1a6d"})),
             "hash8/order"),
    Mutation("grammar-example", "a malformed path listed as valid", G,
             _apply("grammars.path.valid", lambda vs: [*vs, "/github/"]), "'/github/'"),
    # ---- evidence and bookkeeping
    Mutation("check-removed", "a requirement loses its checks", "requirements.yaml",
             _requirement("CARD-TAGS-MAX-5", lambda r: r.update(checks=[])), "CARD-TAGS-MAX-5"),
    Mutation("check-renamed", "a requirement cites a test that does not exist",
             "requirements.yaml",
             _requirement("ORDER-TIE-ID-ASC", lambda r: r.update(
                 checks=["tests/runtime/test_cards.py::test_no_such_test"])),
             "test_no_such_test"),
    Mutation("extension-dropped", "a bound loses its reason", "extensions.yaml",
             lambda d: d["extensions"]["firewall.yaml"].pop("firewall.view_max_chars"),
             "firewall.view_max_chars"),
    Mutation("amendment-dropped", "the amendment behind the 235 cap removed", "amendments.yaml",
             _apply("amendments", lambda a: {k: v for k, v in a.items() if k != "AM-TOOLID-CAP"}),
             "AM-TOOLID-CAP"),
    # ==== issue 21's escape classes, one or more edits each
    # ---- 1. required-ness and types
    Mutation("hydrate-not-required", "tool_hydrate no longer requires tool_id", P,
             _apply("meta_tools.tool_hydrate.input_schema", lambda s: {k: v for k, v in s.items()
                                                                      if k != "required"}),
             "S000-HYDRATE-REQUIRED"),
    Mutation("view-not-required", "tool_view no longer requires handle", P,
             _set("meta_tools.tool_view.input_schema.required", []), "S000-VIEW-REQUIRED"),
    Mutation("call-not-required", "call no longer requires operation", P,
             _set("meta_tools.call.input_schema.required", []), "S003-CALL-REQUIRED"),
    Mutation("has-schema-nullable", "a card's has_schema may be null", M,
             _set(f"{CARD}.has_schema", {"anyOf": [{"type": "boolean"}, {"type": "null"}]}),
             "S000-CARD-HAS-SCHEMA-BOOLEAN"),
    Mutation("side-effects-string", "a card's side_effects is a string", M,
             _set(f"{CARD}.side_effects.type", "string"), "S000-CARD-SIDE-EFFECTS-BOOL"),
    Mutation("search-type-optional", "a search hit's type is optional", M,
             _drop("models.SearchHit.schema.required", "type"), "S003-SEARCH-FIELDS-REQUIRED"),
    Mutation("card-score-required", "a card must carry a score", M,
             _apply("models.ChoiceCard.schema.required", lambda rs: [*rs, "score"]),
             "S000-CARD-SCORE-OPTIONAL"),
    # ---- 2. comparisons that see both directions
    Mutation("hydrate-no-hydrate-failed", "tool_hydrate can no longer answer HYDRATE_FAILED", P,
             _drop("meta_tools.tool_hydrate.errors", "HYDRATE_FAILED"), "S000-HYDRATE-FAILED"),
    Mutation("execute-no-timeout", "tool_execute can no longer answer TIMEOUT", P,
             _drop("meta_tools.tool_execute.errors", "TIMEOUT"), "S001-TIMEOUT-ON-EXECUTION"),
    Mutation("call-no-tool-not-found", "call can no longer answer TOOL_NOT_FOUND", P,
             _drop("meta_tools.call.errors", "TOOL_NOT_FOUND"), "S001-TOOL-NOT-FOUND-ON-CALLS"),
    Mutation("execute-no-args-invalid", "tool_execute can no longer answer ARGS_INVALID", P,
             _drop("meta_tools.tool_execute.errors", "ARGS_INVALID"), "S000-EXECUTE-ARGS-INVALID"),
    Mutation("view-no-view-failed", "tool_view can no longer answer VIEW_FAILED", P,
             _drop("meta_tools.tool_view.errors", "VIEW_FAILED"), "S002-VIEW-FAILED"),
    Mutation("search-hit-schema", "search hits carry the input schema", M,
             _apply("models.SearchHit.schema.properties",
                    lambda ps: {**ps, "input_schema": {"type": "object"}}),
             "S003-SEARCH-NO-SCHEMAS"),
    Mutation("search-hit-extra", "search hits carry a field the seed does not list", M,
             _apply("models.SearchHit.schema.properties",
                    lambda ps: {**ps, "tool_id": {"type": "string"}}),
             "S003-SEARCH-FIELDS"),
    Mutation("status-no-ok", "the envelope status ok renamed success", M,
             _set("models.ResultEnvelope.schema.properties.status.enum", ["success", "error"]),
             "S002-STATUS"),
    # ---- 3. every place of a seed number
    Mutation("hydration-tags-10", "hydration results carry up to 10 tags", M,
             _set("models.HydrationResult.schema.properties.tags.maxItems", 10),
             "S000-TAGS-MAX-WHERE-CARDS-TAGS"),
    Mutation("summary-xbound-moved", "the envelope summary bound moved to another rule", M,
             _set("models.ResultEnvelope.schema.properties.summary.x-bound.maxLength",
                  "firewall.fact_max_chars"),
             "S002-SUMMARY-MAX"),
    Mutation("rule-text-literal", "a rule text writes the summary bound as 500", M,
             _set("models.ResultEnvelope.rules.summary_bound",
                  "The summary is at most 500 characters."),
             "states 500, the value of firewall.summary_max_chars"),
    Mutation("extension-reason-literal", "an extension reason writes the summary bound as 500",
             "extensions.yaml",
             lambda d: d["extensions"]["firewall.yaml"].update({
                 "firewall.text_artifact_threshold_chars":
                     "Text longer than the 500-character summary is kept whole."}),
             "states 500"),
    # ---- 4. requirement levels and literals
    Mutation("sse-endpoint-rewritten", "the SSE endpoint requirement says /events", R,
             _requirement("TRANSPORT-SSE-ENDPOINT",
                          lambda r: r.update(text=r["text"].replace("/sse", "/events"))),
             "S001-LITERAL-SSE-ENDPOINT"),
    Mutation("messages-rewritten", "the endpoint event points to /msg?session=", R,
             _requirement("TRANSPORT-SSE-ENDPOINT", lambda r: r.update(
                 text=r["text"].replace("/messages?sessionId=", "/msg?session="))),
             "S001-LITERAL-SSE-ENDPOINT"),
    Mutation("shall-to-may", "the call timeout becomes a MAY", R,
             _requirement("ROUTE-TIMEOUT", lambda r: r.update(level="MAY")),
             "S001-LEVEL-POLICIES"),
    Mutation("must-not-to-should-not", "banned schemas on cards become a SHOULD NOT", R,
             _requirement("CARD-NO-SCHEMAS", lambda r: r.update(level="SHOULD NOT")),
             "S000-LEVEL-BANNED"),
    Mutation("summary-other-error", "PATH_NOT_FOUND's summary describes a malformed path",
             "errors.yaml",
             _set("codes.PATH_NOT_FOUND.summary", "The browse path is malformed."),
             "S000-LITERAL-PATH-NOT-FOUND"),
    # ---- 5. seed 000 §2.2's banned content
    Mutation("banned-examples", "examples no longer banned", "cards.yaml",
             _drop("banned.fields", "examples"), "S000-BANNED-EXAMPLES"),
    Mutation("banned-url", "server URLs no longer banned", "cards.yaml",
             _drop("banned.fields", "server_url"), "S000-BANNED-TRANSPORT"),
    # ---- 6. profile values the runtime reads
    Mutation("aggregate-lists-none", "the aggregate profile lists no upstream tools", P,
             _set("profiles.aggregate.lists_upstream_tools", "none"),
             "S004-AGGREGATE-LISTS-NAMESPACED"),
    Mutation("gateway-lists-stripped", "the gateway profile lists stripped entries", P,
             _set("profiles.gateway.lists_upstream_tools", "stripped"),
             "S002-GATEWAY-LISTS-NOTHING"),
    # ---- 7. the judge itself
    Mutation("fact-moved-with-spec", "card names up to 65 characters, the fact moved with it", M,
             _set(f"{CARD}.name.maxLength", 65), "S000-CARD-NAME-MAX",
             more=((F, _fact("S000-CARD-NAME-MAX", value=65)),)),
    Mutation("fact-quote-forged", "the fact's quote and value moved with the spec", M,
             _set(f"{CARD}.name.maxLength", 65), "is not in seed 000",
             more=((F, _fact("S000-CARD-NAME-MAX", value=65,
                             quote=["name— short display name (≤ 65 characters)."])),)),
    Mutation("inference-as-stated", "an inference credited to the seed's words", F,
             _fact("S003-FORBIDDEN-SCHEMA", kind="stated"), "S003-FORBIDDEN-SCHEMA"),
    Mutation("fact-wrong-section", "the timeout fact cites Tool Routing", F,
             _fact("S001-TIMEOUT", section="Tool Routing"), "S001-TIMEOUT"),
    Mutation("fact-dropped-quote", "a fact with no quote", F,
             _fact("S000-CARD-TAGS-MAX", quote=[]), "S000-CARD-TAGS-MAX"),
    # ---- 8. amendments checked against what they change
    Mutation("clarification-changes", "the 235 cap recorded as a clarification", A,
             _amendment("AM-TOOLID-CAP", kind="clarification"), "a clarification decides"),
    Mutation("amendment-other-seed", "the 235 cap cites seed 004", A,
             _amendment("AM-TOOLID-CAP", amends={"seed": "004", "section": "Error Handling"}),
             "S000-TOOLID-MAX-LENGTH sits in seed 000 §1.1"),
    # ---- 9. seed-stated behaviour changed by an amendment only
    Mutation("facts-64", "64 facts per envelope, AM-FACT-BOUNDS still says 32", "firewall.yaml",
             _set("firewall.max_facts", 64), "AM-FACT-BOUNDS says 32"),
    Mutation("page-size-unamended", "aggregate paging without its amendment's change", A,
             _amendment("AM-AGGREGATE-LISTING", changes={}), "S001-UNIFIED-LIST"),
    # ---- issue 20: amendments referenced
    Mutation("amendment-unreferenced", "the search_operation grammar no longer names its amendment",
             G, _apply("grammars.search_operation.amendments", lambda _: []),
             "AM-SEARCH-OPERATION-NAME: no grammar"),
    Mutation("vector-amendment-dropped", "a vector resting on AM-PATH-BOUNDS no longer says so", G,
             _apply("grammars.path.invalid",
                    lambda vs: [v["value"] if isinstance(v, dict) and v["value"] == "/*/github"
                                else v for v in vs]
),
             "'/*/github' is invalid only under an amendment"),
)  # fmt: skip


@dataclass(frozen=True)
class Outcome:
    mutation: Mutation
    caught: bool
    detail: str  # the generation error (or why it does not count)


@contextmanager
def _spec_copy(spec_dir: Path) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="gatespec-mutant-") as tmp:
        copy = Path(tmp) / "spec"
        shutil.copytree(spec_dir, copy)
        yield copy


def _mutate(spec_dir: Path, mutation: Mutation) -> None:
    for file, edit in ((mutation.file, mutation.edit), *mutation.more):
        path = spec_dir / file
        data = yaml.load(
            path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        )
        edit(data)
        path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


def _generate(spec_dir: Path, root: Path) -> None:
    """What `python -m generator` does, without the formatter (it changes no behaviour)."""
    gen = Generator(load_spec(spec_dir), root)
    gen.static_checks()
    with tempfile.TemporaryDirectory(prefix="gatespec-mutant-out-") as out:
        gen.render_to(Path(out), format_code=False)


def run(mutation: Mutation, spec_dir: Path, root: Path) -> Outcome:
    with _spec_copy(spec_dir) as copy:
        _mutate(copy, mutation)
        try:
            _generate(copy, root)
        except (SpecError, SpecErrors) as exc:
            text = str(exc)
            if mutation.expect in text:
                return Outcome(mutation, True, text.splitlines()[0])
            return Outcome(mutation, False, f"failed for another reason: {text.splitlines()[0]}")
    return Outcome(mutation, False, "generation succeeded")


def score(spec_dir: Path, root: Path, report: Callable[[str], None] = print) -> list[Outcome]:
    outcomes = []
    for mutation in MUTATIONS:
        outcome = run(mutation, spec_dir, root)
        outcomes.append(outcome)
        mark = "caught" if outcome.caught else "MISSED"
        report(f"{mark:7} {mutation.id:24} {mutation.what}\n        {outcome.detail[:160]}")
    caught = sum(o.caught for o in outcomes)
    report(
        f"\nspec mutation score: {caught}/{len(outcomes)} caught ({100 * caught // len(outcomes)}%)"
    )
    return outcomes
