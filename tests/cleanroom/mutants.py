"""Seed-breaking mutants of the clean-room implementations: each breaks one MUST of a seed the
way real implementations do, by patching the implementation inside the process that runs it
(tests/cleanroom/launch.py --mutant NAME); the implementations' files never change.

`MUTANTS[impl][name]` is the patch. tests/cleanroom/test_mutants.py pairs every name with the
kit family that must catch it at --level seed and the requirement its failures must name.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import Any


def _m(module: str) -> Any:
    return importlib.import_module(module)


# ------------------------------------------------------------------ tollbooth (seeds 000/002)


def tb_approx_tokens() -> None:
    """Token counts estimated as characters / 4 (the encoder 'could not load')."""
    tokens, cards = _m("tollbooth.tokens"), _m("tollbooth.cards")

    def encode(text: str) -> list[int]:
        return list(range(len(text) // 4))

    tokens.encode = encode
    cards.encode = encode
    cards.count_tokens = lambda text: len(text) // 4


def tb_special_token_crash() -> None:
    """cl100k_base's special-token spellings raise instead of counting as text."""
    tokens, cards = _m("tollbooth.tokens"), _m("tollbooth.cards")

    def encode(text: str) -> list[int]:
        return tokens.get_encoding().encode(text)  # tiktoken refuses <|endoftext|> by default

    tokens.encode = encode
    cards.encode = encode


def tb_trailing_newline() -> None:
    """The tool_id grammar checked with re.match and '$', which also matches before a final \\n."""
    toolid = _m("tollbooth.toolid")
    loose = re.compile(toolid._TOOL_ID.pattern + "$")

    class Loose:
        def fullmatch(self, s: str) -> Any:
            m = loose.match(s)
            return m

    toolid._TOOL_ID = Loose()


def tb_hash_unsorted() -> None:
    """§1.3's canonical shape keeps the upstream's property order instead of sorting it."""
    toolid = _m("tollbooth.toolid")
    import json

    def canonical_shape(schema: Any) -> str:
        props = list((schema.get("properties") or {}).keys())
        required = list(schema.get("required") or [])
        return json.dumps({"properties": props, "required": required}, separators=(",", ":"))

    toolid.canonical_shape = canonical_shape


def tb_no_ellipsis() -> None:
    """§2.4's hard cut leaves out the '…'."""
    cards = _m("tollbooth.cards")
    real = cards.truncate_description

    def truncate(text: str, budget: int) -> str:
        out = real(text, budget)
        return out[:-1] if out.endswith("…") and out != text else out

    cards.truncate_description = truncate
    _m("tollbooth.surface").truncate_description = truncate


def tb_path_trailing_slash() -> None:
    """A trailing '/' is accepted as if it were absent."""
    paths = _m("tollbooth.paths")
    real = paths.parse_path

    def parse_path(path: Any) -> tuple[str, ...]:
        if isinstance(path, str) and len(path) > 1 and path.endswith("/"):
            path = path[:-1]
        return real(path)

    paths.parse_path = parse_path
    _m("tollbooth.runtime").parse_path = parse_path
    _m("tollbooth.surface").parse_path = parse_path


def tb_path_uppercase() -> None:
    """Path segments accept capitals (§3.2: case-sensitive lowercase)."""
    paths = _m("tollbooth.paths")
    paths.SEGMENT_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
    toolid = _m("tollbooth.toolid")
    toolid._NAMESPACE = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")


def tb_root_small_catalog() -> None:
    """Browsing '/' answers nothing for a catalog of fewer than 100 tools."""
    catalog = _m("tollbooth.catalog")
    real = catalog.Catalog.browse_path

    def browse_path(self: Any, segments: tuple[str, ...]) -> list[Any]:
        if segments == () and len(self.entries) < 100:
            return []
        return real(self, segments)

    catalog.Catalog.browse_path = browse_path


def tb_both_arguments() -> None:
    """tool_browse given both query and path uses the query instead of refusing (§3.1)."""
    runtime = _m("tollbooth.runtime")
    real = runtime.ProxyRuntime.browse

    def browse(self: Any, arguments: Any) -> list[Any]:
        args = dict(arguments or {})
        if "query" in args and "path" in args:
            args.pop("path")
        return real(self, args)

    runtime.ProxyRuntime.browse = browse


