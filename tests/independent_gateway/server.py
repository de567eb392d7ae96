"""The MCP surface: gateway (§4.2) and transparent (§4.1) profiles over one dispatcher."""

from __future__ import annotations

import json
from typing import Any

import anyio
import jsonschema
import mcp.types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

from .aggregate import serve_aggregate
from .browse import SessionOrder, browse_args, browse_path, browse_query
from .cards import browse_payload, rank_order
from .catalog import Catalog
from .envelope import ArtifactStore, to_envelope, view
from .errors import GatewayError
from .http_serve import load_identities, serve_http
from .search import build_table
from .search_server import make_server
from .upstream import Upstream, log

STARTUP_TIMEOUT_S = 60.0
SENTINEL_SCHEMA = {"type": "object"}


def _meta_tool(name: str, description: str, required: str | None, *optional: str) -> types.Tool:
    """A meta-tool whose arguments are strings, except `args`, which is an object."""
    names = ([required] if required else []) + list(optional)
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {n: {"type": "object" if n == "args" else "string"} for n in names},
        "additionalProperties": False,
    }
    if required:
        schema["required"] = [required]
    return types.Tool(name=name, description=description, input_schema=schema)


BROWSE = _meta_tool(
    "tool_browse",
    "Find tools. Pass exactly one of: query (free text, returns the best-matching cards) or "
    "path ('/' lists namespaces, '/<namespace>' its tools, '/<namespace>/<tool>' one tool).",
    None,
    "query",
    "path",
)
EXECUTE = _meta_tool(
    "tool_execute",
    "Run a tool by its tool_id with args; args are validated against its schema first.",
    "tool_id",
    "args",
)
VIEW = _meta_tool(
    "tool_view",
    "Read an artifact from a tool_execute result. selector: '' (start), 'chars:A-B', "
    "'lines:A-B', 'bytes:A-B' (base64) or 'json:/pointer'.",
    "handle",
    "selector",
)
HYDRATE = _meta_tool(
    "tool_hydrate", "Return the full input schema of a tool_id from tools/list.", "tool_id"
)
PROFILES = {"gateway": (BROWSE, EXECUTE, VIEW), "transparent": (HYDRATE, EXECUTE)}
SERVED = (*PROFILES, "search", "aggregate")


def _text(document: dict[str, Any], is_error: bool = False) -> types.CallToolResult:
    """Every meta-tool answer is one TextContent holding JSON; no structuredContent."""
    body = json.dumps(document, ensure_ascii=False)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=body)], is_error=is_error
    )


def _only(arguments: dict[str, Any], allowed: set[str]) -> None:
    extra = sorted(set(arguments) - allowed)
    if extra:
        raise GatewayError("ARGS_INVALID", f"unknown argument(s) {extra}", "", {"unknown": extra})


