"""The aggregate profile (seed 001's registry and router, seed 004's boundary translation with
the "__" separator of AM-AGGREGATE-SEPARATOR), over stdio.

Shape: a registry dict {server key: backend dict} filled at start and refreshed when an
upstream announces notifications/tools/list_changed; the MCP handlers read it. Names are split
once, at the boundary (`split`); failures to route are JSON-RPC errors carrying seed 004's
messages ("Unknown server: x"), as seed 001's router "throws". Resources keep their upstream
URIs and are found by registry lookup (seed 001 "via URI prefix or registry lookup").
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp.types as types
from mcp import Client
from mcp.server import Server
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared.exceptions import MCPError

from .upstream import _transport, _Watch, log

SEP = "__"
DEFAULT_TIMEOUT_S = 60.0  # seed 001 "defaultTimeout"
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


def split(name: str) -> tuple[str, str]:
    """Seed 004's single parse point: "server__name" -> (server, name)."""
    server, sep, rest = name.partition(SEP)
    if not sep:
        raise MCPError(INVALID_PARAMS, f"Tool '{name}' is not namespaced")
    if not server or not rest or SEP in rest or rest.startswith("_") or server.endswith("_"):
        raise MCPError(INVALID_PARAMS, "Invalid namespace format")
    return server, rest


def offered(name: str) -> bool:
    """Whether server__name splits back into exactly this name (AM-AGGREGATE-SEPARATOR)."""
    return bool(name) and SEP not in name and not name.startswith("_") and not name.endswith("_")


async def _pages(fetch: Any, key: str) -> list[dict[str, Any]]:
    """Every entry of a paginated list (seed 001 "handling pagination")."""
    out: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        page = await fetch(cursor=cursor)
        dumped = page.model_dump(by_alias=True, exclude_none=True, mode="json")
        out += dumped.get(key, [])
        cursor = page.next_cursor
        if not cursor:
            return out


class Registry:
    """Seed 001's registry: tools, prompts and resources per server, and who to tell."""

    def __init__(self, targets: dict[str, Any]) -> None:
        self.targets = targets
        self.backends: dict[str, dict[str, Any]] = {}
        self.bus = InMemorySubscriptionBus()
        self.sessions: set[Any] = set()  # handshake-era client sessions (stdio: one)

    async def run(self, key: str, ready: anyio.Event, stop: anyio.Event) -> None:
        """addServer: connect, fetch everything, follow list_changed until stopped."""
        watch = _Watch(key)
        changed = anyio.Event()

        async def on_message(message: Any) -> None:
            if getattr(message, "method", None) == "notifications/tools/list_changed":
                changed.set()

        try:
            async with Client(
                _transport(self.targets[key], watch),
                mode="legacy",
                cache=None,
                message_handler=on_message,
            ) as client:
                backend = {"client": client, **await self._fetch(client, watch)}
                self.backends[key] = backend
                ready.set()
                async with anyio.create_task_group() as group:
                    group.start_soon(self._follow, key, client, watch, changed)
                    await stop.wait()
                    group.cancel_scope.cancel()
        except Exception as exc:
            log(f"upstream {key!r} unavailable: {type(exc).__name__}: {exc}")
        finally:
            self.backends.pop(key, None)  # removeServer
            ready.set()

    async def _fetch(self, client: Client, watch: _Watch) -> dict[str, Any]:
        caps = client.server_capabilities
        out: dict[str, Any] = {"tools": await self._tools(client, watch)}
        out["prompts"] = await _pages(client.list_prompts, "prompts") if caps.prompts else []
        resources = caps.resources is not None
        out["resources"] = await _pages(client.list_resources, "resources") if resources else []
        out["templates"] = (
            await _pages(client.list_resource_templates, "resourceTemplates") if resources else []
        )
        return out

    @staticmethod
    async def _tools(client: Client, watch: _Watch) -> list[dict[str, Any]]:
        """The raw listed tools (the transport drops entries MCP would refuse)."""
        watch.listed.clear()
        await _pages(client.list_tools, "tools")
        return list(watch.listed)

    async def _follow(self, key: str, client: Client, watch: _Watch, changed: anyio.Event) -> None:
        """Handle backend updates: re-fetch its tools, then emit the change."""
        while True:
            await changed.wait()
            changed = anyio.Event()
            self.backends[key]["tools"] = await self._tools(client, watch)
            await self.emit_change()

    async def emit_change(self) -> None:
        await self.bus.publish(ToolsListChanged())  # 2026-07-28 listeners
        for session in list(self.sessions):
            try:
                await session.send_tool_list_changed()
            except Exception:  # a client that left
                self.sessions.discard(session)

    def backend(self, server: str) -> dict[str, Any]:
        if server not in self.targets:
            raise MCPError(INVALID_PARAMS, f"Unknown server: {server}")
        if server not in self.backends:
            raise MCPError(INTERNAL_ERROR, f"Server {server} unavailable")
        return self.backends[server]

    def entries(self, kind: str) -> list[tuple[str, dict[str, Any]]]:
        return [(k, e) for k, b in sorted(self.backends.items()) for e in b[kind]]