def tb_args_unvalidated() -> None:
    """tool_execute forwards arguments upstream without checking them (§4.4)."""
    jsonschema = _m("jsonschema")
    runtime = _m("tollbooth.runtime")

    class Lenient:
        def __init__(self, schema: Any) -> None:
            pass

        def iter_errors(self, args: Any) -> list[Any]:
            return []

    class Validators:
        @staticmethod
        def validator_for(schema: Any, default: Any = None) -> Any:
            return Lenient

    class Shim:
        validators = Validators

        def __getattr__(self, name: str) -> Any:
            return getattr(jsonschema, name)

    runtime.jsonschema = Shim()


def tb_order_reversed() -> None:
    """Browse results come lowest score first (§2.5 says descending, ties by id)."""
    cards, catalog = _m("tollbooth.cards"), _m("tollbooth.catalog")
    real = cards.order_cards

    def order_cards(found: Any) -> list[Any]:
        return list(reversed(real(found)))

    catalog.order_cards = order_cards


def tb_schema_on_card() -> None:
    """Cards carry the tool's input schema (§2.2 bans it)."""
    cards, server = _m("tollbooth.cards"), _m("tollbooth.server")
    real = cards.ChoiceCard.to_dict

    def to_dict(self: Any) -> dict[str, Any]:
        return {**real(self), "inputSchema": {"type": "object"}}

    cards.ChoiceCard.to_dict = to_dict
    real_render = server.render_browse

    def render_browse(found: Any) -> str:
        return real_render(found).replace("]", '; inputSchema: {"type": "object"}]')

    server.render_browse = render_browse


def tb_marker_always() -> None:
    """The cache breakpoint is emitted on every browse, even the first (§5.3)."""
    cards, runtime = _m("tollbooth.cards"), _m("tollbooth.runtime")
    real = cards.cache_stable_order

    def order(found: Any, seen: Any) -> list[Any]:
        out = real(found, seen)
        if not any(c.id == "__cache_breakpoint__" for c in out):
            out.insert(0, cards.make_breakpoint_card())
        return out

    runtime.cache_stable_order = order


def tb_one_bad_schema_drops_server() -> None:
    """One upstream tool whose schema cannot be used makes the whole upstream's listing go."""
    catalog = _m("tollbooth.catalog")
    real = catalog.Catalog.from_upstreams.__func__

    def from_upstreams(cls: Any, listings: Any, namespaces: Any = None) -> Any:
        kept = {}
        for server, tools in listings.items():
            tools = list(tools)
            bad = any(
                catalog.schema_problem(t.get("inputSchema")) for t in tools if isinstance(t, dict)
            )
            kept[server] = [] if bad else tools
        return real(cls, kept, namespaces)

    catalog.Catalog.from_upstreams = classmethod(from_upstreams)


def tb_tool_dropped() -> None:
    """An upstream tool named `structured` is silently left out of the catalog (as if a name
    check mistook it for a reserved word)."""
    catalog = _m("tollbooth.catalog")
    real = catalog.Catalog.from_upstreams.__func__

    def from_upstreams(cls: Any, listings: Any, namespaces: Any = None) -> Any:
        kept = {
            s: [t for t in tools if t.get("name") != "structured"] for s, tools in listings.items()
        }
        return real(cls, kept, namespaces)

    catalog.Catalog.from_upstreams = classmethod(from_upstreams)


def tb_annotation_crash() -> None:
    """An untrusted costHint is converted without a type check (costHint null raises)."""
    catalog = _m("tollbooth.catalog")
    real = catalog.tool_card

    def tool_card(tool_id: str, tool: Any, has_schema: bool) -> Any:
        ann = tool.get("annotations") or {}
        if "costHint" in ann:
            float(ann["costHint"])  # raises on None, strings, objects
        return real(tool_id, tool, has_schema)

    catalog.tool_card = tool_card


def tb_no_facts() -> None:
    """structuredContent's top-level keys never become facts (seed 002)."""
    results = _m("tollbooth.results")
    real = results.mcp_result_to_envelope

    def to_envelope(result: Any, tool_name: str) -> Any:
        envelope, binaries, text = real(result, tool_name)
        envelope.facts = []
        return envelope, binaries, text

    results.mcp_result_to_envelope = to_envelope


def tb_summary_uncapped() -> None:
    """The envelope summary carries the whole text (seed 002: at most 500 characters)."""
    results = _m("tollbooth.results")
    results.summarize = lambda text, limit=0: text


