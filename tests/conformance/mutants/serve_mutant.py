"""gatespec's own `serve`, with one deliberate defect: the IUT of the layer-2 mutation tests.

    python serve_mutant.py MUTANT serve --config FILE [--profile ...]

Each mutant monkeypatches one thing in this process (nothing under src/ changes), then runs
gatespec's normal CLI entry point over stdio. `MUTANTS` maps a name to its patch; the test
module pairs each name with the check family that must catch it and the requirement id the
failing checks must name.
"""

from __future__ import annotations

import dataclasses
import hashlib
import sys
from collections.abc import Callable
from typing import Any


def truncation_off() -> None:
    """Descriptions are never truncated and no cap is enforced."""
    from gatespec import browse, cards
    from gatespec_surface.render import render_browse_text

    def fit_card(card: dict[str, Any], description: str) -> dict[str, Any]:
        return {**card, "description": cards.collapse_whitespace(description)}

    cards.fit_card = fit_card
    browse.browse_text = render_browse_text


def order_reversed() -> None:
    """Browse results come lowest score first (and ids descending)."""
    from gatespec import browse

    real = browse.order_cards
    browse.order_cards = lambda found: list(reversed(real(found)))


def args_unvalidated() -> None:
    """tool_execute forwards whatever arguments it gets."""
    from gatespec.validation import ArgsValidator

    ArgsValidator.validate = lambda self, tool_id, schema, args: None


def banned_field() -> None:
    """Cards carry the tool's input schema, and results are not checked against the
    output models (an implementation that simply adds the field)."""
    from gatespec import cards
    from gatespec.server import catalog_server

    # Every card starts as the bare card (cards fitted at once or on first use alike).
    real_bare = cards._bare_card
    real_init = catalog_server.MetaToolHandlers.__init__

    def bare_card(item: Any) -> dict[str, Any]:
        return {**real_bare(item), "inputSchema": item.input_schema}

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        self._outputs = {}

    cards._bare_card = bare_card
    catalog_server.MetaToolHandlers.__init__ = init


def marker_first_browse() -> None:
    """The cache-stable marker is emitted on every browse that lacks one."""
    from gatespec import seen_cards

    real = seen_cards.SeenCards.arrange

    def arrange(self: Any, found: Any) -> list[dict[str, Any]]:
        out = real(self, found)
        if not any(c["id"] == seen_cards.CACHE_MARKER_ID for c in out):
            out.insert(0, seen_cards.marker_card())
        return out

    seen_cards.SeenCards.arrange = arrange


def path_code() -> None:
    """A malformed browse path is reported as ARGS_INVALID instead of PATH_INVALID."""
    from gatespec.server import arguments
    from gatespec_surface.errors import ErrorCode

    errors = dict(arguments.META_TOOL_ERRORS)
    errors["tool_browse"] = tuple(c for c in errors["tool_browse"] if c != ErrorCode.PATH_INVALID)
    arguments.META_TOOL_ERRORS = errors


def budget_on_description() -> None:
    """A card's budget is counted on its description, not on the line the client reads."""
    from gatespec import cards
    from gatespec.tokens import count_tokens

    cards.card_tokens = lambda card: count_tokens(str(card.get("description") or ""))


def hash8_name_only() -> None:
    """hash8 hashes the upstream name alone (no newline, no schema shape)."""
    from gatespec_surface import parsers

    parsers.hash8 = lambda upstream_name, input_schema: hashlib.sha256(
        upstream_name.encode()
    ).hexdigest()[:8]


def stripped_real_schema() -> None:
    """Transparent tools/list entries carry the upstream schema instead of the sentinel."""
    from gatespec import snapshot

    real = snapshot.Snapshot.stripped.func  # a cached_property: its function makes the entries

    def stripped(self: Any) -> Any:
        items = {self.catalog.wire_name(i.id): i for i in self.catalog.items()}
        return tuple(
            t.model_copy(update={"input_schema": items[t.name].input_schema}) for t in real(self)
        )

    snapshot.Snapshot.stripped = property(stripped)


def view_off_by_one() -> None:
    """tool_view's "lines:A-B" returns the lines one further down."""
    from gatespec import artifacts

    real = artifacts._line_range

    def line_range(artifact: Any, sel: Any, selector: str) -> str:
        end = None if sel.end is None else sel.end + 1
        return real(artifact, dataclasses.replace(sel, start=sel.start + 1, end=end), selector)

    artifacts._line_range = line_range


