"""ProxyRuntime: the catalog runtime behind the meta-tool profiles (gateway, transparent, search).

It owns the operations (browse, hydrate, execute, view; search, schema, call and batch from
gatespec.profiles.search) over a catalog snapshot built from the upstream pool, and implements the
generated meta-tool protocol (gatespec_surface.operations) that the server layer
(gatespec.server) dispatches to.

Access control (AM-ACCESS-CONTROL, AM-ACCESS-NO-LEAK): every operation works on the caller's
visible catalog. For an identity the policy restricts, that is a snapshot of its own, built
from the visible tools only (their catalog, cards, tree, and a ranker with its own statistics
over the same embeddings), so its answers are those of a gateway fronting only those tools;
snapshots are cached by the set of visible ids. A name it may not see is FORBIDDEN, whether or
not such a tool exists. Artifacts and seen cards (cache-stable browsing) are keyed by the caller's scope
(identity and session).

Start-up cost: a rebuild checks every listed tool into a Catalog at once (cheap), but the cards
and the browse tree (and with them the token encoder: tiktoken's Rust core, ~24 MiB resident, and
~0.25 s) are built on first use in the gateway profile, whose tools/list shows only meta-tools;
the transparent profile lists the cards, so it builds them at once. A lazy build runs in a worker
thread, so the event loop keeps serving while it runs. The ranking index (BM25, numpy) waits for
the first query, which also starts loading the semantic model (gatespec.ranking.ranker).
Every expected failure is a GatewayError carrying a spec error code; the server layer returns
it as an isError result, so nothing raises across the MCP boundary.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

import anyio
from mcp.types import Tool

from gatespec.access import LOCAL, AccessPolicy, Identity, Rules, Subject, forbidden
from gatespec.artifacts import ArtifactStore, render_view, view_cut_note
from gatespec.catalog import Catalog, Excluded, Item
from gatespec.config import DEFAULT_INLINE_MEDIA_MAX_BYTES, GatewayConfig
from gatespec.firewall import text_repeats_structured, to_envelope
from gatespec.inline_media import artifact_media, result_media
from gatespec.metrics import Metrics
from gatespec.profiles.aggregate.plugins import Chain, ToolCall, build_chain
from gatespec.profiles.aggregate.routing import RoutingContext
from gatespec.profiles.lifecycle import UpstreamLifecycle
from gatespec.profiles.search import SearchProfile
from gatespec.runtime_contract import Caller, CatalogListing, GatewayRuntime, Relay, Reply
from gatespec.snapshot import Snapshot, build_snapshot, restricted_snapshot
from gatespec.state import StateBackend, StateUnavailable, open_state
from gatespec.state.effects import record_seen, stable_browse, without_artifacts
from gatespec.state.memory import MemoryState
from gatespec.upstream import (
    Reconfigured,
    UpstreamError,
    UpstreamPool,
    UpstreamStatus,
)
from gatespec.validation import ArgsValidator
from gatespec_surface.budgets import CACHE_SEEN_BY, STRUCTURED_CONTENT_LABEL
from gatespec_surface.descriptors import PROFILES
from gatespec_surface.errors import ErrorCode, GatewayError
from gatespec_surface.operations import (
    BatchArgs,
    CallArgs,
    SchemaArgs,
    SearchArgs,
    ToolBrowseArgs,
    ToolExecuteArgs,
    ToolHydrateArgs,
    ToolViewArgs,
)
from gatespec_surface.parsers import parse_view_selector

log = logging.getLogger(__name__)


CatalogListener = Callable[[], Awaitable[None]]

# Restricted snapshots kept per catalog build (a runtime limit: one per distinct visible set).
MAX_VIEWS: Final = 64


def subject_of(item: Item) -> Subject:
    """What the access policy decides about for a catalog tool."""
    return Subject.tool(item.namespace, item.id, item.metadata.get("annotations"))


class _Views:
    """Restricted snapshots of one catalog build: the visible set by rules, the snapshot by
    visible set (identities that see the same tools share one)."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.visible: dict[tuple[Rules, ...], frozenset[str]] = {}
        self.views: OrderedDict[frozenset[str], Snapshot] = OrderedDict()