def tb_error_no_path() -> None:
    """Error payloads leave out §3.4's `path` field."""
    errors = _m("tollbooth.errors")
    real = errors.GatewayError.to_dict

    def to_dict(self: Any) -> dict[str, Any]:
        body = dict(real(self))
        body.pop("path", None)
        return body

    errors.GatewayError.to_dict = to_dict


def tb_not_found_as_invalid() -> None:
    """A well-formed path that does not exist answers PATH_INVALID (§3.4: PATH_NOT_FOUND)."""
    catalog = _m("tollbooth.catalog")
    catalog.PATH_NOT_FOUND = "PATH_INVALID"


def tb_budget_on_description() -> None:
    """The card budget is counted on the description alone, not on the rendered card (§2.3)."""
    cards = _m("tollbooth.cards")
    real_count = cards.count_tokens
    cards.card_tokens = lambda card: real_count(card.description)


def tb_stripped_name_hashless() -> None:
    """The transparent proxy's stripped entries are named without the #hash8 (§4.1: the tool_id)."""
    server = _m("tollbooth.server")
    real = server.TollboothServer._tool_list

    def tool_list(self: Any, stripped: bool = True) -> list[Any]:
        tools = real(self, stripped)
        for tool in tools:
            tool.name = tool.name.split("#")[0]
        return tools

    server.TollboothServer._tool_list = tool_list


def tb_tags_unsorted() -> None:
    """Card validation accepts unsorted, duplicated tags (§2.1: sorted, deduplicated)."""
    cards = _m("tollbooth.cards")
    real = cards.validate_card_fields

    def validate(card: Any) -> None:
        real(cards.replace(card, tags=tuple(sorted(set(card.tags)))))

    cards.validate_card_fields = validate


def tb_upstream_error_hidden() -> None:
    """An upstream that answers isError is reported as a success."""
    runtime = _m("tollbooth.runtime")
    real = runtime.ProxyRuntime.call

    async def call(self: Any, tool_id: Any, args: Any) -> dict[str, Any]:
        raw = await real(self, tool_id, args)
        return {**raw, "isError": False}

    runtime.ProxyRuntime.call = call


TOLLBOOTH: dict[str, Callable[[], None]] = {
    "approx-tokens": tb_approx_tokens,
    "special-token-crash": tb_special_token_crash,
    "trailing-newline": tb_trailing_newline,
    "hash-unsorted": tb_hash_unsorted,
    "no-ellipsis": tb_no_ellipsis,
    "path-trailing-slash": tb_path_trailing_slash,
    "path-uppercase": tb_path_uppercase,
    "root-small-catalog": tb_root_small_catalog,
    "both-arguments": tb_both_arguments,
    "args-unvalidated": tb_args_unvalidated,
    "order-reversed": tb_order_reversed,
    "schema-on-card": tb_schema_on_card,
    "marker-always": tb_marker_always,
    "one-bad-schema-drops-server": tb_one_bad_schema_drops_server,
    "tool-dropped": tb_tool_dropped,
    "annotation-crash": tb_annotation_crash,
    "no-facts": tb_no_facts,
    "summary-uncapped": tb_summary_uncapped,
    "error-no-path": tb_error_no_path,
    "not-found-as-invalid": tb_not_found_as_invalid,
    "budget-on-description": tb_budget_on_description,
    "stripped-name-hashless": tb_stripped_name_hashless,
    "tags-unsorted": tb_tags_unsorted,
    "upstream-error-hidden": tb_upstream_error_hidden,
}


# ------------------------------------------------------------------ switchyard (seeds 003, 001/004)


def sy_search_shows_all() -> None:
    """search lists every operation, whoever asks (seed 003 §5: filtered by AccessControl)."""
    search = _m("switchyard.search")

    class Everyone:
        @staticmethod
        def check(identity: Any, operation: str) -> bool:
            return True

    real = search.SearchProfile._search

    async def _search(self: Any, identity: Any, args: Any) -> Any:
        access, self.access = self.access, Everyone()
        try:
            return await real(self, identity, args)
        finally:
            self.access = access

    search.SearchProfile._search = _search


def sy_call_unchecked() -> None:
    """schema and call dispatch without the AccessControl check (seed 003 §5: FORBIDDEN);
    search still filters."""
    search = _m("switchyard.search")
    real = search.SearchProfile._lookup

    async def _lookup(self: Any, identity: Any, name: Any) -> Any:
        return await real(self, search.LOCAL_OPERATOR, name)

    search.LOCAL_OPERATOR = _m("switchyard.access").LOCAL_OPERATOR
    search.SearchProfile._lookup = _lookup


