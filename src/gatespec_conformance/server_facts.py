"""What layer-2 checks share about the IUT: one connection, and facts gathered once.

Facts are computed lazily and cached (`Live.once`), so a family selected on its own still gets
what it depends on (the tree walk, the fixture's tool ids, a stored artifact) without the
families that would normally have gathered them. Every browse is kept as a `BrowseObs`, and
every error result as evidence for the error-shape checks.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Final, TypeVar

import mcp_types as types
from jsonschema import Draft202012Validator

from gatespec_conformance import DEFAULT_MAX_EXAMPLES
from gatespec_conformance.fixture_upstream import ECHO, FIXTURE_TOOLS
from gatespec_conformance.live_client import CallLog, CallResult, IUTGone, LiveSession, Target
from gatespec_surface import parsers
from gatespec_surface.descriptors import PROFILES, output_schema
from gatespec_surface.errors import GatewayError
from gatespec_surface.grammars import is_path, is_tool_id

__all__ = [
    "QUERIES",
    "BrowseObs",
    "ExpectedCatalog",
    "Live",
    "LiveOptions",
    "NoFact",
    "NoLog",
    "Walk",
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
_BROWSE_OUTPUT: Final = Draft202012Validator(output_schema("tool_browse") or {})


class NoFact(Exception):
    """A fact the checks need could not be established (the reason is the message)."""


class NoLog(NoFact):
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


@dataclass(frozen=True)
class BrowseObs:
    """One tool_browse call: its arguments, the raw call, and the parsed parts."""

    label: str
    args: dict[str, Any]
    call: CallResult
    cards: list[dict[str, Any]] | None  # structured cards (None: the browse failed)
    lines: list[str]  # the text content, split at "\n"
    problem: str | None  # why the response is unusable, if it is

    @property
    def text(self) -> str:
        return self.call.text


@dataclass
class Walk:
    """The whole path tree from "/": every node browsed, every tool card seen."""

    nodes: dict[str, BrowseObs] = field(default_factory=dict)
    tool_cards: dict[str, dict[str, Any]] = field(default_factory=dict)
    parent: dict[str, str] = field(default_factory=dict)  # tool id -> the path listing it
    truncated: bool = False


@dataclass(frozen=True)
class ExpectedCatalog:
    """The fixture's tools as the spec says the IUT must identify them."""

    namespace: str
    ids: dict[str, str]  # fixture tool name -> tool_id (names the grammar accepts)


def expected_catalog(namespace: str) -> ExpectedCatalog:
    ids: dict[str, str] = {}
    for tool in FIXTURE_TOOLS:
        try:
            ids[tool.name] = parsers.make_tool_id(
                namespace, tool.name, tool.input_schema, tool.version
            )
        except GatewayError:
            continue  # a name no tool_id can carry: the tool must be excluded
    return ExpectedCatalog(namespace, ids)


