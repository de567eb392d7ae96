"""The fixture upstream: a real MCP server with a known, adversarial catalog, for layer 2.

    gatespec-conformance fixture-upstream [--call-log FILE] [--add-tool-after SECONDS]
                                          [--tools N] [--well-formed-only]
                                          [--mcp-valid-only] [--rich] [--page-size N]
    python -m gatespec_conformance.fixture_upstream [same options]

The implementation under test (IUT) fronts this server; the kit knows every tool it lists
(`FIXTURE_TOOLS`), so it can compute each expected tool_id, schema, card field and result
with the generated package and compare them with what the IUT shows its clients.

What the catalog probes (each tool's `why`): long, multi-sentence, CJK, special-token and
abbreviation-laden descriptions that need truncation; near-colliding names (read_file,
read-file, readFile, read.file); names the name grammar rejects (which the IUT must exclude);
odd and malformed input schemas; annotations; a versioned tool; results that are large,
binary, structured, errors or never arrive; more tools in one namespace than
budgets.CLUSTER_THRESHOLD, so path browsing has clusters.

`--tools N` serves N well-formed tools (the first N of the catalog, then generated ones), so
size-dependent behaviour (the root of a small catalog, clusters of a large one) can be probed;
`--well-formed-only` leaves out the entries that must or may be excluded.

Every tools/call received is appended to the call log as one JSON line
``{"name", "arguments", "ts"}``: the kit reads it to prove what did (or did not) reach
upstream. The ``add_tool`` tool (or ``--add-tool-after``) adds a tool and announces
tools/list_changed, in the era of each client (notification, or subscriptions/listen event).

`--rich` adds prompts, resources, templates, completion, subscriptions, logging and tools that
talk back during a call (fixture_rich); `--page-size N` pages every list. The aggregate profile's
checks use both.

Malformed entries are sent verbatim: the SDK validates typed tools/list results against the
protocol's Tool shape (and drops unknown annotation keys such as costHint), so a middleware
replaces the listing with the raw entries after the SDK has built the envelope.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from gatespec_surface.budgets import (
    CLUSTER_THRESHOLD,
    TEXT_ARTIFACT_THRESHOLD_CHARS,
    VIEW_MAX_CHARS,
)
from gatespec_surface.grammars import NAME_MAX_LENGTH

__all__ = [
    "ADD_TOOL",
    "BIG_TEXT",
    "ECHO",
    "ENV_TOOLS",
    "ENV_WELL_FORMED_ONLY",
    "FAILS",
    "FAILURE_TEXT",
    "FIXTURE_TOOLS",
    "HANG",
    "IMAGE",
    "IMAGE_BYTES",
    "MCP_VALID_ONLY_PROFILES",
    "STRUCTURED",
    "STRUCTURED_CONTENT",
    "FixtureTool",
    "big_text",
    "by_name",
    "direct_result",
    "fixture_argv",
    "fixture_tools",
    "main",
]

Expect = Literal["admit", "exclude", "either"]

# The profiles whose fixtures serve only tool entries MCP's schema allows (`--mcp-valid-only`:
# Tool.inputSchema is required and is {"type": "object", ...}). Their seeds say nothing of an
# upstream that breaks MCP: seed 003's operations come from alknet's own registry, and seed
# 001's "registry fetches all tools from the client (handling pagination)" builds on MCP
# answers. An MCP client may refuse a whole tools/list page holding such an entry (the official
# SDK's does: "Server X sent an invalid response"), which would hide every other tool of that
# page; no amendment asks these profiles to survive it, so no level judges it there. The
# gateway and transparent profiles keep every entry: seed 000's catalog is judged on them.
MCP_VALID_ONLY_PROFILES: Final = frozenset({"search", "aggregate"})

# Tools with behaviour the kit relies on.
ECHO: Final = "echo"
BIG_TEXT: Final = "big_text"
IMAGE: Final = "image"
STRUCTURED: Final = "structured"
FAILS: Final = "fails"
HANG: Final = "hang"
ADD_TOOL: Final = "add_tool"

HANG_SECONDS: Final = 3600.0  # far beyond any sensible call timeout
FAILURE_TEXT: Final = "fixture failure: this tool fails on purpose (code 17)"
# A valid 1x1 PNG (67 bytes): the binary result.
IMAGE_BYTES: Final = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
# Keys with "/" and "~" make JSON-pointer escapes (~1, ~0) matter.
STRUCTURED_CONTENT: Final[dict[str, Any]] = {
    "answer": 42,
    "unit": "widgets",
    "nested": {"a/b": 1, "m~n": [1, 2, 3]},
    "items": [{"id": 1, "label": "first"}, {"id": 2, "label": "second"}],
}


def big_text() -> str:
    """The large text result: numbered ASCII lines, over the artifact threshold and within
    one view (so "all" and "lines:A-B" have exact expected answers)."""
    line_count = max(10, 5 * TEXT_ARTIFACT_THRESHOLD_CHARS // 48)
    lines = [f"line {i:04d}: the quick brown fox jumps over it" for i in range(1, line_count + 1)]
    text = "\n".join(lines) + "\n"
    assert TEXT_ARTIFACT_THRESHOLD_CHARS < len(text) <= VIEW_MAX_CHARS, len(text)
    return text


@dataclass(frozen=True)
class FixtureTool:
    """One tools/list entry, sent verbatim, and what the kit expects the IUT to do with it."""

    name: str
    input_schema: Any  # deliberately Any: some entries are malformed
    description: str | None = None
    expect: Expect = "admit"
    why: str = ""
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = None
    has_input_schema: bool = True

    @property
    def version(self) -> str | None:
        value = (self.meta or {}).get("version")
        return value if isinstance(value, str) else None

    @property
    def mcp_valid(self) -> bool:
        """An entry MCP's schema allows: Tool.inputSchema is required and is an object schema
        ({"type": "object", ...}). An MCP client may reject a whole tools/list page holding any
        other entry (the official SDK's does: "sent an invalid response")."""
        schema = self.input_schema
        return self.has_input_schema and isinstance(schema, dict) and schema.get("type") == "object"

    @property
    def schema_dict(self) -> dict[str, Any]:
        """The input schema for hashing: a malformed one (not an object) counts as none."""
        return self.input_schema if isinstance(self.input_schema, dict) else {}

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.description is not None:
            out["description"] = self.description
        if self.has_input_schema:
            out["inputSchema"] = self.input_schema
        if self.output_schema is not None:
            out["outputSchema"] = self.output_schema
        if self.annotations is not None:
            out["annotations"] = self.annotations
        if self.meta is not None:
            out["_meta"] = self.meta
        return out


def _obj(props: dict[str, Any] | None = None, required: Sequence[str] = (), **extra: Any) -> Any:
    schema: dict[str, Any] = {"type": "object"}
    if props is not None:
        schema["properties"] = props
    if required:
        schema["required"] = list(required)
    schema.update(extra)
    return schema


_PATH_ARG: Final = _obj({"path": {"type": "string", "description": "A workspace path."}}, ["path"])
_READ_DESCRIPTION: Final = "Read a file from the workspace and return its text."
_LONG_SENTENCES: Final = (
    "Search the knowledge base for documents that match a query. "
    "Results are ranked by relevance and include a short snippet! "
    "Filters narrow the search by author, date range and tag? "
    "Pagination uses an opaque cursor returned with each page of results. "
    "Deleted documents are never returned, even to administrators. "
    "Large result sets are summarised rather than listed in full."
)
_ONE_HUGE_SENTENCE: Final = " ".join(
    f"parameter{i} controls how the fixture processes segment {i} of the input stream"
    for i in range(1, 16)
)
_CJK: Final = (
    "从工作区读取文件并返回其全部内容。文件路径必须是相对路径，不能包含上级目录。"
    "大文件会被分段返回，每段最多一万个字符。二进制文件以十六进制表示返回。"
    "如果文件不存在，则返回错误并说明原因。读取操作不会修改任何文件。"
)
_SPECIAL: Final = (
    "Handles <|endoftext|> and <|im_start|>system text literally; quotes \" ' ` and "
    "backslashes \\ stay; emoji 🦊🚀, zero\u200bwidth, bidi \u202eoverride\u202c, "
    "tabs\tand NUL-free controls. " + "Pad sentence here. " * 6
)
_ABBREVIATIONS: Final = (
    "Formats values, e.g. dates and times, i.e. ISO strings, as text for report.txt files "
    "and config.yaml entries; see v1.2 docs etc. for the full list of supported formats and "
    "the rules applied to each of them when no explicit locale is configured by the caller. "
    "A second sentence follows."
)
_FINANCE: Final = (
    "Summarise the quarterly financial statements of every subsidiary into one consolidated "
    "report with revenue, margin, cash flow and headcount tables, currency-normalised and "
    "annotated with the variances that exceed the configured thresholds for the quarter."
)


def _deep(levels: int) -> Any:
    node: dict[str, Any] = {"type": "string"}
    for depth in range(levels, 0, -1):
        node = _obj({f"level{depth}": node}, [f"level{depth}"])
    return node


def _fillers() -> list[FixtureTool]:
    """Ordinary tools that share name words, enough for the namespace to be clustered."""
    words = {
        "create_issue": "Create an issue in the tracker with a title and body.",
        "list_issues": "List open issues, newest first.",
        "close_issue": "Close an issue by number.",
        "comment_on_issue": "Add a comment to an issue.",
        "send_message": "Send a chat message to a channel.",
        "list_messages": "List recent messages of a channel.",
        "delete_message": "Delete a message by id.",
        "get_weather": "Current weather for a city.",
        "weather_forecast": "A five day weather forecast for a city.",
        "write_file": "Write text to a file in the workspace.",
    }
    return [
        FixtureTool(name, _obj({"value": {"type": "string"}}), text, why="cluster filler")
        for name, text in words.items()
    ]


_LONG_NAME: Final = ("very_long_tool_name_" * 20)[: NAME_MAX_LENGTH + 72]  # over the name cap
# a name at the cap made of short hyphenated parts: many tokens (AM-CARD-OVER-CAP)
_OVER_CAP_NAME: Final = "-".join("abcdefghijklmnopqrstuvwxyz0123456789" * 4)[: NAME_MAX_LENGTH - 1]

FIXTURE_TOOLS: Final[tuple[FixtureTool, ...]] = (
    FixtureTool(
        ECHO,
        _obj(
            {
                "text": {"type": "string", "minLength": 1, "maxLength": 200},
                "times": {"type": "integer", "minimum": 1, "maximum": 5},
            },
            ["text"],
            additionalProperties=False,
        ),
        "Echo the text back, optionally repeated.",
        why="args validation and round trips",
    ),
    FixtureTool("read_file", _PATH_ARG, _READ_DESCRIPTION, why="near-colliding names"),
    FixtureTool("read-file", _PATH_ARG, _READ_DESCRIPTION, why="near-colliding names"),
    FixtureTool("readFile", _PATH_ARG, _READ_DESCRIPTION, why="near-colliding names"),
    FixtureTool("read.file", _PATH_ARG, _READ_DESCRIPTION, why="near-colliding names"),
    FixtureTool(BIG_TEXT, _obj({}), "Return a long text document.", why="text artifact"),
    FixtureTool(IMAGE, _obj({}), "Return a tiny PNG image.", why="binary artifact"),
    FixtureTool(
        STRUCTURED,
        _obj({}),
        "Return structured content.",
        why="structuredContent artifact, facts, JSON pointers",
        output_schema=_obj({"answer": {"type": "integer"}}, ["answer"]),
    ),
    FixtureTool(FAILS, _obj({}), "Always fails.", why="isError result"),
    FixtureTool(HANG, _obj({}), "Never answers.", why="call timeout"),
    FixtureTool(ADD_TOOL, _obj({}), "Add a tool to this server.", why="list_changed"),
    FixtureTool("long_description", _obj({}), _LONG_SENTENCES, why="sentence truncation"),
    FixtureTool("hard_cut_description", _obj({}), _ONE_HUGE_SENTENCE, why="hard cut"),
    FixtureTool("cjk_description", _obj({}), _CJK, why="full-width sentence ends"),
    FixtureTool("special_characters", _obj({}), _SPECIAL, why="special tokens and characters"),
    FixtureTool("abbreviations", _obj({}), _ABBREVIATIONS, why="e.g./i.e./file.txt are no ends"),
    FixtureTool(
        "multi_line_description",
        _obj({}),
        "First line.\nSecond line\twith a tab.\r\nThird line.\u2028Fourth.",
        why="line breaks never reach a card",
    ),
    FixtureTool("no_description", _obj({}), None, why="absent description"),
    FixtureTool(
        "leaky_description",
        _obj({}),
        'Takes args_schema: {"properties": {"q": {"type": "string"}}} as its input.',
        why="a description that stringifies a schema (banned card content)",
    ),
    FixtureTool(
        "read_only_tool",
        _obj({}),
        "Look something up.",
        why="readOnlyHint",
        annotations={"readOnlyHint": True},
    ),
    FixtureTool(
        "destructive_tool",
        _obj({}),
        "Remove something.",
        why="destructiveHint",
        annotations={"destructiveHint": True, "readOnlyHint": False},
    ),
    FixtureTool(
        "costly_tool", _obj({}), "Expensive.", why="costHint", annotations={"costHint": 2.5}
    ),
    FixtureTool(
        "versioned_tool",
        _obj({"q": {"type": "string"}}),
        "A tool with a declared version.",
        why="version from _meta",
        meta={"version": "1.2.0"},
    ),
    FixtureTool("no_properties", {"type": "object"}, "Takes no arguments.", why="bare schema"),
    FixtureTool("deep_nesting", _deep(8), "Deeply nested arguments.", why="deep schema"),
    FixtureTool(
        "draft07_schema",
        {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "definitions": {"count": {"type": "integer", "minimum": 0}},
            "properties": {"count": {"$ref": "#/definitions/count"}},
            "required": ["count"],
        },
        "A draft-07 schema with $ref.",
        why="declared draft",
    ),
    FixtureTool(
        "summarise_quarterly_financial_statements_for_every_subsidiary",
        _obj({"quarter": {"type": "string"}}),
        _FINANCE,
        why="long name and long description: the card line needs real truncation",
        annotations={"readOnlyHint": True, "destructiveHint": True, "costHint": 12.5},
    ),
    *_fillers(),
    # ---- must be excluded: names outside the name grammar, or a card over its hard cap
    FixtureTool("1st_tool", _obj({}), "Starts with a digit.", "exclude", "name grammar"),
    FixtureTool("bad name", _obj({}), "Has a space.", "exclude", "name grammar"),
    FixtureTool(_LONG_NAME, _obj({}), "Longer than the name cap.", "exclude", "name length cap"),
    FixtureTool(_OVER_CAP_NAME, _obj({}), "Id over the card cap.", "exclude", "AM-CARD-OVER-CAP"),
    # ---- malformed schemas: excluding them is fine, crashing or mis-carding is not
    FixtureTool("not_object_schema", {"type": "string"}, "Schema of a string.", "either"),
    FixtureTool("schema_is_a_list", [], "inputSchema is an array.", "either"),
    FixtureTool(
        "invalid_schema",
        _obj({"a": {"type": "no-such-type"}}),
        "Not a valid JSON Schema.",
        "either",
    ),
    FixtureTool(
        "no_input_schema", None, "No inputSchema at all.", "either", has_input_schema=False
    ),
)

assert sum(t.expect == "admit" for t in FIXTURE_TOOLS) > CLUSTER_THRESHOLD  # clusters exist


def _text_result(value: str, is_error: bool = False, **extra: Any) -> Any:
    import mcp_types as types

    return types.CallToolResult(
        content=[types.TextContent(type="text", text=value)], is_error=is_error, **extra
    )


def direct_result(name: str, args: Mapping[str, Any]) -> Any:
    """The fixture's result for the tools whose results the kit judges (echo, big_text, image,
    structured, fails), computed without a server: what a proxy that passes the upstream's
    result through must return (None for any other tool)."""
    if name == ECHO:
        times = args.get("times", 1)
        return _text_result(" ".join([str(args.get("text"))] * int(times)))
    if name == BIG_TEXT:
        return _text_result(big_text())
    if name == IMAGE:
        import mcp_types as types

        data = base64.b64encode(IMAGE_BYTES).decode("ascii")
        image = types.ImageContent(type="image", data=data, mime_type="image/png")
        return types.CallToolResult(content=[image])
    if name == STRUCTURED:
        return _text_result("answer is 42", structured_content=STRUCTURED_CONTENT)
    if name == FAILS:
        return _text_result(FAILURE_TEXT, is_error=True)
    return None


def by_name(name: str) -> FixtureTool:
    return next(t for t in FIXTURE_TOOLS if t.name == name)


def _generated(n: int) -> FixtureTool:
    topics = ("invoice", "ticket", "report", "calendar", "contact", "deploy", "metric", "backup")
    topic = topics[n % len(topics)]
    return FixtureTool(
        f"gen_{topic}_{n:04d}",
        _obj({"id": {"type": "string"}}),
        f"Handle {topic} record number {n}.",
        why="a generated tool (--tools)",
    )


def fixture_tools(
    count: int | None = None, well_formed_only: bool = False, mcp_valid_only: bool = False
) -> tuple[FixtureTool, ...]:
    """The catalog served: all of FIXTURE_TOOLS by default; with `count`, that many well-formed
    tools (the catalog's first, then generated ones), followed by the entries that must or may
    be excluded unless `well_formed_only`; `mcp_valid_only` leaves out the entries MCP's Tool
    schema does not allow (`FixtureTool.mcp_valid`) and keeps the rest."""
    admitted = [t for t in FIXTURE_TOOLS if t.expect == "admit"]
    others = [t for t in FIXTURE_TOOLS if t.expect != "admit"]
    if mcp_valid_only:
        others = [t for t in others if t.mcp_valid]
    if count is not None:
        admitted = admitted[:count] + [_generated(n) for n in range(1, count - len(admitted) + 1)]
    return (*admitted, *([] if well_formed_only else others))


def fixture_argv(
    call_log: str | Path | None = None,
    python: str | None = None,
    tools: int | None = None,
    well_formed_only: bool = False,
    rich: bool = False,
    page_size: int | None = None,
    name: str | None = None,
    mcp_valid_only: bool = False,
) -> list[str]:
    """The command that starts this server (no PATH lookup of a console script needed)."""
    argv = [python or sys.executable, "-m", "gatespec_conformance.fixture_upstream"]
    if call_log is not None:
        argv += ["--call-log", str(call_log)]
    if tools is not None:
        argv += ["--tools", str(tools)]
    if well_formed_only:
        argv.append("--well-formed-only")
    if mcp_valid_only:
        argv.append("--mcp-valid-only")
    if rich:
        argv.append("--rich")
    if page_size is not None:
        argv += ["--page-size", str(page_size)]
    if name is not None:
        argv += ["--name", name]
    return argv


# ------------------------------------------------------------------ the server


@dataclass
class _State:
    call_log: Path | None
    name: str | None = None  # --name: written into every log entry (fixtures sharing a log)
    tools: tuple[FixtureTool, ...] = FIXTURE_TOOLS
    added: list[FixtureTool] = field(default_factory=list)
    # The latest handshake-era request's session, for list_changed outside a request: its
    # un-related notifications use the connection's standalone channel. (A stdio server has
    # one client; the per-request session objects are gone once a request ends, so hold one.)
    session: Any = None

    def log(self, name: str, arguments: Any) -> None:
        if self.call_log is None:
            return
        entry: dict[str, Any] = {"name": name, "arguments": arguments, "ts": time.time()}
        if self.name is not None:
            entry["server"] = self.name
        line = json.dumps(entry)
        with self.call_log.open("a", encoding="utf-8") as f:  # one write per call, then closed
            f.write(line + "\n")

    def listing(self) -> list[dict[str, Any]]:
        return [t.wire() for t in (*self.tools, *self.added)]

    def add_tool(self) -> str:
        n = len(self.added) + 1
        name = f"added_{n}"
        schema = _obj({"x": {"type": "string"}})
        self.added.append(FixtureTool(name, schema, f"Added at run time ({n})."))
        return name


def build_server(
    call_log: Path | None,
    tools: tuple[FixtureTool, ...] = FIXTURE_TOOLS,
    rich: bool = False,
    page_size: int | None = None,
    server_name: str | None = None,
) -> tuple[Any, _State, Any]:
    """(server, state, announce) where announce() tells every client the list changed."""
    import anyio
    import mcp_types as types
    from mcp.server import Server
    from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    from gatespec_conformance.fixture_rich import RELAY_TOOL_NAMES, RELAY_TOOLS, Rich

    state = _State(call_log, name=server_name, tools=tools)
    bus = InMemorySubscriptionBus()
    features = Rich(state.log, page_size) if rich else None

    def remember(ctx: Any) -> None:
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS and ctx.session is not None:
            state.session = ctx.session

    async def announce() -> None:
        await bus.publish(ToolsListChanged())  # 2026-07-28 subscribers
        if state.session is not None:
            try:
                await state.session.send_tool_list_changed()
            except Exception:  # the client went away: nothing to tell
                state.session = None

    def text(value: str, is_error: bool = False, **extra: Any) -> types.CallToolResult:
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=value)], is_error=is_error, **extra
        )

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        remember(ctx)
        return types.ListToolsResult(tools=[])  # the middleware puts the raw entries in

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        remember(ctx)
        args = dict(params.arguments or {})
        state.log(params.name, args)
        name = params.name
        if features is not None and name in RELAY_TOOL_NAMES:
            return await features.call(ctx, params, bus)
        direct = direct_result(name, args)
        if direct is not None:
            return direct
        if name == HANG:
            await anyio.sleep(HANG_SECONDS)
            return text("woke up")
        if name == ADD_TOOL:
            added = state.add_tool()
            if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
                await bus.publish(ToolsListChanged())
            else:
                await ctx.session.send_tool_list_changed()
            return text(added)
        known = {t.name for t in (*state.tools, *state.added)}
        if name in known:
            return text(f"{name} called with {json.dumps(args, sort_keys=True)}")
        return text(f"no tool named {name!r}", is_error=True)

    async def raw_listing(ctx: Any, call_next: Any) -> Any:
        if features is not None:
            features.listing_guard(ctx.method)
        result = await call_next(ctx)
        if ctx.method == "tools/list" and isinstance(result, dict):
            listing = state.listing() + (list(RELAY_TOOLS) if features is not None else [])
            cursor = (ctx.params or {}).get("cursor")
            start = int(cursor) if isinstance(cursor, str) and cursor.isdigit() else 0
            end = start + page_size if page_size else len(listing)
            result = {**result, "tools": listing[start:end]}
            if end < len(listing):
                result["nextCursor"] = str(end)
        return result

    handlers: dict[str, Any] = {}
    if features is not None:
        handlers = {
            "on_list_prompts": features.list_prompts,
            "on_get_prompt": features.get_prompt,
            "on_list_resources": features.list_resources,
            "on_list_resource_templates": features.list_templates,
            "on_read_resource": features.read_resource,
            "on_subscribe_resource": features.subscribe,
            "on_unsubscribe_resource": features.unsubscribe,
            "on_completion": features.complete,
        }
    from mcp.server.caching import CacheHint
    from mcp_types.methods import CACHEABLE_METHODS

    listen = ListenHandler(bus)

    async def listening(ctx: Any, params: Any) -> Any:
        # 2026-07-28 subscribes to resources in the listen filter: they count as subscribed
        # (touch announces them) while the stream is open.
        uris = [str(u) for u in (params.notifications.resource_subscriptions or ())]
        if features is None or not uris:
            return await listen(ctx, params)
        state.log("listen", {"uris": uris})
        features.subscribed.update(uris)
        try:
            return await listen(ctx, params)
        finally:
            features.subscribed.difference_update(uris)

    server = Server(
        "gatespec-fixture-upstream",
        version="1",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=listening,
        # 2026-07-28 results of these carry freshness hints; the rich handlers answer plain
        # dicts, so the server fills "stale at once, this client only".
        cache_hints={m: CacheHint() for m in CACHEABLE_METHODS},  # type: ignore[misc]
        **handlers,
    )
    if features is not None:
        from mcp_types import SetLevelRequestParams

        server.add_request_handler("logging/setLevel", SetLevelRequestParams, features.set_level)
    server.middleware.append(raw_listing)
    return server, state, announce