def sy_search_full_schemas() -> None:
    """search hits carry the operation's full input schema (seed 003 §3: not the full schemas)."""
    operations = _m("switchyard.operations")
    real = operations.Operation.summary

    def summary(self: Any, limit: int) -> dict[str, Any]:
        return {**real(self, limit), "inputSchema": self.input_schema}

    operations.Operation.summary = summary


def sy_batch_reversed() -> None:
    """batch answers in reverse order (seed 003 §4: an array of results for the array of calls)."""
    search = _m("switchyard.search")
    real = search.SearchProfile._batch

    async def _batch(self: Any, identity: Any, args: Any) -> Any:
        result = await real(self, identity, args)
        body = dict(result.structured_content)
        body["results"] = list(reversed(body["results"]))
        return search.types.CallToolResult(content=search.text(body), structured_content=body)

    search.SearchProfile._batch = _batch


def sy_route_to_first_server() -> None:
    """tools/call goes to the first configured server whatever the prefix says (seed 004)."""
    aggregate = _m("switchyard.aggregate")
    real = aggregate.AggregateProfile._route

    def _route(self: Any, qualified: str, what: str) -> Any:
        parsed = real(self, qualified, what)
        return type(parsed)(self.pool.keys()[0], parsed.name)

    aggregate.AggregateProfile._route = _route


def sy_names_not_namespaced() -> None:
    """tools/list offers the upstreams' clean names (seed 004: namespaced at the boundary)."""
    namespacing = _m("switchyard.namespacing")
    namespacing.apply_name = lambda server, name: name or None
    _m("switchyard.aggregate").ns.apply_name = namespacing.apply_name


def sy_namespaced_name_upstream() -> None:
    """The namespaced name is sent upstream instead of the clean one (seed 004, Principle 1)."""
    aggregate = _m("switchyard.aggregate")
    real = aggregate.AggregateProfile._route

    def _route(self: Any, qualified: str, what: str) -> Any:
        parsed = real(self, qualified, what)
        return type(parsed)(parsed.server, qualified) if what == "Tool" else parsed

    aggregate.AggregateProfile._route = _route
    real_resolve = aggregate.AggregateProfile._resolve

    async def _resolve(self: Any, kind: str, what: str, server: str, name: str, q: str) -> Any:
        clean = name.split("__", 1)[1] if "__" in name else name
        return await real_resolve(self, kind, what, server, clean, q)

    aggregate.AggregateProfile._resolve = _resolve


def sy_prompts_one_server() -> None:
    """prompts/list holds the first upstream's prompts only (seed 001: from all servers)."""
    aggregate = _m("switchyard.aggregate")
    real = aggregate.AggregateProfile.list_prompts

    async def list_prompts(self: Any, ctx: Any, params: Any) -> Any:
        result = await real(self, ctx, params)
        servers = sorted({p.name.split("__", 1)[0] for p in result.prompts})
        keep = (
            [p for p in result.prompts if p.name.split("__", 1)[0] == servers[0]] if servers else []
        )
        return result.model_copy(update={"prompts": keep})

    aggregate.AggregateProfile.list_prompts = list_prompts


def sy_unknown_tool_routed() -> None:
    """A tool the named server does not have is sent upstream anyway (seed 001: Tool not found)."""
    aggregate = _m("switchyard.aggregate")

    async def _resolve(self: Any, kind: str, what: str, server: str, name: str, q: str) -> Any:
        found = await self.registry.resolve(kind, server, name)
        if found is None:
            return aggregate.types.Tool(name=name, input_schema={"type": "object"})
        return found

    aggregate.AggregateProfile._resolve = _resolve


SWITCHYARD: dict[str, Callable[[], None]] = {
    "search-shows-all": sy_search_shows_all,
    "call-unchecked": sy_call_unchecked,
    "search-full-schemas": sy_search_full_schemas,
    "batch-reversed": sy_batch_reversed,
    "route-to-first-server": sy_route_to_first_server,
    "names-not-namespaced": sy_names_not_namespaced,
    "namespaced-name-upstream": sy_namespaced_name_upstream,
    "prompts-one-server": sy_prompts_one_server,
    "unknown-tool-routed": sy_unknown_tool_routed,
}

MUTANTS: dict[str, dict[str, Callable[[], None]]] = {
    "tollbooth": TOLLBOOTH,
    "switchyard": SWITCHYARD,
}


def apply(impl: str, name: str) -> None:
    MUTANTS[impl][name]()