def envelope_text(envelope: Mapping[str, Any], repeats_structured: bool = False) -> str:
    """The text content of a tool_execute result: the bounded summary, the facts, and one line
    per artifact with the handle to pass to tool_view.

    When the upstream's text is its structuredContent again (`repeats_structured`) and the
    structured content artifact holds it whole, the summary is left out of the text: the facts
    show the same keys once (AM-RESULT-TEXT-ONCE; the envelope keeps its summary)."""
    kept = any(a["label"] == STRUCTURED_CONTENT_LABEL for a in envelope["artifacts"])
    summary = "" if repeats_structured and kept else envelope["summary"]
    lines = [f"[{envelope['status']}] {summary}".rstrip()]
    lines += [f"- {fact}" for fact in envelope["facts"]]
    for art in envelope["artifacts"]:
        where = f" {art['uri']}" if art.get("uri") else ""
        lines.append(
            f"artifact {art['handle']}: {art['label']} ({art['media_type']}, "
            f"{art['size_bytes']} bytes){where}"
        )
    return "\n".join(lines)


class ProxyRuntime(UpstreamLifecycle):
    """Every meta-tool's operation over many upstreams, for one exposure profile."""

    def __init__(
        self,
        pool: UpstreamPool,
        *,
        profile: str = "gateway",
        cache_stable: bool = False,
        call_timeout: float | None = None,
        inline_media_max_bytes: int = DEFAULT_INLINE_MEDIA_MAX_BYTES,
        refresh_interval: float = 0.0,
        artifacts: ArtifactStore | None = None,
        policy: AccessPolicy | None = None,
        state: StateBackend | None = None,
    ) -> None:
        self.pool = pool
        self.policy = policy if policy is not None else AccessPolicy.open()
        self.refresh_interval = refresh_interval
        self.profile = profile
        self.cache_stable = cache_stable
        self.call_timeout = call_timeout
        # Decoded image/audio bytes per result also shown inline (AM-INLINE-MEDIA).
        self.inline_media_max_bytes = inline_media_max_bytes
        # Artifacts and seen cards (gatespec.state): this process's memory unless a shared
        # backend is given.
        self.state = state if state is not None else MemoryState(artifacts)
        # The configuration the runtime serves, when built from one: its per-server `timeout`
        # wins over the gateway-wide call_timeout (config.call_timeout_for).
        self.config: GatewayConfig | None = None
        self.validator = ArgsValidator()
        self.metrics: Metrics | None = None  # gatespec.metrics.metrics_of sets it when served
        # gateway.plugins (AM-PLUGIN-CHAIN), as in the aggregate profile: a tool a plugin hides
        # never enters the catalog (not listed, browsable, hydratable or callable); every call
        # that reaches `invoke` goes through the chain (tool_filter, audit_log).
        self.plugins = Chain()
        self._listeners: list[CatalogListener] = []
        # (listed catalog, its snapshot or None until first use): swapped as one pair. Built
        # at once only where tools/list shows the cards (profiles.yaml lists_upstream_tools).
        self._lazy = PROFILES[profile].lists_upstream_tools != "stripped"
        empty = Catalog.build({})
        # Even the empty catalog's snapshot waits for first use where builds are lazy: building
        # one imports the browse tree and its ranking (~7 MiB) that a stdio serve may never use.
        self._state: tuple[Catalog, Snapshot | None] = (
            empty,
            None if self._lazy else build_snapshot(empty),
        )
        self._build_lock = threading.Lock()
        self._views: _Views | None = None
        self._views_lock = threading.Lock()
        # The search profile's operations, over this runtime's snapshots and upstream path.
        self.searching = SearchProfile(self)

    @classmethod
    def from_config(cls, config: GatewayConfig, *, profile: str | None = None) -> ProxyRuntime:
        options = config.options
        pool = UpstreamPool.from_config(config)
        runtime = cls(
            pool,
            profile=profile or options.profile,
            cache_stable=options.cache_stable,
            call_timeout=options.call_timeout,
            inline_media_max_bytes=options.inline_media_max_bytes,
            refresh_interval=options.refresh_interval,
            policy=options.access.policy if options.access is not None else None,
            state=open_state(options.state),
        )
        runtime.config = config
        runtime.plugins = _chain(config)
        return runtime

    def timed_ranking(self, started: float) -> None:
        """A query ranked since `started` (perf_counter), for the metrics."""
        if self.metrics is not None:
            self.metrics.ranking(time.perf_counter() - started)

    # ------------------------------------------------------------ lifecycle
    # (profiles.lifecycle runs it; what follows each event is a catalog rebuild)

    async def _started(self) -> None:
        await self.rebuild()

    async def _changed(self) -> None:
        await self.rebuild()

    async def _tools_changed(self, key: str) -> None:
        log.info("upstream %s changed its tools; rebuilding the catalog", key)
        try:
            await self.rebuild()
        except GatewayError:
            pass  # logged in rebuild; the previous catalog stays

    async def _peer_event(self, event: str) -> None:
        """Re-list the upstreams when another replica saw a tools change (or events may have
        been missed), so that this replica's listeners hear of it too."""
        log.info("another replica reports %s; re-listing upstreams", event)
        try:
            await self.refresh()
        except Exception:  # a failed refresh is logged; the gateway keeps serving
            log.exception("refreshing upstreams after a peer's event failed")

    async def _reconfigured(self, config: GatewayConfig, changed: Reconfigured) -> None:
        before = self.config.options.plugins if self.config is not None else ()
        self.config = config
        self.plugins = _chain(config)
        if changed or config.options.plugins != before:
            await self.rebuild()

    async def rebuild(self) -> None:
        old = {item.id for item in self._state[0].items()}
        try:
            listed = Catalog.build(
                {key: self.plugins.tools(key, tools) for key, tools in self.pool.tools().items()}
            )
            snapshot = None if self._lazy else build_snapshot(listed)
        except GatewayError as exc:
            # A collision (§1.5) is loud, but the gateway keeps serving the last good catalog.
            log.error("catalog rebuild failed, keeping the previous catalog: %s", exc)
            raise
        self._state = (listed, snapshot)
        self.validator.forget()
        if {item.id for item in listed.items()} != old or not old:
            for listener in list(self._listeners):
                try:
                    await listener()
                except Exception:  # a listener's failure must not stop the others
                    log.exception("catalog listener failed")

    def add_catalog_listener(self, callback: CatalogListener) -> None:
        self._listeners.append(callback)

    def _snapshot(self) -> Snapshot:
        """The current snapshot, built now if it has not been yet (blocks while building)."""
        listed, snapshot = self._state
        if snapshot is not None:
            return snapshot
        with self._build_lock:  # one build per listing, however many callers wait for it
            listed, snapshot = self._state
            if snapshot is None:
                snapshot = build_snapshot(listed)
                if self._state[0] is listed:  # not replaced by a rebuild meanwhile
                    self._state = (listed, snapshot)
            return snapshot

    async def _ready(self) -> Snapshot:
        """The current snapshot; a first build runs in a worker thread."""
        snapshot = self._state[1]
        if snapshot is None:
            snapshot = await anyio.to_thread.run_sync(self._snapshot)
        return snapshot

    # ------------------------------------------------------------ access

    def _restricted(self, snapshot: Snapshot, identity: Identity) -> Snapshot:
        """`snapshot` as `identity` may see it (itself when the identity is unrestricted)."""
        rules = self.policy.rules_for(identity)
        if not rules:
            return snapshot
        with self._views_lock:
            views = self._views
            if views is None or views.snapshot is not snapshot:
                views = self._views = _Views(snapshot)
            visible = views.visible.get(rules)
            if visible is None:
                check = self.policy.check(identity)
                visible = frozenset(
                    item.id for item in snapshot.catalog.items() if check(subject_of(item))
                )
                views.visible[rules] = visible
            view = views.views.get(visible)
            if view is None:
                view = views.views[visible] = restricted_snapshot(snapshot, visible)
                while len(views.views) > MAX_VIEWS:
                    views.views.popitem(last=False)
            else:
                views.views.move_to_end(visible)
            return view

    async def snapshot_for(self, identity: Identity) -> Snapshot:
        """The current snapshot as `identity` may see it; builds run in a worker thread."""
        snapshot = await self._ready()
        rules = self.policy.rules_for(identity)
        if not rules:
            return snapshot
        views = self._views  # a built view is served without a thread hop
        if views is not None and views.snapshot is snapshot and rules in views.visible:
            built = views.views.get(views.visible[rules])
            if built is not None:
                return built
        return await anyio.to_thread.run_sync(self._restricted, snapshot, identity)

    def access(self, item: Item | None, name: str, identity: Identity) -> Item:
        """`item` (looked up by `name` in the caller's visible catalog), or the answer for a
        name that names nothing the caller may see: FORBIDDEN for a restricted caller, whether
        or not the tool exists; TOOL_NOT_FOUND for an unrestricted one."""
        if item is not None:
            return item
        if self.policy.restricted(identity):
            raise forbidden(name)
        raise GatewayError(
            ErrorCode.TOOL_NOT_FOUND,
            f"no tool {name!r} in the catalog; search or browse to find one",
            name,
        )

    def _resolve(self, catalog: Catalog, tool_id: str, identity: Identity) -> Item:
        """A tool id or wire name in the caller's visible catalog (see access)."""
        try:
            return catalog.resolve(tool_id)
        except GatewayError as exc:
            if exc.code is not ErrorCode.TOOL_NOT_FOUND:
                raise  # not a tool id or wire name at all: said the same to everyone
            if self.policy.restricted(identity):
                raise forbidden(tool_id) from None
            raise  # with the catalog's closest ids (AM-BARE-TOOL-ID)

    def visible_ids(self, identity: Identity) -> frozenset[str]:
        snapshot = self._restricted(self._snapshot(), identity)
        return frozenset(item.id for item in snapshot.catalog.items())

    @property
    def catalog(self) -> Catalog:
        return self._snapshot().catalog

    def statuses(self) -> list[UpstreamStatus]:
        return self.pool.statuses()

    def excluded(self) -> list[Excluded]:
        return list(self.catalog.excluded)

    def catalog_listing(self) -> CatalogListing:
        catalog = self.catalog
        return CatalogListing(
            tools=[(item.id, catalog.wire_name(item.id)) for item in catalog.items()],
            excluded=[(e.server, e.name, e.reason) for e in catalog.excluded],
        )

    # ------------------------------------------------------------ operations

    # The contract's operations take the caller's scope as `session` (cache-stable state and
    # artifacts are keyed by it) and its identity (what it may see).

    async def browse(
        self, session: str, query: str | None, path: str | None, *, identity: Identity = LOCAL
    ) -> Reply:
        browser = (await self.snapshot_for(identity)).browser
        if path is not None and not browser.tree_built:
            # The first path browse builds the tree (~0.2 s at 10,000 tools): off the event loop.
            await anyio.to_thread.run_sync(lambda: browser.tree)
        started = time.perf_counter()
        if self.cache_stable:
            selection = browser.select(query, path)
            if query is not None:
                self.timed_ranking(started)
            response = await stable_browse(
                self.state.seen_cards,
                session,
                [card["id"] for card in selection.cards],
                lambda stable: browser.render(selection, stable),
            )
        else:
            response = browser.browse(query, path)
            if query is not None:
                self.timed_ranking(started)
        return Reply(response.text, response.structured)

    async def hydrate(self, session: str, tool_id: str, *, identity: Identity = LOCAL) -> Reply:
        catalog = (await self.snapshot_for(identity)).catalog

        def hydrate(name: str) -> dict[str, Any]:
            return catalog.hydrate(self._resolve(catalog, name, identity).id)

        result = hydrate(tool_id)
        if self.cache_stable:
            # §5.5: only a successful hydration enters the seen-set, by its canonical id.
            await record_seen(self.state.seen_cards, session, result["tool_id"])
        return Reply(json.dumps(result, ensure_ascii=False, indent=1), result)

    async def invoke(
        self, item: Item, args: dict[str, Any], relay: Relay | None = None, session: str = ""
    ) -> dict[str, Any]:
        """Check `args` against the tool's schema, then call it upstream through the plugin
        chain (what the upstream sends meanwhile reaches `relay`'s client): its raw result."""
        server = item.metadata["server"]
        upstream_name = item.metadata["upstream_name"]
        context = RoutingContext("tools/call", server, server, upstream_name, session, item.id)
        async with self.plugins.observed(context, ToolCall(upstream_name, dict(args))) as seen:
            # §4.4: arguments are checked against the hydrated schema before any upstream
            # call (the item's own schema: what hydrate copies out; the validator only reads).
            self.validator.validate(item.id, item.input_schema, args)
            call = seen.call = await self.plugins.before_call(context, seen.call)
            try:
                result = await self.pool.call(
                    server,
                    call.name,
                    call.arguments,
                    timeout=self.call_timeout_for(server),
                    relay=relay,
                )
            except UpstreamError as exc:
                raise GatewayError(
                    exc.code,
                    str(exc),
                    item.id,
                    {"server": server, "kind": exc.kind},
                ) from None
            return seen.ended(result)

    async def execute(
        self,
        session: str,
        tool_id: str,
        args: dict[str, Any],
        *,
        identity: Identity = LOCAL,
        relay: Relay | None = None,
    ) -> Reply:
        catalog = (await self.snapshot_for(identity)).catalog
        item = self._resolve(catalog, tool_id, identity)
        # §4.3's implicit hydration succeeded: the tool is seen (AM-CACHE-SEEN-BY-EXECUTE),
        # whatever the call's outcome; stored with the call's artifacts in one round trip.
        seen = item.id if self.cache_stable and "execute" in CACHE_SEEN_BY else None
        try:
            result = await self.invoke(item, args, relay, session)
        except GatewayError:
            if seen is not None:
                await record_seen(self.state.seen_cards, session, seen)
            raise
        writer = self.state.artifacts.writer()
        envelope = to_envelope(
            result,
            tool_id=item.id,
            server_key=item.metadata["server"],
            upstream_name=item.metadata["upstream_name"],
            store=writer,  # type: ignore[arg-type]  # an ArtifactWriter: what the firewall uses
            owner=session,
        )
        try:
            await self.state.commit_execute(session, seen, writer)
        except StateUnavailable as exc:
            envelope = without_artifacts(envelope, str(exc))
        return Reply(
            envelope_text(envelope, text_repeats_structured(result)),
            envelope,
            is_error=envelope["status"] == "error",
            media=result_media(result, self.inline_media_max_bytes),
        )

    async def view(self, session: str, handle: str, selector: str) -> Reply:
        parse_view_selector(selector)  # ARGS_INVALID before the store is asked
        artifact = await self.state.artifacts.get(handle, session)
        result = render_view(artifact, selector)
        block = artifact_media(artifact, self.inline_media_max_bytes) if selector == "all" else None
        if block is not None:  # the model sees the image, not its base64 (AM-INLINE-MEDIA)
            text = (
                f"artifact {artifact.handle}: {artifact.label} ({artifact.media_type}, "
                f"{artifact.size} bytes), shown whole as {block['type']} content"
            )
            return Reply(text, result, media=(block,))
        notes = (view_cut_note(result),) if result["truncated"] else ()
        return Reply(result["content"], result, notes=notes)

    async def set_log_level(self, level: str) -> None:
        """A client's logging/setLevel, passed to the upstreams that offer logging."""
        await self.pool.set_log_level(level)

    def call_timeout_for(self, server: str) -> float | None:
        """A server's own `timeout` when it has one, else the gateway-wide call_timeout."""
        config = self.config
        if config is not None and server in config.servers:
            return config.call_timeout_for(server)
        return self.call_timeout

    def stripped_tools(self, identity: Identity = LOCAL) -> list[Tool]:
        snapshot = self._restricted(self._snapshot(), identity)
        return [tool.model_copy() for tool in snapshot.stripped]

    # ------------------------------------------------------------ meta-tools
    # (gatespec_surface.operations.MetaToolOperations; search's run in gatespec.profiles.search)

    async def tool_browse(self, caller: Caller, args: ToolBrowseArgs) -> Reply:
        return await self.browse(caller.scope, args.query, args.path, identity=caller.identity)

    async def tool_hydrate(self, caller: Caller, args: ToolHydrateArgs) -> Reply:
        return await self.hydrate(caller.scope, args.tool_id, identity=caller.identity)

    async def tool_execute(self, caller: Caller, args: ToolExecuteArgs) -> Reply:
        return await self.execute(
            caller.scope, args.tool_id, args.args, identity=caller.identity, relay=caller.relay
        )

    async def tool_view(self, caller: Caller, args: ToolViewArgs) -> Reply:
        return await self.view(caller.scope, args.handle, args.selector)

    async def search(self, caller: Caller, args: SearchArgs) -> Reply:
        return await self.searching.search(caller, args)

    async def schema(self, caller: Caller, args: SchemaArgs) -> Reply:
        return await self.searching.schema(caller, args)

    async def call(self, caller: Caller, args: CallArgs) -> Reply:
        return await self.searching.call(caller, args)

    async def batch(self, caller: Caller, args: BatchArgs) -> Reply:
        return await self.searching.batch(caller, args)


def _chain(config: GatewayConfig) -> Chain:
    """The plugin chain gateway.plugins configures; the catalog's servers are named by their
    config keys, which is what a tool_filter's rules name."""
    return build_chain(config.options.plugins, {key: key for key in config.servers})


if TYPE_CHECKING:

    def _serves_every_meta_tool(runtime: ProxyRuntime) -> GatewayRuntime:
        return runtime  # mypy: ProxyRuntime implements the generated protocol
