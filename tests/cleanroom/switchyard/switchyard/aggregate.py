"""Profile `aggregate` (seeds 001 + 004).

Every upstream's tools, prompts and resources are merged into one list,
namespaced at the boundary as `server__name` (resources: `server__<uri>`).
Requests are parsed once at ingress, routed to the named upstream with the
clean name, and results are namespaced again at egress.
"""

from __future__ import annotations

import logging
from typing import Any

import mcp.types as types
from mcp.server import NotificationOptions
from mcp.shared.exceptions import MCPError

from . import errors
from . import namespacing as ns
from .base import GatewayServer
from .notify import Notifier, register_initialized
from .registry import Registry
from .upstream import UpstreamPool, UpstreamProtocolError, UpstreamTimeout, UpstreamUnavailable
from .validation import validation_errors

logger = logging.getLogger(__name__)

PARTIAL_META_KEY = "switchyard/partial"


# ----------------------------------------------------------------- egress helpers
def _namespace_block(server: str, block: Any) -> Any:
    """Apply the namespace to resource URIs embedded in content (egress)."""
    if isinstance(block, types.ResourceLink):
        return block.model_copy(update={"uri": ns.apply_uri(server, str(block.uri))})
    if isinstance(block, types.EmbeddedResource):
        resource = block.resource.model_copy(update={"uri": ns.apply_uri(server, str(block.resource.uri))})
        return block.model_copy(update={"resource": resource})
    return block


def _partial_meta(results: dict[str, Any]) -> dict[str, Any] | None:
    failed = {server: str(getattr(r, "message", r)) for server, r in results.items() if isinstance(r, Exception)}
    if not failed:
        return None
    for server, reason in failed.items():
        logger.warning("broadcast: leaving out %s (%s)", server, reason)
    return {PARTIAL_META_KEY: {"failedServers": failed}}


