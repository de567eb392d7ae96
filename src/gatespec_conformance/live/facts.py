"""What layer-2 checks share about the IUT: one connection, and facts gathered once.

Facts are computed lazily and cached (`Live.once`), so a family selected on its own still gets
what it depends on (the tree walk, the fixture's tool ids, a stored artifact) without the
families that would normally have gathered them. Every browse is kept as a `BrowseObs`, and
every error result as evidence for the error-shape checks.
"""

from __future__ import annotations

import contextlib
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager as AsyncContextManager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final, TypeVar

import mcp_types as types
from jsonschema import Draft202012Validator

from gatespec_conformance import DEFAULT_MAX_EXAMPLES
from gatespec_conformance.fixtures.catalog import ECHO, fixture_tools
from gatespec_conformance.live import readings
from gatespec_conformance.live.client import CallLog, CallResult, IUTGone, LiveSession, Target
from gatespec_conformance.live.observations import (
    BrowseObs,
    ExpectedCatalog,
    Walk,
    expected_catalog,
    parse_browse,
    valid_id,
)
from gatespec_conformance.oracle.tool_ids import make_tool_id, seed_id_candidates
from gatespec_surface import parsers
from gatespec_surface.descriptors import PROFILES
from gatespec_surface.errors import GatewayError
from gatespec_surface.grammars import TOOL_ID_MAX_LENGTH, is_path, is_tool_id
from gatespec_surface.schemas import META_TOOL_INPUT_SCHEMAS

__all__ = [
    "QUERIES",
    "Live",
    "LiveOptions",
    "NoFact",
    "NoLog",
    "NotGiven",
]

T = TypeVar("T")

# Queries the fixture answers in a known way: (query, an upstream tool name it must find).
QUERIES: Final[tuple[tuple[str, str], ...]] = (
    ("read file", "read_file"),
    ("weather forecast", "weather_forecast"),
    ("issue", "create_issue"),
    ("echo the text back", ECHO),
    ("message", "send_message"),
)
MAX_WALK_NODES: Final = 2000  # a tree that never ends must not hang the kit


class NoFact(Exception):
    """A fact the checks need could not be established (the reason is the message; `call`,
    when there is one, is the answer that did not give it: a report quotes what it sent)."""

    def __init__(self, message: str, call: CallResult | None = None) -> None:
        super().__init__(message)
        self.call = call


class NotGiven(NoFact):
    """Something the checks need was not given to the kit (the checks are skipped)."""


class NoLog(NotGiven):
    """The fixture's call log is not available (the checks that need it are skipped)."""


@dataclass(frozen=True)
class LiveOptions:
    profile: str
    seed: int = 0
    max_examples: int = DEFAULT_MAX_EXAMPLES
    timeout: float = 30.0  # seconds per call
    hang_timeout: float = 60.0  # the hanging tool must be answered within this
    list_changed_timeout: float = 15.0
    cache_stable: bool = False  # the IUT was started with cache_stable
    namespace: str | None = None  # the fixture's namespace in the IUT (None: discover)
    connect_timeout: float = 60.0
    level: str = "spec"  # "seed": the seeds' statements, tolerant where they are silent
    tools: int | None = None  # the fixture serves this many tools (None: its full catalog)
    well_formed_only: bool = False  # the fixture serves only well-formed entries
    # The IUT's own config file when the kit wrote it (the default command's, or {mcp_config}):
    # the registry-change checks rewrite its mcpServers (None: they are skipped).
    config_file: Path | None = None
    # Bearer tokens (HTTP): the run's own identity is the target's; these are for the access
    # families (docs/conformance.md "Access control": what the restricted one may see).
    restricted_token: str | None = None
    expired_token: str | None = None