class Gateway:
    def __init__(
        self, catalog: Catalog, upstreams: dict[str, Upstream], profile: str, cache_stable: bool
    ) -> None:
        self.catalog = catalog
        self.upstreams = upstreams
        self.profile = profile
        self.session = SessionOrder() if cache_stable else None
        self.store = ArtifactStore()
        self.meta_tools = {t.name: t for t in PROFILES[profile]}

    def list_tools(self) -> list[types.Tool]:
        tools = []
        if self.profile == "transparent":
            tools = [
                types.Tool(
                    name=tool_id, description=e.card.description, input_schema=SENTINEL_SCHEMA
                )
                for tool_id, e in sorted(self.catalog.entries.items())
            ]
        return tools + list(self.meta_tools.values())

    async def call(self, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        """The MCP boundary: every failure leaves as an isError result, never an exception."""
        try:
            if name not in self.meta_tools:
                hint = (
                    " (discovery-only entry: call tool_execute)"
                    if name in self.catalog.entries
                    else ""
                )
                raise GatewayError("ARGS_INVALID", f"no meta-tool {name!r}{hint}", name)
            handler = getattr(self, name)
            return _text(await handler(dict(arguments or {})))
        except GatewayError as exc:
            return _text(exc.payload(), is_error=True)
        except Exception as exc:  # a bug here must still answer the client
            log(f"internal error in {name}: {exc!r}")
            code = {"tool_view": "VIEW_FAILED", "tool_hydrate": "HYDRATE_FAILED"}.get(
                name, "UPSTREAM_ERROR"
            )
            return _text(
                GatewayError(code, f"internal error: {exc}", name).payload(), is_error=True
            )

    async def tool_browse(self, arguments: dict[str, Any]) -> dict[str, Any]:
        kind, value = browse_args(arguments)
        if kind == "path":
            cards = browse_path(self.catalog, value)
        else:
            cards = browse_query(self.catalog, value)
        cards = self.session.order(cards) if self.session else rank_order(cards)
        return {kind: value, **browse_payload(cards, kind)}

    async def tool_hydrate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        _only(arguments, {"tool_id"})
        entry = self._hydrate(arguments.get("tool_id"))
        document = {"tool_id": entry.tool_id, "description": entry.description}
        document["inputSchema"] = entry.input_schema
        if entry.output_schema is not None:
            document["outputSchema"] = entry.output_schema
        if entry.annotations:
            document["annotations"] = entry.annotations  # untrusted hints, passed as hints
        return document

    def _hydrate(self, tool_id: Any) -> Any:
        entry = self.catalog.hydrate(tool_id)
        if self.session:  # §5.5: only successful hydrations enter the seen-set
            self.session.remember(entry.card)
        return entry

    async def tool_execute(self, arguments: dict[str, Any]) -> dict[str, Any]:
        _only(arguments, {"tool_id", "args"})
        entry = self._hydrate(arguments.get("tool_id"))
        args = arguments.get("args")
        args = {} if args is None else args
        if not isinstance(args, dict):
            raise GatewayError("ARGS_INVALID", "args must be an object", entry.tool_id)
        self._validate(entry.tool_id, entry.input_schema, args)
        upstream = self.upstreams[entry.server]
        try:
            result = await upstream.call(entry.upstream_name, args)
        except Exception as exc:
            raise GatewayError(
                "UPSTREAM_ERROR",
                f"upstream call failed: {type(exc).__name__}: {exc}",
                entry.tool_id,
                {"server": entry.server},
                retryable=True,
            ) from None
        envelope = to_envelope(result, entry.tool_id, entry.server, entry.upstream_name, self.store)
        if envelope["status"] == "error":
            raise GatewayError(
                "UPSTREAM_ERROR",
                "the upstream tool reported an error",
                entry.tool_id,
                {"envelope": envelope},
            )
        return envelope

    @staticmethod
    def _validate(tool_id: str, schema: Any, args: dict[str, Any]) -> None:
        """§4.4: validation before any upstream call; failures never reach upstream."""
        try:
            validator_cls = jsonschema.validators.validator_for(schema)
            validator_cls.check_schema(schema)
        except jsonschema.SchemaError as exc:
            raise GatewayError(
                "HYDRATE_FAILED",
                f"upstream schema is not valid JSON Schema: {exc.message}",
                tool_id,
            ) from None
        problems = sorted(
            validator_cls(schema).iter_errors(args), key=lambda e: list(e.absolute_path)
        )
        if problems:
            details = [
                {
                    "at": "/" + "/".join(map(str, e.absolute_path)),
                    "message": e.message,
                    "keyword": e.validator,
                }
                for e in problems[:10]
            ]
            raise GatewayError("ARGS_INVALID", problems[0].message, tool_id, {"errors": details})

    async def tool_view(self, arguments: dict[str, Any]) -> dict[str, Any]:
        _only(arguments, {"handle", "selector"})
        return view(self.store.get(arguments.get("handle")), arguments.get("selector"))


async def serve(targets: dict[str, Any], options: Any) -> None:
    """Connect every upstream, then serve `options.profile` until the client leaves."""
    if options.profile == "aggregate":  # its own registry of upstream connections
        await serve_aggregate(targets, STARTUP_TIMEOUT_S)
        return
    upstreams = {name: Upstream(name, target) for name, target in targets.items()}
    stop = anyio.Event()
    async with anyio.create_task_group() as group:
        ready = {name: anyio.Event() for name in upstreams}
        for name, upstream in upstreams.items():
            group.start_soon(upstream.serve, ready[name], stop)
        with anyio.move_on_after(STARTUP_TIMEOUT_S):
            for event in ready.values():
                await event.wait()
        if options.profile == "search":
            await _serve_search(upstreams, options)
        else:
            await _serve_meta(upstreams, options.profile, options.cache_stable)
        stop.set()


async def _serve_search(upstreams: dict[str, Upstream], options: Any) -> None:
    table = build_table({n: u for n, u in upstreams.items() if u.client is not None})
    if options.transport == "stdio":  # the one local caller: unrestricted
        await _stdio(make_server(table, upstreams, None))
        return
    identities = load_identities(options.access)
    servers = {token: make_server(table, upstreams, allow) for token, allow in identities.items()}
    await serve_http(servers, options.port)


async def _serve_meta(upstreams: dict[str, Upstream], profile: str, cache_stable: bool) -> None:
    listings = {n: u.tools for n, u in upstreams.items() if u.client is not None}
    gateway = Gateway(Catalog.build(listings), upstreams, profile, cache_stable)

    async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=gateway.list_tools())

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await gateway.call(params.name, params.arguments)

    await _stdio(
        Server(
            "independent-gateway",
            version="0.1",
            on_list_tools=on_list_tools,
            on_call_tool=on_call_tool,
        )
    )


async def _stdio(server: Server[Any]) -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