def stripped_callable() -> None:
    """A direct tools/call of a stripped entry is forwarded upstream."""
    from gatespec.server import catalog_server

    real = catalog_server.MetaToolHandlers.call

    async def call(self: Any, session_key: str, name: str, arguments: Any, **kw: Any) -> Any:
        if self.lists_stripped and name not in self.names:
            args = {"tool_id": name, "args": arguments or {}}
            return await real(self, session_key, "tool_execute", args, **kw)
        return await real(self, session_key, name, arguments, **kw)

    catalog_server.MetaToolHandlers.call = call


def wire_text_over_cap() -> None:
    """A card's line in the text content carries more than its prompt rendering: the JSON
    card still renders within the cap, the line the client reads does not."""
    from gatespec import browse
    from gatespec_surface.render import render_card

    def browse_text(preamble: str, cards: Any) -> str:
        lines = [render_card(c) for c in cards]
        tools = [i for i, c in enumerate(cards) if c.get("kind") != "internal"]
        if tools:
            lines[tools[0]] += " (see also: " + ", ".join(f"related tool {n}" for n in range(40))
        return "\n".join([preamble, *lines])

    browse.browse_text = browse_text


def root_small_catalog() -> None:
    """Browsing "/" lists nothing when the catalog holds 20 tools or fewer."""
    from gatespec import browse

    real = browse.BrowseTree.listing

    def listing(self: Any, path: object) -> Any:
        found = real(self, path)
        tools = {c["id"] for n in self._nodes.values() for c in n.cards if c["kind"] != "internal"}
        if path == "/" and len(tools) <= 20:
            return ()
        return found

    browse.BrowseTree.listing = listing