def _parse_browse(label: str, args: dict[str, Any], call: CallResult) -> BrowseObs:
    lines = call.text.split("\n") if call.result is not None else []
    if call.result is None:
        return BrowseObs(label, args, call, None, lines, f"no result: {call.error}")
    if call.result.is_error:
        return BrowseObs(label, args, call, None, lines, f"error result: {call.text[:300]}")
    structured = call.structured
    if not isinstance(structured, dict):
        return BrowseObs(label, args, call, None, lines, "no structuredContent (BrowseResult)")
    errors = sorted(_BROWSE_OUTPUT.iter_errors(structured), key=lambda e: list(e.path))
    cards = structured.get("cards")
    if errors or not isinstance(cards, list):
        where = "/".join(str(p) for p in errors[0].path) if errors else "cards"
        why = errors[0].message if errors else "missing"
        return BrowseObs(
            label,
            args,
            call,
            cards if isinstance(cards, list) else None,
            lines,
            f"structuredContent breaks BrowseResult at {where or '(root)'}: {why[:200]}",
        )
    return BrowseObs(label, args, call, cards, lines, None)


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
        self.browses: list[BrowseObs] = []
        self.errors: list[tuple[str, CallResult]] = []  # (meta-tool, error result)
        self._facts: dict[str, Any] = {}
        self._failed: dict[str, str] = {}

    # ------------------------------------------------------------ calls

    async def call(self, name: str, args: Any, timeout: float | None = None) -> CallResult:
        result = await self.session.call(name, args, timeout or self.options.timeout)
        if result.is_error:
            self.errors.append((name, result))
        return result

    async def browse(self, args: dict[str, Any], label: str | None = None) -> BrowseObs:
        if label is None:
            label = " ".join(f"{k}={v}" for k, v in sorted(args.items()))
        obs = _parse_browse(label, args, await self.call("tool_browse", args))
        self.browses.append(obs)
        return obs

    async def once(self, key: str, compute: Callable[[], Awaitable[T]]) -> T:
        """A fact computed at most once; a failure is remembered and raised as NoFact."""
        if key in self._failed:
            raise NoFact(self._failed[key])
        if key not in self._facts:
            try:
                self._facts[key] = await compute()
            except NoFact as exc:
                self._failed[key] = str(exc)
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

    async def namespace(self) -> str:
        return await self.once("namespace", self._discover_namespace)

    async def _discover_namespace(self) -> str:
        if self.options.namespace:
            return self.options.namespace
        found: set[str] = set()
        if self.profile == "gateway":
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
                try:
                    parts = parsers.parse_tool_id(parsers.decode_wire_name(tool.name))
                except GatewayError:
                    continue
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
        return await self.once("expected", lambda: _ready(expected_catalog(namespace)))

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
            raise NoFact(f'browsing "/" failed: {root.problem}')
        return walk

    async def queries(self) -> list[BrowseObs]:
        async def compute() -> list[BrowseObs]:
            return [await self.browse({"query": q}, f"query={q}") for q, _ in QUERIES]

        return await self.once("queries", compute)

    async def listed_ids(self) -> dict[str, Any]:
        """Tool ids the IUT shows for discovery: gateway, the walk's tool cards; transparent,
        the stripped entries (by the wire name of each expected id, or decoded)."""
        if self.profile == "gateway":
            return dict((await self.walk()).tool_cards)
        expected = await self.expected()
        by_wire = {t.name: t for t in await self.stripped()}
        out: dict[str, Any] = {}
        for tool_id in expected.ids.values():
            wire = parsers.encode_wire_name(tool_id)
            if wire in by_wire:
                out[tool_id] = by_wire.pop(wire)
        for name, tool in by_wire.items():  # the rest, by their decoded ids where possible
            try:
                out[parsers.decode_wire_name(name)] = tool
            except GatewayError:
                out[name] = tool
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
            return {name: by_name.get(name, tool_id) for name, tool_id in expected.ids.items()}

        return await self.once("fixture-ids", compute)

    async def wire_name(self, name: str) -> str:
        """The wire name of a fixture tool's id (AM-WIRE-NAME)."""
        return parsers.encode_wire_name((await self.fixture_ids())[name])

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

    # ------------------------------------------------------------ another session

    @contextlib.asynccontextmanager
    async def fresh(self) -> AsyncIterator[Live]:
        """A new session of the IUT (stdio: a new process). Over HTTP it is a handshake-era
        connection: 2026-07-28 Streamable HTTP has no sessions, so per-session state such as
        the cache-stable seen-set could not be told apart from other clients'."""
        target = self.target if self.target.url is None else replace(self.target, protocol="legacy")
        try:
            session = LiveSession(target, connect_timeout=self.options.connect_timeout)
            async with session:
                yield Live(target, self.options, session, self.log)
        except IUTGone as exc:
            raise NoFact(f"cannot open a fresh session: {exc}") from exc


async def _ready(value: T) -> T:
    return value