class AggregateProfile:
    name = "aggregate"

    def __init__(self, pool: UpstreamPool, registry: Registry, notifier: Notifier):
        self.pool = pool
        self.registry = registry
        self.notifier = notifier
        self._reported_unnamespaceable: set[tuple[str, str, str]] = set()
        registry.on_change(notifier.broadcast)

    # ------------------------------------------------------------------ routing
    def _route(self, qualified: str, what: str) -> ns.Parsed:
        """Single parse point (seed 004, Principle 2)."""
        try:
            parsed = ns.parse_uri(qualified) if what == "Resource" else ns.parse_name(qualified, what)
        except ns.NamespaceError as exc:
            if exc.kind == "missing":
                raise errors.not_namespaced(exc.message, qualified) from None
            raise errors.invalid_namespace(exc.message, qualified) from None
        if self.pool.get(parsed.server) is None:
            raise errors.unknown_server(parsed.server, qualified)
        return parsed

    async def _forward(self, server: str, qualified: str, fn: Any) -> Any:
        upstream = self.pool.get(server)
        assert upstream is not None
        try:
            return await upstream.request(fn)
        except UpstreamTimeout as exc:
            raise errors.timeout(server, qualified, exc.seconds) from None
        except UpstreamUnavailable as exc:
            raise errors.unavailable(server, exc.reason) from None
        except UpstreamProtocolError as exc:
            raise errors.upstream_protocol(server, exc.message) from None
        # MCPError from the upstream propagates unchanged (seed 001, "Propagate errors").

    async def _resolve(self, kind: str, what: str, server: str, name: str, qualified: str) -> Any:
        try:
            item = await self.registry.resolve(kind, server, name)
        except UpstreamTimeout as exc:
            raise errors.timeout(server, qualified, exc.seconds) from None
        except UpstreamUnavailable as exc:
            raise errors.unavailable(server, exc.reason) from None
        except UpstreamProtocolError as exc:
            raise errors.upstream_protocol(server, exc.message) from None
        except MCPError as exc:
            raise errors.unavailable(server, exc.message) from None
        if item is None:
            raise errors.not_found(what, qualified, server)
        return item

    def _name_or_skip(self, kind: str, server: str, name: str) -> str | None:
        qualified = ns.apply_name(server, name)
        if qualified is None and (kind, server, name) not in self._reported_unnamespaceable:
            self._reported_unnamespaceable.add((kind, server, name))
            logger.warning("%s %r of server %s contains '__' and cannot be namespaced; not exposed", kind, name, server)
        return qualified

    # -------------------------------------------------------------------- tools
    async def list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        results = await self.registry.collect("tools")
        tools: list[types.Tool] = []
        for server, items in results.items():
            if isinstance(items, Exception):
                continue
            for tool in items:
                qualified = self._name_or_skip("tool", server, tool.name)
                if qualified is not None:
                    tools.append(tool.model_copy(update={"name": qualified}))
        return types.ListToolsResult(tools=tools, meta=_partial_meta(results))

    async def call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        qualified = params.name
        route = self._route(qualified, "Tool")
        tool = await self._resolve("tools", "Tool", route.server, route.name, qualified)
        arguments = dict(params.arguments or {})
        problems = validation_errors(tool.input_schema, arguments)
        if problems:
            text = "; ".join(f"{p['path']}: {p['message']}" for p in problems)
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=f"Invalid arguments for tool {qualified}: {text}")],
                is_error=True,
            )
        # Clean request upstream: clean name, the arguments, and NO incoming _meta.
        result = await self._forward(route.server, qualified, lambda c: c.call_tool(route.name, arguments))
        return types.CallToolResult(
            content=[_namespace_block(route.server, b) for b in result.content],
            structured_content=result.structured_content,
            is_error=result.is_error,
        )

    def cached_input_schema(self, qualified: str) -> dict[str, Any] | None:
        """For the SDK's Mcp-Param header check: a cache lookup, never a broadcast."""
        try:
            parsed = ns.parse_name(qualified)
        except ns.NamespaceError:
            return None
        tool = self.registry.cached("tools", parsed.server, parsed.name)
        return tool.input_schema if tool is not None else None

    # ------------------------------------------------------------------ prompts
    async def list_prompts(self, ctx: Any, params: Any) -> types.ListPromptsResult:
        results = await self.registry.collect("prompts")
        prompts: list[types.Prompt] = []
        for server, items in results.items():
            if isinstance(items, Exception):
                continue
            for prompt in items:
                qualified = self._name_or_skip("prompt", server, prompt.name)
                if qualified is not None:
                    prompts.append(prompt.model_copy(update={"name": qualified}))
        return types.ListPromptsResult(prompts=prompts, meta=_partial_meta(results))

    async def get_prompt(self, ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        qualified = params.name
        route = self._route(qualified, "Prompt")
        await self._resolve("prompts", "Prompt", route.server, route.name, qualified)
        arguments = dict(params.arguments) if params.arguments else None
        result = await self._forward(route.server, qualified, lambda c: c.get_prompt(route.name, arguments))
        messages = [m.model_copy(update={"content": _namespace_block(route.server, m.content)}) for m in result.messages]
        return types.GetPromptResult(description=result.description, messages=messages)

    # ---------------------------------------------------------------- resources
    async def list_resources(self, ctx: Any, params: Any) -> types.ListResourcesResult:
        results = await self.registry.collect("resources")
        resources: list[types.Resource] = []
        for server, items in results.items():
            if isinstance(items, Exception):
                continue
            for res in items:
                resources.append(
                    res.model_copy(update={"uri": ns.apply_uri(server, str(res.uri)), "name": f"{server}__{res.name}"})
                )
        return types.ListResourcesResult(resources=resources, meta=_partial_meta(results))

    async def list_resource_templates(self, ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        results = await self.registry.collect("resource_templates")
        templates: list[types.ResourceTemplate] = []
        for server, items in results.items():
            if isinstance(items, Exception):
                continue
            for tpl in items:
                templates.append(
                    tpl.model_copy(
                        update={"uri_template": ns.apply_uri(server, tpl.uri_template), "name": f"{server}__{tpl.name}"}
                    )
                )
        return types.ListResourceTemplatesResult(resource_templates=templates, meta=_partial_meta(results))

    async def read_resource(self, ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        qualified = str(params.uri)
        route = self._route(qualified, "Resource")
        result = await self._forward(route.server, qualified, lambda c: c.read_resource(route.name))
        contents = [c.model_copy(update={"uri": ns.apply_uri(route.server, str(c.uri))}) for c in result.contents]
        return types.ReadResourceResult(contents=contents)

    # ------------------------------------------------------------------- server
    def make_server(self, identity: Any = None) -> GatewayServer:
        """A new `GatewayServer` instance (seed 001 "Create session")."""
        server = GatewayServer(
            "switchyard-aggregate",
            instructions="Aggregated MCP gateway: names are namespaced as <server>__<name>.",
            notification_options=NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True),
            get_tool_input_schema=self.cached_input_schema,
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
            on_list_prompts=self.list_prompts,
            on_get_prompt=self.get_prompt,
            on_list_resources=self.list_resources,
            on_list_resource_templates=self.list_resource_templates,
            on_read_resource=self.read_resource,
            on_subscriptions_listen=self.notifier.listen_handler,
        )
        register_initialized(server, self.notifier)
        return server