class _Estimate:
    """An "encoder" that guesses four characters per token (the len/4 fallback)."""

    def encode(self, text: str, **_: Any) -> list[int]:
        return list(range(len(text) // 4))

    def decode_bytes(self, tokens: list[int]) -> bytes:
        return b"x" * (4 * len(tokens))


def estimated_tokens() -> None:
    """Token counts silently fall back to len/4 (as if the encoder had failed to load)."""
    from gatespec import cards, tokens, truncate

    def count(text: str) -> int:
        return len(text) // 4

    tokens.count_tokens = cards.count_tokens = truncate.count_tokens = count
    truncate.encoder = _Estimate


def special_tokens_crash() -> None:
    """A browse answer is counted with special tokens enabled: any browse whose text holds
    "<|endoftext|>" (an upstream description) raises instead of answering."""
    from gatespec import browse, cards, tokens

    def browse_text(preamble: str, found: Any) -> str:
        text = cards.browse_text(preamble, found)
        tokens.encoder().encode(text)  # disallowed_special defaults to "all": raises
        return text

    browse.browse_text = browse_text


def malformed_rejects_listing() -> None:
    """An upstream listing is validated as a whole: one malformed entry rejects every tool."""
    import mcp_types as types

    from gatespec.upstream import connection
    from gatespec.upstream.errors import UpstreamError

    real = connection.McpUpstream.list_tools

    async def list_tools(self: Any) -> list[dict[str, Any]]:
        tools = await real(self)
        try:
            types.ListToolsResult.model_validate({"tools": tools})
        except Exception as exc:
            raise UpstreamError(self.key, "protocol", f"invalid tools/list: {exc}") from None
        return tools

    connection.McpUpstream.list_tools = list_tools


# ------------------------------------------------------------------ the aggregate profile


def single_underscore() -> None:
    """Seed 001's separator: names are offered as server_name."""
    from gatespec.profiles.aggregate import naming

    real = naming.Naming.expose

    def expose(self: Any, uri: bool, server: str, value: str) -> str:
        return real(self, uri, server, value) if uri else f"{server}_{value}"

    naming.Naming.expose = expose  # type: ignore[method-assign]


def route_first_server() -> None:
    """Every request goes to the first configured server, whatever its name says."""
    from gatespec.profiles.aggregate import routing

    real = routing.route

    def route(method: str, params: Any, session: str, servers: Any, *naming: Any) -> Any:
        context, clean = real(method, params, session, servers, *naming)
        first = next(iter(servers.values()))
        return dataclasses.replace(context, config_key=first), clean

    routing.route = route
    from gatespec.profiles.aggregate import runtime

    runtime.route = route


def prompts_unnamespaced() -> None:
    """Prompts are listed under their upstream names."""
    from gatespec.profiles.aggregate import broadcast, naming

    real = naming.offer

    def offer(kind: Any, server: str, entries: Any, *rest: Any) -> Any:
        if kind.method == "prompts/list":
            return naming.Offered([dict(e) for e in entries], [])
        return real(kind, server, entries, *rest)

    broadcast.offer = offer  # where the merged lists are built


def first_page_only() -> None:
    """An upstream's list stops after its first page (nextCursor ignored)."""
    from gatespec.upstream import base

    async def list_all(self: Any, method: str, field: str, timeout: Any = None) -> Any:
        raw = await self.request(method, {}, timeout)
        return [e for e in raw.get(field, []) if isinstance(e, dict)]

    base.Upstream.list_all = list_all


def all_or_nothing() -> None:
    """One failing upstream fails the whole list."""
    from gatespec.profiles.aggregate import runtime
    from gatespec_surface.errors import ErrorCode, GatewayError

    real = runtime.AggregateRuntime.broadcast

    async def broadcast(self: Any, kind: Any) -> Any:
        merged = await real(self, kind)
        if merged.failures:
            raise GatewayError(ErrorCode.UPSTREAM_ERROR, f"{merged.failures[0].server} failed")
        return merged

    runtime.AggregateRuntime.broadcast = broadcast


def cancel_shielded() -> None:
    """An upstream call runs on when its client cancels: a client's notifications/cancelled
    only flags its request (the SDK dispatcher's "signal" mode, which nothing here reads)
    instead of interrupting the handler, so the upstream is never told. (Shielding
    UpstreamPool.call alone no longer models this: the call's own scopes end it.)"""
    from mcp.shared import jsonrpc_dispatcher

    cls = jsonrpc_dispatcher.JSONRPCDispatcher
    real = cls.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        real(self, *args, **{**kwargs, "peer_cancel_mode": "signal"})

    cls.__init__ = init


def reload_silent() -> None:
    """A registry change is served but announced to nobody: neither by the reload itself nor
    by the upstream it added joining (upstream.revive announces a server that comes up)."""
    from gatespec.profiles.aggregate import runtime

    async def reconfigured(self: Any, config: Any, changed: Any) -> None:
        self._configure(config)

    async def settled(self: Any, key: str) -> None:
        return None

    runtime.AggregateRuntime._reconfigured = reconfigured
    runtime.AggregateRuntime._settled = settled


def unknown_server_unavailable() -> None:
    """A server key nobody configured is answered SERVER_UNAVAILABLE."""
    from gatespec.profiles.aggregate import routing, runtime
    from gatespec_surface.errors import ErrorCode, GatewayError

    real = routing.route

    def route(*args: Any) -> Any:
        try:
            return real(*args)
        except GatewayError as exc:
            if exc.code != ErrorCode.UNKNOWN_SERVER:
                raise
            raise GatewayError(ErrorCode.SERVER_UNAVAILABLE, exc.message, exc.path) from None

    runtime.route = route


def read_uri_upstream() -> None:
    """resources/read answers with the upstream's own URIs."""
    from gatespec.profiles.aggregate import naming, runtime

    real = naming.namespace_answer

    def namespace_answer(method: str, server: str, result: Any, *rest: Any) -> Any:
        return result if method == "resources/read" else real(method, server, result, *rest)

    runtime.namespace_answer = namespace_answer


def capabilities_tools_only() -> None:
    """Only tools are advertised, whatever the upstreams offer."""
    from gatespec.profiles.aggregate import server

    def get_capabilities(self: Any, *args: Any, **kwargs: Any) -> Any:
        caps = server.GatewayServer.get_capabilities(self, *args, **kwargs)
        return caps.model_copy(update={"prompts": None, "resources": None})

    server.AggregateServer.get_capabilities = get_capabilities


def batch_reversed() -> None:
    """batch answers its calls last first."""
    import dataclasses as dc

    from gatespec.profiles import search

    real = search.SearchProfile.batch

    async def batch(self: Any, caller: Any, args: Any) -> Any:
        reply = await real(self, caller, args)
        results = list(reversed(reply.structured["results"]))
        return dc.replace(reply, structured={"results": results})

    search.SearchProfile.batch = batch


def call_drops_structure() -> None:
    """call answers the upstream's text but drops its structuredContent."""
    import dataclasses as dc

    from gatespec.profiles import search

    real = search.SearchProfile.call

    async def call(self: Any, caller: Any, args: Any) -> Any:
        return dc.replace(await real(self, caller, args), structured=None)

    search.SearchProfile.call = call


# ------------------------------------------------------------------ access control
# (served over HTTP behind the kit's two identities: tests/conformance/test_server_mutants.py)


def _as_local(method: str) -> None:
    """SearchProfile.`method` runs as the local (unrestricted) identity, whoever calls."""
    from gatespec.profiles import search
    from gatespec.runtime_contract import Caller

    real = getattr(search.SearchProfile, method)

    async def unrestricted(self: Any, caller: Any, args: Any) -> Any:
        return await real(self, Caller(caller.session), args)

    setattr(search.SearchProfile, method, unrestricted)


def search_unfiltered() -> None:
    """search lists every operation whoever asks (call is still filtered)."""
    _as_local("search")


def forbidden_tells() -> None:
    """FORBIDDEN names a hidden tool as existing; an absent one is TOOL_NOT_FOUND."""
    from gatespec import runtime
    from gatespec_surface.errors import ErrorCode, GatewayError

    real = runtime.ProxyRuntime.access

    def access(self: Any, item: Any, name: str, identity: Any) -> Any:
        if item is None and self.policy.restricted(identity):
            full = self._snapshot().catalog
            if full.by_operation(name) is None and name not in full:
                raise GatewayError(ErrorCode.TOOL_NOT_FOUND, f"no tool {name!r}", name)
            raise GatewayError(ErrorCode.FORBIDDEN, f"{name} exists but is not yours", name)
        return real(self, item, name, identity)

    runtime.ProxyRuntime.access = access


def list_changed_to_all() -> None:
    """Every identity is told of every catalog change."""
    from gatespec.server import notify

    notify.ListChangedNotifier._visible_now = lambda self, identity: None


def batch_escapes_policy() -> None:
    """batch runs its calls without the caller's identity (call and schema keep it)."""
    _as_local("_batch_item")


def expiry_ignored() -> None:
    """A JWT's expiry is not checked."""
    from gatespec.access import tokens

    real = tokens.JwtVerifier.verify

    def verify(self: Any, token: str) -> Any:
        decode = tokens.jwt.decode

        def lenient(*args: Any, **kwargs: Any) -> Any:
            return decode(*args, **{**kwargs, "options": {"verify_exp": False}})

        tokens.jwt.decode = lenient
        try:
            found = real(self, token)
        finally:
            tokens.jwt.decode = decode
        return None if found is None else (found[0], None)

    tokens.JwtVerifier.verify = verify


def artifacts_shared() -> None:
    """Artifacts belong to nobody: any caller can read any handle it learns."""
    from gatespec import artifacts

    real = artifacts.ArtifactStore.put

    def put(self: Any, data: bytes, media_type: str, label: str, uri: Any = None, **_: Any) -> Any:
        return real(self, data, media_type, label, uri)

    artifacts.ArtifactStore.put = put


MUTANTS: dict[str, Callable[[], None]] = {
    "truncation-off": truncation_off,
    "order-reversed": order_reversed,
    "args-unvalidated": args_unvalidated,
    "banned-field": banned_field,
    "marker-first-browse": marker_first_browse,
    "path-code": path_code,
    "budget-on-description": budget_on_description,
    "hash8-name-only": hash8_name_only,
    "stripped-real-schema": stripped_real_schema,
    "view-off-by-one": view_off_by_one,
    "stripped-callable": stripped_callable,
    "wire-text-over-cap": wire_text_over_cap,
    "root-small-catalog": root_small_catalog,
    "estimated-tokens": estimated_tokens,
    "special-tokens-crash": special_tokens_crash,
    "malformed-rejects-listing": malformed_rejects_listing,
    "single-underscore": single_underscore,
    "route-first-server": route_first_server,
    "prompts-unnamespaced": prompts_unnamespaced,
    "first-page-only": first_page_only,
    "all-or-nothing": all_or_nothing,
    "cancel-shielded": cancel_shielded,
    "reload-silent": reload_silent,
    "unknown-server-unavailable": unknown_server_unavailable,
    "read-uri-upstream": read_uri_upstream,
    "capabilities-tools-only": capabilities_tools_only,
    "batch-reversed": batch_reversed,
    "call-drops-structure": call_drops_structure,
    "search-unfiltered": search_unfiltered,
    "forbidden-tells": forbidden_tells,
    "list-changed-to-all": list_changed_to_all,
    "batch-escapes-policy": batch_escapes_policy,
    "expiry-ignored": expiry_ignored,
    "artifacts-shared": artifacts_shared,
}


def exit_on_view() -> None:
    """Not a spec defect: the process dies on tool_view (the kit must restart it)."""
    import os

    from gatespec.server import catalog_server

    real = catalog_server.MetaToolHandlers.call

    async def call(self: Any, session_key: str, name: str, arguments: Any, **kw: Any) -> Any:
        if name == "tool_view":
            os._exit(3)
        return await real(self, session_key, name, arguments, **kw)

    catalog_server.MetaToolHandlers.call = call


# Faults that break the process rather than the spec, for the runner's own robustness.
FAULTS: dict[str, Callable[[], None]] = {"exit-on-view": exit_on_view}


def main(argv: list[str]) -> int:
    name, *rest = argv
    {**MUTANTS, **FAULTS}[name]()
    from gatespec.cli import main as gatespec_main

    return gatespec_main(rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