async def _serve(
    call_log: Path | None,
    add_after: float | None,
    tools: tuple[FixtureTool, ...],
    rich: bool = False,
    page_size: int | None = None,
    server_name: str | None = None,
) -> None:
    import anyio
    from mcp.server.lowlevel.server import NotificationOptions
    from mcp.server.stdio import stdio_server

    server, state, announce = build_server(call_log, tools, rich, page_size, server_name)
    options = server.create_initialization_options(NotificationOptions(tools_changed=True))

    async def add_later(delay: float) -> None:
        await anyio.sleep(delay)
        state.add_tool()
        await announce()

    async with anyio.create_task_group() as tg:
        if add_after is not None:
            tg.start_soon(add_later, add_after)
        async with stdio_server() as (read, write):
            await server.run(read, write, options)
        tg.cancel_scope.cancel()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--call-log",
        metavar="FILE",
        help="append every tools/call received to FILE as one JSON line {name, arguments, ts}",
    )
    parser.add_argument(
        "--add-tool-after",
        type=float,
        metavar="SECONDS",
        help="add a tool and announce tools/list_changed this long after start",
    )
    parser.add_argument(
        "--tools",
        type=positive_count,
        metavar="N",
        help="serve N well-formed tools: the catalog's first N, then generated ones",
    )
    parser.add_argument(
        "--well-formed-only",
        action="store_true",
        help="leave out the entries an IUT must or may exclude (malformed, bad names, over cap)",
    )
    parser.add_argument(
        "--mcp-valid-only",
        action="store_true",
        help="leave out the entries MCP's Tool schema does not allow (an inputSchema that is "
        "missing or not an object schema); keep the other entries an IUT must or may exclude",
    )
    parser.add_argument(
        "--rich",
        action="store_true",
        help="also serve prompts, resources, templates, completion, subscriptions, logging and "
        "tools that talk back during a call (progress, log, sample, elicit, roots, slow, touch)",
    )
    parser.add_argument(
        "--page-size",
        type=positive_count,
        metavar="N",
        help="answer every list in pages of N entries",
    )
    parser.add_argument(
        "--name",
        metavar="KEY",
        help="write KEY as the server of every call-log entry (fixtures sharing one log)",
    )