class Live:
    """The IUT as the checks see it: calls, and facts gathered once."""

    def __init__(
        self,
        target: Target,
        options: LiveOptions,
        session: LiveSession,
        log: CallLog | None,
    ) -> None:
        self.target = target
        self.options = options
        self.session = session
        self.log = log
        self.profile = options.profile
        self.meta_tools = PROFILES[options.profile].meta_tools
        self.fixture = fixture_tools(options.tools, options.well_formed_only)
        self.level = options.level
        self.browses: list[BrowseObs] = []
        self.errors: list[tuple[str, CallResult]] = []  # (meta-tool, error result)
        self._facts: dict[str, Any] = {}
        self._failed: dict[str, NoFact] = {}

    # ------------------------------------------------------------ calls

    async def call(self, name: str, args: Any, timeout: float | None = None) -> CallResult:
        result = await self.session.call(name, args, timeout or self.options.timeout)
        if result.is_error:
            self.errors.append((name, result))
        return result

    async def browse(self, args: dict[str, Any], label: str | None = None) -> BrowseObs:
        if label is None:
            label = " ".join(f"{k}={v}" for k, v in sorted(args.items()))
        obs = parse_browse(label, args, await self.call("tool_browse", args))
        self.browses.append(obs)
        return obs

    async def once(self, key: str, compute: Callable[[], Awaitable[T]]) -> T:
        """A fact computed at most once; a failure is remembered and raised as NoFact."""
        if key in self._failed:
            failed = self._failed[key]
            raise type(failed)(str(failed), failed.call)
        if key not in self._facts:
            try:
                self._facts[key] = await compute()
            except NoFact as exc:
                self._failed[key] = exc
                raise
        return self._facts[key]

    def require_log(self) -> CallLog:
        if self.log is None:
            raise NoLog("no call log: give --call-log FILE (the file the fixture writes)")
        return self.log

    # ------------------------------------------------------------ facts

    async def tools(self) -> list[types.Tool]:
        async def compute() -> list[types.Tool]:
            return await self.session.list_tools(self.options.timeout)

        return await self.once("tools", compute)

    async def stripped(self) -> list[types.Tool]:
        """tools/list entries other than the meta-tools (transparent: the stripped catalog)."""
        return [t for t in await self.tools() if t.name not in self.meta_tools]

    async def declared_schema(self, tool: str) -> Any:
        """The inputSchema the IUT declares for `tool` in tools/list (None: not listed)."""
        listed = {t.name: t for t in await self.tools()}
        return listed[tool].input_schema if tool in listed else None

    async def breaks_declared(self, tool: str, args: Any) -> bool:
        """Whether `args` break the input schema the IUT itself declares for `tool` (an
        argument its MCP SDK may refuse before the tool sees it)."""
        listed = {t.name: t for t in await self.tools()}
        schema = listed[tool].input_schema if tool in listed else None
        if not isinstance(schema, dict):
            return False
        try:
            return not Draft202012Validator(schema).is_valid(args)
        except Exception:  # an invalid declared schema: nothing to say about the arguments
            return False

    async def namespace(self) -> str:
        return await self.once("namespace", self._discover_namespace)

    async def _discover_namespace(self) -> str:
        if self.options.namespace:
            return self.options.namespace
        found: set[str] = set()
        if self.profile == "search":
            hits = await self.search_hits({"query": ECHO})
            candidates = set()
            for hit in hits:
                try:
                    namespace, name = parsers.parse_search_operation(readings.hit_operation(hit))
                except GatewayError:
                    continue
                found.add(namespace)
                if name == ECHO:
                    candidates.add(namespace)
        elif self.profile == "gateway":
            obs = await self.browse({"query": ECHO})
            for card in obs.cards or []:
                if is_tool_id(card.get("id")):
                    found.add(str(card["id"]).split(":", 1)[0])
            candidates = {
                str(c["id"]).split(":", 1)[0]
                for c in obs.cards or []
                if is_tool_id(c.get("id")) and parsers.parse_tool_id(c["id"]).name == ECHO
            }
        else:
            candidates = set()
            for tool in await self.stripped():
                tool_id = listed_tool_id(tool.name)
                if tool_id is None:
                    continue
                parts = parsers.parse_tool_id(tool_id)
                found.add(parts.namespace)
                if parts.name == ECHO:
                    candidates.add(parts.namespace)
        if len(candidates) == 1:
            return candidates.pop()
        if len(found) == 1:
            return found.pop()
        raise NoFact(
            f"cannot tell which namespace fronts the fixture (seen: {sorted(found) or 'none'}); "
            "give --namespace"
        )

    async def expected(self) -> ExpectedCatalog:
        namespace = await self.namespace()

        async def compute() -> ExpectedCatalog:
            listed: set[str] = set()
            if self.level == "seed":
                with contextlib.suppress(NoFact):
                    listed = set(await self.listed_ids())
            return expected_catalog(namespace, self.fixture, self.level, listed)

        return await self.once("expected", compute)

    async def walk(self) -> Walk:
        return await self.once("walk", self._walk)

    async def _walk(self) -> Walk:
        if self.profile != "gateway":
            raise NoFact("no path tree in this profile")
        walk = Walk()
        queue = ["/"]
        queued = {"/"}
        while queue:
            if len(walk.nodes) >= MAX_WALK_NODES:
                walk.truncated = True
                break
            path = queue.pop(0)
            obs = await self.browse({"path": path}, f"path={path}")
            walk.nodes[path] = obs
            for card in obs.cards or []:
                card_id = card.get("id")
                if not isinstance(card_id, str):
                    continue  # reported by cards/fields
                if card.get("kind") == "internal":
                    if is_path(card_id) and card_id not in queued:
                        queued.add(card_id)
                        queue.append(card_id)
                else:
                    walk.tool_cards.setdefault(card_id, card)
                    walk.parent.setdefault(card_id, path)
        root = walk.nodes["/"]
        if root.cards is None:
            raise NoFact(f'browsing "/" failed: {root.problem}', root.call)
        return walk

    def served_queries(self) -> tuple[tuple[str, str], ...]:
        """The QUERIES whose answer the fixture serves (--tools N serves only its first N)."""
        served = {t.name for t in self.fixture if t.expect == "admit"}
        return tuple((q, name) for q, name in QUERIES if name in served)

    async def queries(self) -> list[BrowseObs]:
        """One browse per served query, in `served_queries` order."""

        async def compute() -> list[BrowseObs]:
            return [await self.browse({"query": q}, f"query={q}") for q, _ in self.served_queries()]

        return await self.once("queries", compute)

    async def listed_ids(self) -> dict[str, Any]:
        """Tool ids the IUT shows for discovery: gateway, the walk's tool cards; transparent,
        the stripped entries, by the id each name stands for (a wire name, a %-encoded id or
        the id itself), or by the name when it stands for none."""
        if self.profile == "gateway":
            return dict((await self.walk()).tool_cards)
        shortened = await self._shortened_names()
        out: dict[str, Any] = {}
        for tool in await self.stripped():
            out[listed_tool_id(tool.name) or shortened.get(tool.name) or tool.name] = tool
        return out

    async def _shortened_names(self) -> dict[str, str]:
        """Wire name -> tool id for the fixture's ids under the spec's namespace: a shortened
        wire name (AM-WIRE-NAME) names its id only to whoever knows the id already."""
        try:
            namespace = await self.namespace()
        except NoFact:
            return {}
        out = {}
        for tool in self.fixture:
            tool_id = make_tool_id(namespace, tool.name, tool.schema_dict, tool.version)
            if valid_id(tool_id, TOOL_ID_MAX_LENGTH):
                out[parsers.encode_wire_name(tool_id)] = tool_id
        return out

    async def fixture_ids(self) -> dict[str, str]:
        """Fixture tool name -> the tool id the IUT lists for it, or the expected id when it
        lists none under that name. Invocation checks address tools the way the IUT names
        them, so a wrong id fails catalog/tool-id and not everything else besides."""

        async def compute() -> dict[str, str]:
            expected = await self.expected()
            try:
                listed = await self.listed_ids()
            except NoFact:
                listed = {}
            by_name: dict[str, str] = {}
            for tool_id in listed:
                try:
                    parts = parsers.parse_tool_id(tool_id)
                except GatewayError:
                    continue
                if parts.namespace == expected.namespace:
                    by_name.setdefault(parts.name, tool_id)
            out = {}
            for name, tool_id in expected.ids.items():
                hits = sorted(expected.allowed(name) & set(listed)) or self._seed_ids(
                    name, expected.namespace, set(listed)
                )
                out[name] = hits[0] if hits else by_name.get(name, tool_id)
            return out

        return await self.once("fixture-ids", compute)

    def _seed_ids(self, name: str, namespace: str, listed: set[str]) -> list[str]:
        """Listed ids seed 000 allows for a fixture tool: how to address it when the IUT
        names it another way than the spec (checked by catalog/tool-id, not here)."""
        tool = next((t for t in self.fixture if t.name == name), None)
        if tool is None:
            return []
        found = seed_id_candidates(tool.name, tool.schema_dict, tool.version, namespace)
        return sorted(found & listed)

    async def wire_name(self, name: str) -> str:
        """The wire name of a fixture tool's id (AM-WIRE-NAME)."""
        return parsers.encode_wire_name((await self.fixture_ids())[name])

    async def listed_name(self, name: str) -> str:
        """The name under which the IUT lists a fixture tool in tools/list (transparent), or
        its wire name when no entry stands for it."""
        tool_id = (await self.fixture_ids())[name]
        for tool in await self.stripped():
            if listed_tool_id(tool.name) == tool_id:
                return tool.name
        return parsers.encode_wire_name(tool_id)

    async def fixture_call(self, name: str, args: dict[str, Any] | None = None) -> CallResult:
        """tool_execute of a fixture tool by its canonical id (cached per tool, for {})."""
        tool_id = (await self.fixture_ids()).get(name)
        if tool_id is None:
            raise NoFact(f"the fixture tool {name!r} has no tool id")
        if args is not None:
            return await self.call("tool_execute", {"tool_id": tool_id, "args": args})

        async def compute() -> CallResult:
            return await self.call("tool_execute", {"tool_id": tool_id, "args": {}})

        return await self.once(f"execute:{name}", compute)

    # ------------------------------------------------------------ the search profile

    async def search_hits(self, args: dict[str, Any]) -> list[dict[str, Any]]:
        """The hits of one search (NoFact when the answer holds none)."""
        call = await self.call("search", args)
        document, _ = call.document()
        hits, _ = readings.search_hits(document) if not call.is_error else (None, None)
        if hits is None:
            raise NoFact(f"search {args} answered no list of hits", call)
        return hits

    async def operations(self) -> dict[str, str]:
        """Fixture tool name -> the operation that names it. At --level spec the spec's
        (AM-SEARCH-OPERATION: the namespace and the name part of its tool_id); at --level
        seed, where an operation is only shown by example ("/fs/readFile"), the one operation
        the IUT lists whose last segment is the tool's name (the spec's when it lists none)."""

        async def compute() -> dict[str, str]:
            expected = await self.expected()
            out = {
                name: parsers.format_search_operation(
                    expected.namespace, parsers.parse_tool_id(tool_id).name
                )
                for name, tool_id in expected.ids.items()
            }
            if self.level == "seed":
                out.update(await self._listed_operations())
            return out

        return await self.once("operations", compute)

    async def listing(self) -> dict[str, Any]:
        """The arguments of a search that lists every operation: the spec's largest limit,
        when the IUT declares a limit (the seed names none; surface/input-schema judges its
        absence at --level spec)."""
        if not await self.declares("search", "limit"):
            return {}
        return {"limit": META_TOOL_INPUT_SCHEMAS["search"]["properties"]["limit"]["maximum"]}

    async def _listed_operations(self) -> dict[str, str]:
        hits = await self.search_hits(await self.listing())
        by_last: dict[str, list[str]] = {}
        for hit in hits:
            operation = str(readings.hit_operation(hit) or "")
            by_last.setdefault(operation.rsplit("/", 1)[-1], []).append(operation)
        return {
            t.name: by_last[t.name][0] for t in self.fixture if len(by_last.get(t.name, ())) == 1
        }

    async def absent_operation(self, name: str) -> str:
        """An operation naming no tool: the fixture's own namespace with an unknown name."""
        echo = (await self.operations())[ECHO]
        return echo.rsplit("/", 1)[0] + "/" + name

    async def batch_key(self) -> str:
        """The argument of batch that holds its calls: the spec's "calls"; at --level seed,
        which names no argument ("an array of { operation, input } pairs"), the one array the
        IUT declares."""
        if self.level != "seed":
            return "calls"
        listed = {t.name: t for t in await self.tools()}
        tool = listed.get("batch")
        properties = ((tool.input_schema if tool else None) or {}).get("properties") or {}
        arrays = [
            k for k, v in properties.items() if isinstance(v, dict) and v.get("type") == "array"
        ]
        if len(arrays) != 1:
            raise NoFact(f"batch declares no single array argument: {sorted(properties)}")
        return arrays[0]

    async def declares(self, tool: str, argument: str) -> bool:
        """Whether the IUT's input schema for `tool` declares `argument`."""
        listed = {t.name: t for t in await self.tools()}
        schema = listed[tool].input_schema if tool in listed else None
        return argument in ((schema or {}).get("properties") or {})

    # ------------------------------------------------------------ another session

    @contextlib.asynccontextmanager
    async def fresh(self) -> AsyncIterator[Live]:
        """A new session of the IUT (stdio: a new process). Over HTTP it is a handshake-era
        connection: 2026-07-28 Streamable HTTP has no sessions, so per-session state such as
        the cache-stable seen-set could not be told apart from other clients'."""
        target = self.target if self.target.url is None else replace(self.target, protocol="legacy")
        async with self._another(target, "cannot open a fresh session") as live:
            yield live

    def as_token(self, token: str, protocol: str | None = None) -> AsyncContextManager[Live]:
        """A session of the IUT (at its URL) under another bearer token."""
        if self.target.url is None:
            raise NoFact("identities are checked over HTTP: give --url")
        target = replace(self.target, token=token, protocol=protocol or self.target.protocol)
        return self._another(target, "cannot connect with that token")

    @contextlib.asynccontextmanager
    async def _another(self, target: Target, failure: str) -> AsyncIterator[Live]:
        try:
            session = LiveSession(target, connect_timeout=self.options.connect_timeout)
            async with session:
                yield Live(target, self.options, session, self.log)
        except IUTGone as exc:
            raise NoFact(f"{failure}: {exc}") from exc


def listed_tool_id(name: str) -> str | None:
    """The tool_id a tools/list name stands for: a wire name (AM-WIRE-NAME), the id itself or
    its %-encoding (seed 000 §4.1); None when it stands for none."""
    try:
        return parsers.decode_wire_name(name)
    except GatewayError:
        pass
    decoded = urllib.parse.unquote(name)
    return decoded if is_tool_id(decoded) else None
