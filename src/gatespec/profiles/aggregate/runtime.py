"""AggregateRuntime: the aggregate profile's registry and operations (seeds 001 and 004).

One namespaced MCP server in front of many. The runtime owns the upstream pool (connect,
isolate, refresh, reconfigure), the map from server keys to config keys, the plugin chain, the
paged snapshots of merged lists and the resource subscriptions (aggregate.subscriptions); the MCP
server (aggregate.server) turns its operations into handlers.

- Lists broadcast to every connected upstream that offers them, in parallel, each bounded by
  that server's own call timeout; an upstream that fails is left out of the answer and
  reported (AM-AGGREGATE-LISTING; aggregate.broadcast).
- Requests are routed by the routing context parsed once at the boundary (routing.route);
  tools/call goes through the plugin chain, and a tool the server does not list answers
  TOOL_NOT_FOUND (seed 001), after one re-listing in case it is new.
- Changes (an upstream's list_changed, a registry change) reach listeners as the set of lists
  that changed; resource updates as the namespaced URI and its subscribers. With a shared
  state backend (gateway.state) an upstream's list change is published to the other replicas,
  whose listening sessions hear it too (`follow_peers`); the backend also shares handshake-era
  sessions between replicas (AM-SHARED-SESSIONS, replicas.http_sessions).
- Access control (AM-ACCESS-CONTROL): an identity's lists hold only the entries its policy lets
  it see (tools by "server:tool", prompts by "server:name", resources and templates by
  "server:uri", the upstream's own names), and a request for anything else is refused before it
  is routed upstream. A restricted identity gets FORBIDDEN for every name it cannot see, whether
  it exists or not (an unknown server or tool included), and no broadcast failure warnings
  (they would name servers it may not see) (AM-ACCESS-NO-LEAK; aggregate.policy).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, Final

from gatespec.access import LOCAL, AccessPolicy, Identity, forbidden
from gatespec.access.uris import UriRefused, normalise_uri
from gatespec.catalog import server_keys
from gatespec.config import GatewayConfig
from gatespec.profiles.aggregate.broadcast import Merged, broadcast
from gatespec.profiles.aggregate.client_upstreams import ClientUpstreams
from gatespec.profiles.aggregate.naming import LISTS, NAMESPACED, Kind, Naming, namespace_answer
from gatespec.profiles.aggregate.pages import Pages
from gatespec.profiles.aggregate.plugins import Chain, ToolCall, build_chain
from gatespec.profiles.aggregate.policy import entry_subject, hidden, shown, target_subject
from gatespec.profiles.aggregate.routing import RoutingContext, names_uri, rename, route
from gatespec.profiles.aggregate.subscriptions import Subscribers
from gatespec.profiles.lifecycle import UpstreamLifecycle
from gatespec.runtime_contract import CatalogListing, Relay
from gatespec.state import StateBackend, open_state
from gatespec.upstream import (
    ProgressCallback,
    Reconfigured,
    UpstreamError,
    UpstreamPool,
    UpstreamStatus,
)
from gatespec_surface.errors import ErrorCode, GatewayError

__all__ = ["AggregateRuntime"]

logger = logging.getLogger(__name__)

# The lists each announced change touches (what a client refetches).
_CHANGED_BY: Final = {
    "notifications/prompts/list_changed": frozenset({"prompts"}),
    "notifications/resources/list_changed": frozenset({"resources"}),
}
ALL_LISTS: Final = frozenset({"tools", "prompts", "resources"})
# The lists another replica's event names ("tools_changed" is the catalog profiles' word too);
# anything else ("resync" after a lost subscription) may hide any change.
_PEER_EVENTS: Final = {f"{capability}_changed": frozenset({capability}) for capability in ALL_LISTS}

ChangeListener = Callable[[frozenset[str]], Awaitable[None]]
UpdateListener = Callable[[str, frozenset[str]], Awaitable[None]]


def gateway_error(
    exc: UpstreamError, context: RoutingContext, naming: Naming = NAMESPACED
) -> GatewayError:
    """An upstream failure as the client sees it."""
    code = exc.code
    tool = context.method == "tools/call"
    path = naming.shown(context.server, context.name) if tool else context.name
    return GatewayError(code, str(exc), path, {"server": context.server, "kind": exc.kind})


class AggregateRuntime(UpstreamLifecycle):
    """The aggregate profile over an upstream pool (see the module docstring)."""

    profile = "aggregate"

    def __init__(
        self, pool: UpstreamPool, config: GatewayConfig, state: StateBackend | None = None
    ) -> None:
        self.pool = pool
        self.config = config
        # Shared with the other replicas: sessions and list changes (no artifacts here).
        self.state = state if state is not None else open_state(config.options.state)
        self.refresh_interval = config.options.refresh_interval
        self.servers: dict[str, str] = {}  # server key -> config key
        self.naming = NAMESPACED  # which names are whose (AM-AGGREGATE-UNPREFIXED)
        self.plugins = Chain()
        self.policy = AccessPolicy.open()
        self._configure(config)
        # The upstream connections of clients with client-scoped state (client_upstreams).
        self.clients = ClientUpstreams(lambda: self.config)
        self.pages = Pages(config.options.page_size)
        self._change_listeners: list[ChangeListener] = []
        self._update_listeners: list[UpdateListener] = []
        self.subscribers = Subscribers()  # of each namespaced resource URI
        # server__tool -> its input schema, from the latest tools/list broadcast
        self._schemas: dict[str, Any] = {}
        # list method -> the entries of its latest broadcast (what list_changed compares)
        self._last: dict[str, list[dict[str, Any]]] = {}

    @classmethod
    def from_config(cls, config: GatewayConfig) -> AggregateRuntime:
        return cls(UpstreamPool.from_config(config), config)

    def _configure(self, config: GatewayConfig) -> None:
        keys = server_keys(list(config.servers))  # CatalogError when two keys normalise alike
        self.config = config
        self.servers = {key: config_key for config_key, key in keys.items()}
        unprefixed = config.options.unprefixed
        self.naming = Naming(frozenset(self.servers), keys.get(unprefixed) if unprefixed else None)
        self.plugins = build_chain(config.options.plugins, keys)
        access = config.options.access
        self.policy = access.policy if access is not None else AccessPolicy.open()

    # ------------------------------------------------------------ lifecycle
    # (profiles.lifecycle runs it; what follows each event is an announcement of the lists
    # that changed)

    # AM-SERVE-FIRST-READY is a rule of the catalog profiles: the aggregate registry's first
    # tools/list lists every server that connects (start's `first_ready` is ignored).
    serves_first_ready = False

    async def start(
        self, progress: ProgressCallback | None = None, *, first_ready: bool = False
    ) -> list[UpstreamStatus]:
        self.pool.on_notification = self._notified
        return await super().start(progress, first_ready=first_ready)

    async def _started(self) -> None:
        return None  # lists are fetched when asked for

    async def _changed(self) -> None:
        await self._announce(ALL_LISTS)

    async def _tools_changed(self, key: str) -> None:
        await self._announce(frozenset({"tools"}))

    async def _peer_event(self, event: str) -> None:
        """Tell this replica's sessions of the list changes another replica's upstreams
        announced (all lists after a lost subscription: events may have been missed)."""
        await self._announce(_PEER_EVENTS.get(event, ALL_LISTS))

    async def _close_upstreams(self) -> None:
        await self.clients.aclose()
        await self.pool.aclose()

    async def _publish(self, lists: frozenset[str]) -> None:
        for capability in sorted(lists):
            await self.state.publish(f"{capability}_changed")

    def _admit(self, config: GatewayConfig) -> None:
        server_keys(list(config.servers))  # refuse a clash before touching the pool

    async def _reconfigured(self, config: GatewayConfig, changed: Reconfigured) -> None:
        """Open sessions are told what changed; what was kept for a gone server goes."""
        self._configure(config)
        if changed:
            gone = {*changed.removed, *changed.replaced}
            for key in gone:
                await self.clients.drop_server(key)
            self.subscribers.drop(lambda uri: self._config_key_of(uri) in gone)
            await self._announce(ALL_LISTS)

    def statuses(self) -> list[UpstreamStatus]:
        return self.pool.statuses()

    def call_timeout_for(self, config_key: str) -> float:
        """A server's own `timeout`, else the gateway-wide call_timeout."""
        if config_key in self.config.servers:
            return self.config.call_timeout_for(config_key)
        return self.config.options.call_timeout

    # ------------------------------------------------------------ change events

    def add_change_listener(self, callback: ChangeListener) -> None:
        """Call `callback(lists)` when lists change ({"tools", "prompts", "resources"})."""
        self._change_listeners.append(callback)

    def add_catalog_listener(self, callback: Callable[[], Awaitable[None]]) -> None:
        """The runtime contract's listener: called when the tools change."""

        async def tools_only(lists: frozenset[str]) -> None:
            if "tools" in lists:
                await callback()

        self._change_listeners.append(tools_only)

    def add_update_listener(self, callback: UpdateListener) -> None:
        """Call `callback(namespaced uri, subscribed sessions)` when a subscribed resource
        changes upstream."""
        self._update_listeners.append(callback)

    async def _announce(self, lists: frozenset[str]) -> None:
        if self.policy.restricts_anyone:
            # who is told depends on what changed in each identity's visible lists
            for kind in LISTS.values():
                if kind.capability in lists:
                    await self.broadcast(kind)
        for listener in list(self._change_listeners):
            try:
                await listener(lists)
            except Exception:  # one listener's failure must not stop the others
                logger.exception("change listener failed")

    async def _notified(self, config_key: str, method: str, params: dict[str, Any]) -> None:
        if method in _CHANGED_BY:
            await self._announce(_CHANGED_BY[method])
            await self._publish(_CHANGED_BY[method])
            return
        server = self._server_of(config_key)
        uri = params.get("uri")
        if (
            method != "notifications/resources/updated"
            or server is None
            or not isinstance(uri, str)
        ):
            return
        try:
            namespaced = self.naming.expose(True, server, uri)
        except GatewayError:
            return
        sessions = self.subscribers.of(namespaced)
        for listener in list(self._update_listeners):
            try:
                await listener(namespaced, sessions)
            except Exception:
                logger.exception("update listener failed")

    def _server_of(self, config_key: str) -> str | None:
        return next((s for s, k in self.servers.items() if k == config_key), None)

    def _config_key_of(self, namespaced_uri: str) -> str | None:
        try:
            server, _ = self.naming.split(namespaced_uri, True)
        except GatewayError:
            return None
        return self.servers.get(server)

    # ------------------------------------------------------------ capabilities

    def capabilities(self) -> dict[str, Any]:
        """What the connected upstreams offer together (AM-AGGREGATE-CAPABILITIES), as
        {capability: options}; tools always."""
        offered: dict[str, dict[str, Any]] = {"tools": {}}
        for config_key in self.servers.values():
            caps = self.pool.capabilities(config_key)
            for name in ("prompts", "resources", "completions", "logging"):
                if name in caps:
                    offered.setdefault(name, {})
            resources = caps.get("resources")
            if isinstance(resources, dict) and resources.get("subscribe"):
                offered["resources"]["subscribe"] = True
        return offered

    # ------------------------------------------------------------ lists

    def _offering(self, kind: Kind) -> list[tuple[str, str]]:
        """(server key, config key) of the connected upstreams that offer `kind`, in order."""
        return [
            (server, key)
            for server, key in self.servers.items()
            if kind.capability in self.pool.capabilities(key)
        ]

    async def broadcast(self, kind: Kind) -> Merged:
        """Every offering upstream's entries of `kind`, fetched in parallel (each bounded by
        its own call timeout), namespaced and merged in config order (aggregate.broadcast)."""
        merged = await broadcast(
            kind,
            self._offering(kind),
            self.pool,
            self.call_timeout_for,
            self.plugins,
            self.naming,
        )
        if kind.method == "tools/list":
            self._schemas = {str(e["name"]): e.get("inputSchema") for e in merged.entries}
        self._last[kind.method] = merged.entries
        return merged

    # ------------------------------------------------------------ access control

    def visible(
        self, kind: Kind, entries: list[dict[str, Any]], identity: Identity
    ) -> list[dict[str, Any]]:
        """The entries `identity` may see."""
        if not self.policy.restricted(identity):
            return entries
        check = self.policy.check(identity)
        return [
            e
            for e in entries
            if (s := entry_subject(kind, e, self.naming)) is not None and check(s)
        ]

    def visible_names(self, identity: Identity) -> frozenset[str] | None:
        """What `identity` saw of the latest broadcasts, for list_changed (AM-ACCESS-NO-LEAK);
        None for an unrestricted identity (it is told of every change)."""
        if not self.policy.restricted(identity):
            return None
        return frozenset(
            f"{method} {json.dumps(e, sort_keys=True)}"
            for method, entries in list(self._last.items())
            for e in self.visible(LISTS[method], entries, identity)
        )

    def _route(
        self, method: str, params: Mapping[str, Any], session: str, identity: Identity
    ) -> tuple[RoutingContext, dict[str, Any]]:
        """route(), then the policy: FORBIDDEN for a target `identity` may not see (and, when
        it is restricted, for an unknown server), before anything reaches upstream."""
        try:
            context, clean = self.route(method, params, session)
        except GatewayError as exc:
            raise hidden(exc, self.policy, identity) from None
        if names_uri(method, params) and self.policy.restricted(identity):
            # The policy's globs see the URI the upstream will act on, and that is what goes
            # upstream: normalised (access.uris), or refused when it cannot be.
            try:
                context, clean = rename(context, clean, normalise_uri(context.name))
            except UriRefused as exc:
                raise GatewayError(
                    ErrorCode.NAME_INVALID, str(exc), shown(method, params)
                ) from None
        annotations = None
        if method == "tools/call":
            listed = self.pool.tools().get(context.config_key, [])
            found = next((t for t in listed if t.get("name") == context.name), None)
            annotations = found.get("annotations") if found is not None else None
        if not self.policy.visible(identity, target_subject(context, params, annotations)):
            raise forbidden(shown(method, params))
        return context, clean

    def input_schema(self, name: str) -> Any:
        """A listed tool's input schema by its server__tool name (None: not listed yet), for
        the SDK's Mcp-Param header check, which would otherwise broadcast tools/list on every
        2026-07-28 call."""
        return self._schemas.get(name)

    async def list_page(
        self,
        method: str,
        cursor: str | None,
        relay: Relay | None = None,
        identity: Identity = LOCAL,
    ) -> dict[str, Any]:
        """One page of the merged list `identity` may see: {field: entries, nextCursor?}. A
        first page broadcasts; its failures are reported to `relay`'s client as warnings
        (unless the identity is restricted). CursorInvalid for a bad cursor."""
        kind = LISTS[method]
        if cursor:
            page, next_cursor = self.pages.next(method, cursor, identity.key)
        else:
            merged = await self.broadcast(kind)
            if relay is not None and not self.policy.restricted(identity):
                for failure in merged.failures:
                    data = f"{failure.server} was left out of {method}: {failure.reason}"
                    await relay.log("warning", data, "gatespec")
            entries = self.visible(kind, merged.entries, identity)
            page, next_cursor = self.pages.first(method, entries, identity.key)
        result: dict[str, Any] = {kind.field: page}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result

    # ------------------------------------------------------------ routed requests

    def route(
        self, method: str, params: Mapping[str, Any], session: str
    ) -> tuple[RoutingContext, dict[str, Any]]:
        """The single parse point (routing.route) over this registry's servers."""
        return route(method, params, session, self.servers, self.naming)

    async def call_tool(
        self,
        session: str,
        params: Mapping[str, Any],
        relay: Relay | None = None,
        identity: Identity = LOCAL,
    ) -> dict[str, Any]:
        """tools/call of server__tool for `identity`: routed, through the plugins, to the
        upstream; its result with URIs namespaced. GatewayError for every failure of the
        gateway's own."""
        context, clean = self._route("tools/call", params, session, identity)
        arguments = clean.get("arguments") or {}
        call = ToolCall(context.name, dict(arguments) if isinstance(arguments, Mapping) else {})
        async with self.plugins.observed(context, call) as seen:
            try:
                call = seen.call = await self.plugins.before_call(context, call)
                await self._known_tool(context, call.name)
            except GatewayError as exc:
                raise hidden(exc, self.policy, identity) from None
            try:
                async with self._upstream(session, context.config_key, relay) as pool:
                    result = await pool.call(
                        context.config_key,
                        call.name,
                        call.arguments,
                        timeout=self.call_timeout_for(context.config_key),
                        relay=relay,
                    )
            except UpstreamError as exc:
                raise gateway_error(exc, context, self.naming) from None
            return namespace_answer("tools/call", context.server, seen.ended(result), self.naming)

    async def _known_tool(self, context: RoutingContext, name: str) -> None:
        """TOOL_NOT_FOUND unless the server lists `name` (seed 001 "Handle unknown tool"),
        re-listing it once first in case the tool is new."""
        if name in self._listed(context.config_key):
            return
        try:
            await self.pool.list_all(
                context.config_key, "tools/list", "tools", self.call_timeout_for(context.config_key)
            )
        except UpstreamError as exc:
            raise gateway_error(exc, context, self.naming) from None
        if name not in self._listed(context.config_key):
            raise GatewayError(
                ErrorCode.TOOL_NOT_FOUND,
                f"Tool not found: server {context.server} lists no tool {name!r}",
                self.naming.shown(context.server, name),
                {"server": context.server},
            )

    def _listed(self, config_key: str) -> set[str]:
        return {str(t.get("name")) for t in self.pool.tools().get(config_key, [])}

    async def request(
        self,
        method: str,
        params: Mapping[str, Any],
        session: str,
        relay: Relay | None = None,
        identity: Identity = LOCAL,
    ) -> dict[str, Any]:
        """prompts/get, resources/read or completion/complete for `identity`: routed and
        passed on; the answer's URIs namespaced. GatewayError (routing, access) or
        UpstreamError (the upstream's)."""
        context, clean = self._route(method, params, session, identity)
        clean.pop("_meta", None)  # the upstream session adds its own envelope
        async with self._upstream(session, context.config_key, relay) as pool:
            result = await pool.request(
                context.config_key, method, clean, self.call_timeout_for(context.config_key), relay
            )
        return namespace_answer(method, context.server, result, self.naming)

    async def subscribe(
        self,
        session: str,
        params: Mapping[str, Any],
        on: bool = True,
        identity: Identity = LOCAL,
    ) -> None:
        """resources/subscribe (on) or unsubscribe for `session` of `identity`; the upstream
        is subscribed while at least one session is."""
        method = "resources/subscribe" if on else "resources/unsubscribe"
        context, clean = self._route(method, params, session, identity)
        namespaced = self.naming.expose(True, context.server, context.name)
        upstream = {"uri": clean["uri"]}

        async def subscribe_upstream() -> object:
            timeout = self.call_timeout_for(context.config_key)
            return await self.pool.request(context.config_key, method, upstream, timeout)

        await self.subscribers.change(namespaced, session, on, subscribe_upstream)

    @asynccontextmanager
    async def _upstream(
        self, session: str, config_key: str, relay: Relay | None
    ) -> AsyncIterator[UpstreamPool]:
        """The pool `session`'s request to `config_key` goes through: its own connection when
        it has client-scoped state (client_upstreams), else the shared one."""
        serving = self.clients.serving(session, config_key, relay)
        try:
            own = await serving.__aenter__()
        except UpstreamError:
            raise
        except Exception as exc:  # a broken upstream fails this request, nothing else
            logger.exception("connecting %r for session %s failed", config_key, session)
            raise UpstreamError(
                config_key, "unavailable", f"Server {config_key} unavailable: {exc}"
            ) from exc
        try:
            yield own if own is not None else self.pool
        finally:
            await serving.__aexit__(None, None, None)

    async def forget_session(self, session: str) -> None:
        """A session ended: drop its subscriptions (unsubscribing upstream where it was the
        last) and close its own upstream connections. Never raises."""
        try:
            await self.clients.forget(session)
        except Exception:
            logger.exception("closing the upstream connections of session %s failed", session)
        for uri in self.subscribers.uris_of(session):
            try:
                await self.subscribe(session, {"uri": uri}, on=False)
            except (GatewayError, UpstreamError) as exc:
                logger.info("unsubscribing %s for a closed session failed: %s", uri, exc)

    async def set_log_level(self, level: str, session: str | None = None) -> None:
        """A client's logging/setLevel: on `session`'s own connections (client_upstreams;
        the server passes the session of a client that is one of many), else (stdio's one
        client) on the shared connections."""
        if session is not None:
            await self.clients.set_level(session, level)
        else:
            await self.pool.set_log_level(level)

    # ------------------------------------------------------------ catalog

    async def catalog_listing(self) -> CatalogListing:
        """Every offered name and every entry left out, with its reason (gatespec catalog)."""
        names: list[tuple[str, str]] = []
        excluded: list[tuple[str, str, str]] = []
        for method, kind in LISTS.items():
            merged = await self.broadcast(kind)
            names += [(str(e[kind.key]), method) for e in merged.entries]
            excluded += [(u.server, f"{method} {u.name}", u.reason) for u in merged.unoffered]
            excluded += [(f.server, method, f"left out: {f.reason}") for f in merged.failures]
        return CatalogListing(tools=names, excluded=excluded, columns=("name", "list"))

    async def compact_listing(self) -> list[dict[str, Any]]:
        """The compact tool list of seed 001 (listTools(compact=true)): name, description and
        server only."""
        merged = await self.broadcast(LISTS["tools/list"])
        out = []
        for entry in merged.entries:
            server, _ = self.naming.split(entry["name"], False)
            description = entry.get("description")
            out.append({"name": entry["name"], "description": description or "", "server": server})
        return out
