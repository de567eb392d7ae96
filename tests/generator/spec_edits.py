"""A catalogue of spec edits, each with the classification `generator diff` must give it.

Every expectation was written before the diff ran, from the two parties' point of view
(docs/spec-evolution.md): whom the edit breaks (clients, implementations, both or none), and
the exact set of (where, kinds) lines the diff reports for it. Compatible edits are listed too,
so that a diff which calls everything breaking fails as surely as one that calls nothing
breaking.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from generator.mutations import _apply, _both, _set

Edit = Callable[[dict[str, Any]], None]
G, E, M, P = "grammars.yaml", "errors.yaml", "models.yaml", "profiles.yaml"
R, A, V = "requirements.yaml", "amendments.yaml", "vectors.yaml"
CARD = "models.ChoiceCard.schema.properties"


@dataclass(frozen=True)
class SpecEdit:
    id: str
    what: str
    edits: tuple[tuple[str, Edit], ...]  # (spec file, edit of its YAML)
    breaks: str  # whom the edit breaks: clients, implementations, both or none
    expect: tuple[tuple[str, tuple[str, ...]], ...]  # (where, kinds) of every reported change


def edit(
    id: str,
    what: str,
    *edits: tuple[str, Edit],
    breaks: str,
    expect: dict[str, tuple[str, ...]],
    also: tuple[tuple[str, tuple[str, ...]], ...] = (),
) -> SpecEdit:
    """`also`: further changes reported at a `where` that `expect` already names."""
    assert breaks in ("clients", "implementations", "both", "none"), breaks
    return SpecEdit(id, what, edits, breaks, (*expect.items(), *also))


def _drop(path: str, item: Any) -> Edit:
    return _apply(path, lambda xs: [x for x in xs if x != item])


def _add(path: str, item: Any) -> Edit:
    return _apply(path, lambda xs: [*xs, item])


def _put(path: str, key: str, value: Any) -> Edit:
    return _apply(path, lambda d: {**d, key: value})


def _pop(path: str, key: str) -> Edit:
    return _apply(path, lambda d: {k: v for k, v in d.items() if k != key})


def _rename_key(path: str, old: str, new: str) -> Edit:
    return _apply(path, lambda d: {(new if k == old else k): v for k, v in d.items()})


def _rename_item(path: str, old: str, new: str) -> Edit:
    return _apply(path, lambda xs: [new if x == old else x for x in xs])


def _requirement(rid: str, fn: Callable[[dict[str, Any]], None]) -> Edit:
    def change(data: dict[str, Any]) -> None:
        fn(next(r for r in data["requirements"] if r["id"] == rid))

    return change


def _vector(file: str, name: str, fn: Callable[[dict[str, Any]], None]) -> Edit:
    def change(data: dict[str, Any]) -> None:
        fn(next(c for c in data["cases"][file] if c["name"] == name))

    return change


SEARCH_TOOLS = ("search", "schema", "call", "batch")
FORBIDDEN_IN = tuple(f"meta_tools.{t}.errors" for t in SEARCH_TOOLS)
NEW_CODE = {
    "summary": "The caller has used up its quota.",
    "source": {"seed": "003", "section": "Decision 5"},
}
NEW_TOOL = {
    "source": {"seed": "000", "section": "4.2"},
    "description": "List the namespaces of the catalog.",
    "input_schema": {"type": "object", "additionalProperties": False, "properties": {}},
    "output": "BrowseResult",
    "errors": ["ARGS_INVALID"],
}
NEW_REQUIREMENT = {
    "id": "TEST-NEW-RULE",
    "level": "MUST",
    "source": {"seed": "000", "section": "4.2"},
    "scope": "runtime",
    "profiles": ["gateway"],
    "text": "A gateway answers within one second.",
}
GRAMMAR_BOTH = ("input.{0}", "output.{0}")
TOOL_ID_USES = ("input.{0}", "internal.{0}", "output.{0}")


def _kinds(pattern: tuple[str, ...], relation: str) -> tuple[str, ...]:
    return tuple(p.format(relation) for p in pattern)


EDITS: tuple[SpecEdit, ...] = (
    # ---- grammars: each compared as a language, classified by where it is used
    edit("path-cap-lowered", "paths capped at 200 characters (input and output)",
         (G, _set("grammars.path.max_length", 200)),
         breaks="both", expect={"grammars.path": _kinds(GRAMMAR_BOTH, "narrowed")}),
    edit("tag-shorter", "tags of at most 16 characters (output only)",
         (G, _set("grammars.tag.syntax.1.max", 15)),
         breaks="implementations", expect={"grammars.tag": ("internal.narrowed", "output.narrowed")}),
    edit("tag-upper-case", "upper-case letters in tags (output only)",
         (G, _set("grammars.tag.syntax.1.set", "a-zA-Z0-9_-")),
         breaks="clients", expect={"grammars.tag": ("internal.widened", "output.widened")}),
    edit("namespace-dot", "a dot in namespaces, and so in every grammar embedding them",
         (G, _set("grammars.namespace.syntax.1.set", "a-z0-9_.-")),
         breaks="both", expect={
             "grammars.namespace": _kinds(TOOL_ID_USES, "widened"),
             "grammars.tool_id": _kinds(TOOL_ID_USES, "widened"),
             "grammars.path": _kinds(GRAMMAR_BOTH, "widened"),
             "grammars.search_operation": _kinds(GRAMMAR_BOTH, "widened"),
         }),
    edit("hash8-rewritten", "hash8 written as two runs of 4 hex digits: the same language",
         (G, _set("grammars.hash8.syntax", [{"set": "0-9a-f", "min": 4, "max": 4},
                                            {"set": "0-9a-f", "min": 4, "max": 4}])),
         breaks="none", expect={"grammars.hash8": ("grammar.rewritten",),
                 "grammars.tool_id": ("grammar.rewritten",)}),
    edit("selector-head", "a new selector form head:N",
         (G, _add("grammars.view_selector.syntax.0.alt",
                  [{"lit": "head:"}, {"set": "0-9", "min": 1, "max": 9}])),
         breaks="both", expect={"grammars.view_selector": _kinds(GRAMMAR_BOTH, "widened")}),
    edit("handle-longer", "artifact handles of 20 hex digits instead of 16",
         (G, _apply("grammars.artifact_handle.syntax.1", lambda n: {**n, "min": 20, "max": 20})),
         breaks="both", expect={"grammars.artifact_handle": _kinds(GRAMMAR_BOTH, "changed")}),
    edit("path-error-code", "a malformed path answers ARGS_INVALID",
         (G, _set("grammars.path.error", "ARGS_INVALID")),
         breaks="both", expect={"grammars.path.error": ("error.grammar_code_changed",)}),
    # ---- error codes
    edit("code-added", "a new error code no meta-tool returns",
         (E, _put("codes", "QUOTA_EXCEEDED", NEW_CODE)),
         breaks="none", expect={"errors.QUOTA_EXCEEDED": ("error.code_added",)}),
    edit("code-returned", "tool_view may return a new code",
         (E, _put("codes", "QUOTA_EXCEEDED", NEW_CODE)),
         (P, _add("meta_tools.tool_view.errors", "QUOTA_EXCEEDED")),
         breaks="clients", expect={"errors.QUOTA_EXCEEDED": ("error.code_added",),
                 "meta_tools.tool_view.errors": ("error.returned_added",)}),
    edit("code-not-returned", "tool_browse no longer returns PATH_NOT_FOUND",
         (P, _drop("meta_tools.tool_browse.errors", "PATH_NOT_FOUND")),
         breaks="implementations", expect={"meta_tools.tool_browse.errors": ("error.returned_removed",)}),
    edit("code-removed", "FORBIDDEN removed everywhere",
         (E, _pop("codes", "FORBIDDEN")),
         (P, _both(*(_drop(path, "FORBIDDEN") for path in FORBIDDEN_IN))),
         breaks="implementations", expect={"errors.FORBIDDEN": ("error.code_removed",),
                 **{path: ("error.returned_removed",) for path in FORBIDDEN_IN}}),
    edit("code-renamed", "FORBIDDEN renamed ACCESS_DENIED everywhere",
         (E, _rename_key("codes", "FORBIDDEN", "ACCESS_DENIED")),
         (P, _both(*(_rename_item(path, "FORBIDDEN", "ACCESS_DENIED") for path in FORBIDDEN_IN))),
         breaks="both", expect={"errors.FORBIDDEN": ("error.code_removed", "error.code_added"),
                 **{path: ("error.returned_added",) for path in FORBIDDEN_IN}},
         also=tuple((path, ("error.returned_removed",)) for path in FORBIDDEN_IN)),
    # ---- meta-tools and profiles
    edit("tool-removed", "tool_view removed from the spec and its profiles",
         (P, _both(_pop("meta_tools", "tool_view"),
                   _drop("profiles.gateway.meta_tools", "tool_view"),
                   _drop("profiles.transparent.meta_tools", "tool_view"))),
         breaks="clients", expect={"meta_tools.tool_view": ("meta_tool.removed",),
                 "profiles.gateway.meta_tools": ("profile.meta_tool_removed",),
                 "profiles.transparent.meta_tools": ("profile.meta_tool_removed",)}),
    edit("tool-added", "a new meta-tool the gateway profile serves",
         (P, _both(_put("meta_tools", "tool_namespaces", NEW_TOOL),
                   _add("profiles.gateway.meta_tools", "tool_namespaces"))),
         breaks="implementations", expect={"meta_tools.tool_namespaces": ("meta_tool.added",),
                 "profiles.gateway.meta_tools": ("profile.meta_tool_added",)}),
    edit("tool-defined", "a new meta-tool no profile serves",
         (P, _put("meta_tools", "tool_namespaces", NEW_TOOL)),
         breaks="none", expect={"meta_tools.tool_namespaces": ("meta_tool.added",)}),
    edit("tool-renamed", "tool_view renamed tool_read everywhere",
         (P, _both(_rename_key("meta_tools", "tool_view", "tool_read"),
                   _rename_item("profiles.gateway.meta_tools", "tool_view", "tool_read"),
                   _rename_item("profiles.transparent.meta_tools", "tool_view", "tool_read"))),
         breaks="both", expect={"meta_tools.tool_view": ("meta_tool.removed", "meta_tool.added"),
                 "profiles.gateway.meta_tools": ("profile.meta_tool_added",),
                 "profiles.transparent.meta_tools": ("profile.meta_tool_added",)},
         also=(("profiles.gateway.meta_tools", ("profile.meta_tool_removed",)),
               ("profiles.transparent.meta_tools", ("profile.meta_tool_removed",)))),
    edit("description-reworded", "tool_browse's description reworded",
         (P, _set("meta_tools.tool_browse.description", "Find tools by query or by path.")),
         breaks="none", expect={"meta_tools.tool_browse.description": ("meta_tool.description_changed",)}),
    edit("profile-serves-more", "the search profile serves tool_view too",
         (P, _add("profiles.search.meta_tools", "tool_view")),
         breaks="implementations", expect={"profiles.search.meta_tools": ("profile.meta_tool_added",)}),
    # ---- meta-tool arguments (inputs)
    edit("argument-added", "tool_view takes an optional encoding",
         (P, _put("meta_tools.tool_view.input_schema.properties", "encoding",
                  {"enum": ["text", "base64"]})),
         breaks="implementations", expect={"meta_tools.tool_view.input.encoding": ("input.field_added",)}),
    edit("required-argument-added", "tool_hydrate requires a reason",
         (P, _both(_put("meta_tools.tool_hydrate.input_schema.properties", "reason", {"type": "string"}),
                   _add("meta_tools.tool_hydrate.input_schema.required", "reason"))),
         breaks="both", expect={"meta_tools.tool_hydrate.input.reason": ("input.required_field_added",)}),
    edit("argument-removed", "search no longer takes a namespace",
         (P, _pop("meta_tools.search.input_schema.properties", "namespace")),
         breaks="clients", expect={"meta_tools.search.input.namespace": ("input.field_removed",)}),
    edit("argument-renamed", "tool_execute's args renamed arguments",
         (P, _rename_key("meta_tools.tool_execute.input_schema.properties", "args", "arguments")),
         breaks="both", expect={"meta_tools.tool_execute.input.args": ("input.field_removed", "input.field_added")}),
    edit("argument-now-required", "tool_view's selector required",
         (P, _add("meta_tools.tool_view.input_schema.required", "selector")),
         breaks="clients", expect={"meta_tools.tool_view.input.selector": ("input.field_now_required",)}),
    edit("argument-now-optional", "tool_view's handle optional",
         (P, _drop("meta_tools.tool_view.input_schema.required", "handle")),
         breaks="implementations", expect={"meta_tools.tool_view.input.handle": ("input.field_now_optional",)}),
    edit("default-changed", "search returns 20 hits by default",
         (P, _set("meta_tools.search.input_schema.properties.limit.default", 20)),
         breaks="both", expect={"meta_tools.search.input.limit": ("input.default_changed",)}),
    edit("query-cap-lowered", "tool_browse refuses queries over 1000 characters",
         (P, _set("meta_tools.tool_browse.input_schema.properties.query.maxLength", 1000)),
         breaks="clients", expect={"meta_tools.tool_browse.input.query": ("input.narrowed",)}),
    edit("query-cap-raised", "tool_browse takes queries of up to 128 KiB",
         (P, _set("meta_tools.tool_browse.input_schema.properties.query.maxLength", 131072)),
         breaks="implementations", expect={"meta_tools.tool_browse.input.query": ("input.widened",)}),
    edit("wire-name-refused", "tool_execute takes canonical tool ids only",
         (P, _set("meta_tools.tool_execute.input_schema.properties.tool_id.x-grammar", "tool_id")),
         breaks="clients", expect={"meta_tools.tool_execute.input.tool_id": ("input.narrowed",)}),
    edit("exactly-one-dropped", "tool_browse no longer requires exactly one of query and path",
         (P, _pop("meta_tools.tool_browse.input_schema", "x-exactly-one-of")),
         breaks="implementations", expect={"meta_tools.tool_browse.input": ("input.widened",)}),
    edit("limit-number", "search's limit may be any number",
         (P, _set("meta_tools.search.input_schema.properties.limit.type", "number")),
         breaks="implementations", expect={"meta_tools.search.input.limit": ("input.widened",)}),
    # ---- results (outputs)
    edit("result-field-removed", "ViewResult loses truncated",
         (M, _pop("models.ViewResult.schema.properties", "truncated")),
         breaks="both", expect={"models.ViewResult.truncated": ("output.field_removed",)}),
    edit("result-field-added", "ViewResult gains an optional media_type",
         (M, _put("models.ViewResult.schema.properties", "media_type", {"type": "string"})),
         breaks="none", expect={"models.ViewResult.media_type": ("output.field_added",)}),
    edit("result-required-field-added", "every search hit names its server",
         (M, _both(_put("models.SearchHit.schema.properties", "server", {"type": "string"}),
                   _add("models.SearchHit.schema.required", "server"))),
         breaks="implementations", expect={"models.SearchHit.server": ("output.required_field_added",)}),
    edit("card-field-optional", "a card may leave has_schema out",
         (M, _drop("models.ChoiceCard.schema.required", "has_schema")),
         breaks="clients", expect={"models.ChoiceCard.has_schema": ("output.field_now_optional",)}),
    edit("card-description-shorter", "card descriptions of at most 1024 characters",
         (M, _set(f"{CARD}.description.maxLength", 1024)),
         breaks="implementations", expect={"models.ChoiceCard.description": ("output.narrowed",)}),
    edit("card-name-longer", "card names of up to 128 characters",
         (M, _set(f"{CARD}.name.maxLength", 128)),
         breaks="clients", expect={"models.ChoiceCard.name": ("output.widened",)}),
    edit("card-kind-added", "a card kind prompt",
         (M, _add(f"{CARD}.kind.enum", "prompt")),
         breaks="clients", expect={"models.ChoiceCard.kind": ("output.widened",)}),
    edit("encoding-dropped", "tool_view never answers base64",
         (M, _set("models.ViewResult.schema.properties.encoding.enum", ["text"])),
         breaks="implementations", expect={"models.ViewResult.encoding": ("output.narrowed",)}),
    edit("call-result-model", "call returns a ResultEnvelope instead of the upstream result",
         (P, _both(_set("meta_tools.call.output", "ResultEnvelope"),
                   _pop("meta_tools.call", "result"))),
         breaks="both", expect={"meta_tools.call.output": ("output.model_replaced",)}),
    edit("internal-field-added", "ToolIdParts requires a server (a model no meta-tool returns)",
         (M, _both(_put("models.ToolIdParts.schema.properties", "server", {"type": "string"}),
                   _add("models.ToolIdParts.schema.required", "server"))),
         breaks="implementations", expect={"models.ToolIdParts.server": ("internal.required_field_added",)}),
    # ---- rules
    edit("card-cap-raised", "a card may cost 100 tokens",
         ("budgets.yaml", _set("tokens.card.hard_cap", 100)),
         breaks="clients", expect={"rules.tokens.card.hard_cap": ("output.widened",)}),
    edit("card-cap-lowered", "a card may cost 70 tokens",
         ("budgets.yaml", _set("tokens.card.hard_cap", 70)),
         breaks="implementations", expect={"rules.tokens.card.hard_cap": ("output.narrowed",)}),
    edit("top-k-lowered", "search's limit at most 20 (an x-bound of an input)",
         ("browse.yaml", _set("browse.max_top_k", 20)),
         breaks="clients", expect={"rules.browse.max_top_k": ("input.narrowed",)}),
    edit("summary-shorter", "envelope summaries of 400 characters (an x-bound of an output)",
         ("firewall.yaml", _set("firewall.summary_max_chars", 400)),
         breaks="implementations", expect={"rules.firewall.summary_max_chars": ("output.narrowed",)}),
    edit("ellipsis", "three dots instead of the ellipsis",
         ("cards.yaml", _set("truncation.ellipsis", "...")),
         breaks="both", expect={"rules.truncation.ellipsis": ("behaviour.changed",)}),
    edit("wire-escape", "':' escaped as -c in wire names",
         (P, _set("wire_encoding.escapes.:", "-c")),
         breaks="both", expect={"profiles.wire_encoding.escapes.:": ("behaviour.changed",)}),
    # ---- records
    edit("amendment-added", "a new amendment",
         (A, _put("amendments", "AM-TEST", {
             "title": "A test decision", "amends": {"seed": "000", "section": "4.2"},
             "kind": "clarification", "decision": "Decided.", "rationale": "Because."})),
         breaks="none", expect={"amendments.AM-TEST": ("amendment.added",)}),
    edit("amendment-reworded", "an amendment's rationale reworded",
         (A, _set("amendments.AM-TOOLID-CAP.rationale", "240 cannot be reached.")),
         breaks="none", expect={"amendments.AM-TOOLID-CAP": ("amendment.changed",)}),
    edit("requirement-added", "a new MUST",
         (R, _add("requirements", NEW_REQUIREMENT)),
         breaks="implementations", expect={"requirements.TEST-NEW-RULE": ("requirement.added",)}),
    edit("requirement-advisory", "a new SHOULD",
         (R, _add("requirements", {**NEW_REQUIREMENT, "level": "SHOULD"})),
         breaks="none", expect={"requirements.TEST-NEW-RULE": ("requirement.advisory",)}),
    edit("requirement-removed", "a MUST withdrawn",
         (R, _apply("requirements", lambda rs: [r for r in rs if r["id"] != "TOOLID-COLLISION-ERROR"])),
         breaks="clients", expect={"requirements.TOOLID-COLLISION-ERROR": ("requirement.removed",)}),
    edit("requirement-weakened", "a MUST became a SHOULD",
         (R, _requirement("TOOLID-COLLISION-ERROR", lambda r: r.update(level="SHOULD"))),
         breaks="clients", expect={"requirements.TOOLID-COLLISION-ERROR": ("requirement.weakened",)}),
    edit("vector-answer", "an expected answer changed",
         (V, _vector("server_keys.json", "key/upper", lambda c: c.update(expect={"ok": "GitHub"}))),
         breaks="both", expect={"vectors.server_keys.json": ("vector.answer_changed",)}),
    edit("bookkeeping", "an extension's reason reworded",
         ("extensions.yaml", lambda d: d["extensions"]["firewall.yaml"].update(
             {"firewall.max_facts": "Reworded."})),
         breaks="none", expect={"files": ("bookkeeping",)}),
)  # fmt: skip