def positive_count(text: str) -> int:
    """argparse type of a size: a whole number of at least 1."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return int(text)


# Defaults for --tools and --well-formed-only, for an IUT that starts the fixture from its own
# configuration (the kit sets them for each fixture size; pass them through to the fixture).
ENV_TOOLS: Final = "GATESPEC_FIXTURE_TOOLS"
ENV_WELL_FORMED_ONLY: Final = "GATESPEC_FIXTURE_WELL_FORMED_ONLY"


def _from_env(args: argparse.Namespace) -> tuple[int | None, bool]:
    import os

    tools = args.tools
    if tools is None and os.environ.get(ENV_TOOLS, "").isdigit():
        tools = int(os.environ[ENV_TOOLS]) or None
    flag = os.environ.get(ENV_WELL_FORMED_ONLY, "").lower() in ("1", "true", "yes")
    return tools, args.well_formed_only or flag


def run(args: argparse.Namespace, *_: Any) -> int:
    import anyio

    call_log = Path(args.call_log) if args.call_log else None
    if call_log is not None:
        call_log.parent.mkdir(parents=True, exist_ok=True)
        call_log.touch()  # exists from the start: an empty log means "no calls yet"
    tools = fixture_tools(*_from_env(args), mcp_valid_only=args.mcp_valid_only)
    anyio.run(_serve, call_log, args.add_tool_after, tools, args.rich, args.page_size, args.name)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="gatespec-conformance fixture-upstream", description=__doc__.split("\n\n")[0]
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