def _forward(call: Any) -> Any:
    """An upstream call bounded by the default timeout; its errors are propagated."""

    async def run() -> Any:
        with anyio.fail_after(DEFAULT_TIMEOUT_S):
            return await call

    return run()


def make_server(registry: Registry) -> Server[Any]:
    def remember(ctx: Any) -> None:
        if ctx.session is not None and not str(ctx.protocol_version).startswith("2026"):
            registry.sessions.add(ctx.session)

    def namespaced(kind: str, model: Any) -> list[Any]:
        """Seed 004's egress: every registry entry of `kind` as server__name."""
        return [
            model.model_validate({**e, "name": f"{k}{SEP}{e['name']}"})
            for k, e in registry.entries(kind)
            if offered(e["name"])
        ]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        remember(ctx)
        return types.ListToolsResult(tools=namespaced("tools", types.Tool))

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        remember(ctx)
        server, name = split(params.name)
        backend = registry.backend(server)
        if name not in {t["name"] for t in backend["tools"]}:
            raise MCPError(INVALID_PARAMS, f"Tool not found: {params.name}")
        try:
            return await _forward(backend["client"].call_tool(name, params.arguments or {}))
        except TimeoutError:
            raise MCPError(INTERNAL_ERROR, f"Timeout: {params.name}") from None

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=namespaced("prompts", types.Prompt))

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        server, name = split(params.name)
        client = registry.backend(server)["client"]
        return await _forward(client.get_prompt(name, params.arguments))

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        found = [types.Resource.model_validate(r) for _, r in registry.entries("resources")]
        return types.ListResourcesResult(resources=found)

    async def list_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        found = [types.ResourceTemplate.model_validate(t) for _, t in registry.entries("templates")]
        return types.ListResourceTemplatesResult(resource_templates=found)

    async def read_resource(
        ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        """Registry lookup: the first server listing the URI; else each server with templates
        in turn, the first that can read it."""
        uri = str(params.uri)
        owners = [k for k, r in registry.entries("resources") if r.get("uri") == uri]
        owners += [k for k, b in sorted(registry.backends.items()) if b["templates"]]
        failure: MCPError | None = None
        for server in dict.fromkeys(owners):
            try:
                return await _forward(registry.backend(server)["client"].read_resource(uri))
            except MCPError as exc:
                failure = exc
        raise failure or MCPError(INVALID_PARAMS, f"Unknown resource: {uri}")

    return Server(
        "independent-gateway-aggregate",
        version="0.1",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_subscriptions_listen=ListenHandler(registry.bus),
    )


async def serve_aggregate(targets: dict[str, Any], startup_timeout: float) -> None:
    from mcp.server.stdio import stdio_server

    registry = Registry(targets)
    stop = anyio.Event()
    async with anyio.create_task_group() as group:
        ready = {key: anyio.Event() for key in targets}
        for key in targets:
            group.start_soon(registry.run, key, ready[key], stop)
        with anyio.move_on_after(startup_timeout):
            for event in ready.values():
                await event.wait()
        server = make_server(registry)
        options = server.create_initialization_options(NotificationOptions(tools_changed=True))
        async with stdio_server() as (read, write):
            await server.run(read, write, options)
        stop.set()
