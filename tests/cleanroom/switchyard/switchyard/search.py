"""Profile `search` (seed 003, ADR-041): a fixed set of four meta-tools.

| MCP tool | purpose                                                            |
|----------|--------------------------------------------------------------------|
| search   | list/search operations the caller may call (names, namespaces,     |
|          | types, short descriptions - no schemas)                            |
| schema   | one operation's OperationSpec (input/output/error schemas)         |
| call     | invoke one operation; output in structuredContent, or isError with |
|          | a typed CallError {code, message, details}                         |
| batch    | invoke several operations; results in request order                |

Every path runs the same AccessControl check; an operation the caller may not
call answers FORBIDDEN whether or not it exists, so nothing leaks.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import mcp.types as types
from mcp.shared.exceptions import MCPError

from . import errors
from .access import NOBODY, SCOPE_KEY, AccessControl, Identity
from .base import GatewayServer
from .config import Config
from .meta_tools import ERROR_SCHEMAS, INTERNAL, INVALID_REQUEST, CallError, dump_blocks, error_result, meta_tools, text
from .operations import SUBSCRIPTION, Operation, from_tool, parse_operation_name
from .registry import Registry
from .upstream import UpstreamPool, UpstreamProtocolError, UpstreamTimeout, UpstreamUnavailable
from .validation import validation_errors

logger = logging.getLogger(__name__)

def identity_of(ctx: Any, default: Identity) -> Identity:
    """The caller's identity: set on the HTTP request scope by the auth middleware."""
    request = getattr(ctx, "request", None)
    if request is None:
        return default
    scope = getattr(request, "scope", None) or {}
    ident = scope.get(SCOPE_KEY)
    return ident if isinstance(ident, Identity) else NOBODY


class SearchProfile:
    name = "search"

    def __init__(self, config: Config, pool: UpstreamPool, registry: Registry, access: AccessControl):
        self.config = config
        self.pool = pool
        self.registry = registry
        self.access = access
        self.tools = meta_tools(config.max_batch)
        self._tool_names = {t.name for t in self.tools}

    # ------------------------------------------------------------- operations
    def _op(self, server: str, tool: Any) -> Operation:
        return from_tool(server, tool, self.config.servers.get(server))

    def _internal(self, name: str) -> bool:
        from fnmatch import fnmatchcase

        return any(fnmatchcase(name, pattern) for pattern in self.config.internal_operations)

    def _exposed(self, op: Operation) -> bool:
        """External Query/Mutation operations only (Decision 2; Assumption 4)."""
        return op.type != SUBSCRIPTION and not self._internal(op.name)

    async def _lookup(self, identity: Identity, name: Any) -> Operation:
        """Resolve an operation for `schema`/`call`, enforcing AccessControl first."""
        if not isinstance(name, str) or not name:
            raise CallError(INVALID_REQUEST, "'operation' must be a non-empty string")
        if not self.access.check(identity, name):
            raise CallError("FORBIDDEN", f"Not authorized to call operation {name}", operation=name)
        parsed = parse_operation_name(name)
        if parsed is None or self.pool.get(parsed[0]) is None or self._internal(name):
            raise CallError("NOT_FOUND", f"Unknown operation: {name}", operation=name)
        server, tool_name = parsed
        try:
            tool = await self.registry.resolve("tools", server, tool_name)
        except UpstreamTimeout as exc:
            raise CallError("TIMEOUT", f"Listing namespace {server} timed out", operation=name,
                            timeoutSeconds=exc.seconds) from None
        except (UpstreamUnavailable, UpstreamProtocolError, MCPError):
            raise CallError("UNAVAILABLE", f"Namespace {server} is unavailable", operation=name,
                            namespace=server) from None
        if tool is None:
            raise CallError("NOT_FOUND", f"Unknown operation: {name}", operation=name)
        op = self._op(server, tool)
        if not self._exposed(op):
            raise CallError("NOT_FOUND", f"Unknown operation: {name}", operation=name)
        return op

    async def _invoke(self, identity: Identity, name: Any, payload: Any) -> tuple[dict[str, Any], list[Any]]:
        op = await self._lookup(identity, name)
        if payload is None:
            payload = {}
        if not isinstance(payload, dict):
            raise CallError(INVALID_REQUEST, "'input' must be a JSON object")
        problems = validation_errors(op.input_schema, payload)
        if problems:
            raise CallError("INVALID_INPUT", f"Input does not match the schema of {op.name}", operation=op.name,
                            errors=problems)
        upstream = self.pool.get(op.server)
        assert upstream is not None
        try:
            # Clean upstream request: the tool's own name and input; no incoming _meta.
            result = await upstream.request(lambda c: c.call_tool(op.tool, payload))
        except UpstreamTimeout as exc:
            raise CallError("TIMEOUT", f"Operation {op.name} timed out and was cancelled", operation=op.name,
                            timeoutSeconds=exc.seconds) from None
        except UpstreamUnavailable:
            raise CallError("UNAVAILABLE", f"Namespace {op.server} is unavailable", operation=op.name,
                            namespace=op.server) from None
        except UpstreamProtocolError as exc:
            raise CallError("UPSTREAM_ERROR", exc.message, operation=op.name, code=errors.INTERNAL_ERROR,
                            message=exc.message) from None
        except MCPError as exc:
            details: dict[str, Any] = {"operation": op.name, "code": exc.code, "message": exc.message}
            if exc.data is not None:
                details["data"] = exc.data
            raise CallError("UPSTREAM_ERROR", f"Operation {op.name} failed: {exc.message}", **details) from None
        if result.is_error:
            details = {"operation": op.name, "content": dump_blocks(result.content)}
            if result.structured_content is not None:
                details["structuredContent"] = result.structured_content
            raise CallError("OPERATION_FAILED", f"Operation {op.name} reported an error", **details)
        if isinstance(result.structured_content, dict):
            output = result.structured_content
        else:
            output = {"content": dump_blocks(result.content)}
        return output, list(result.content)

    # ----------------------------------------------------------------- tools
    async def _search(self, identity: Identity, args: dict[str, Any]) -> types.CallToolResult:
        query, namespace, kind, limit = args.get("query"), args.get("namespace"), args.get("type"), args.get("limit")
        if query is not None and not isinstance(query, str):
            raise CallError(INVALID_REQUEST, "'query' must be a string")
        if namespace is not None and not isinstance(namespace, str):
            raise CallError(INVALID_REQUEST, "'namespace' must be a string")
        if kind is not None and kind not in ("query", "mutation"):
            raise CallError(INVALID_REQUEST, "'type' must be 'query' or 'mutation'")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise CallError(INVALID_REQUEST, "'limit' must be a positive integer")
        words = (query or "").lower().split()
        results = await self.registry.collect("tools")
        found: list[Operation] = []
        for server, tools in results.items():
            if isinstance(tools, Exception):
                logger.warning("search: namespace %s left out (%s)", server, getattr(tools, "message", tools))
                continue
            for tool in tools:
                op = self._op(server, tool)
                if not self._exposed(op) or not self.access.check(identity, op.name):
                    continue
                if namespace is not None and op.namespace != namespace:
                    continue
                if kind is not None and op.type != kind:
                    continue
                haystack = f"{op.name} {op.description}".lower()
                if any(w not in haystack for w in words):
                    continue
                found.append(op)
        found.sort(key=lambda o: o.name)
        if limit is not None:
            found = found[:limit]
        body = {"operations": [op.summary(self.config.short_description_length) for op in found]}
        return types.CallToolResult(content=text(body), structured_content=body)

    async def _schema(self, identity: Identity, args: dict[str, Any]) -> types.CallToolResult:
        op = await self._lookup(identity, args.get("operation"))
        body = {
            "name": op.name,
            "namespace": op.namespace,
            "type": op.type,
            "description": op.description,
            "inputSchema": op.input_schema,
            "outputSchema": op.output_schema,
            "errorSchemas": ERROR_SCHEMAS,
        }
        return types.CallToolResult(content=text(body), structured_content=body)

    async def _call(self, identity: Identity, args: dict[str, Any]) -> types.CallToolResult:
        output, content = await self._invoke(identity, args.get("operation"), args.get("input"))
        return types.CallToolResult(content=content or text(output), structured_content=output)

    async def _batch(self, identity: Identity, args: dict[str, Any]) -> types.CallToolResult:
        calls = args.get("calls")
        if not isinstance(calls, list):
            raise CallError(INVALID_REQUEST, "'calls' must be an array of {operation, input} objects")
        if len(calls) > self.config.max_batch:
            raise CallError(INVALID_REQUEST, f"a batch may hold at most {self.config.max_batch} calls",
                            maxBatch=self.config.max_batch)
        results: list[dict[str, Any] | None] = [None] * len(calls)

        async def run(index: int, item: Any) -> None:
            entry_id: Any = index
            operation: Any = None
            try:
                if not isinstance(item, dict):
                    raise CallError(INVALID_REQUEST, "each batch entry must be an object {operation, input}")
                entry_id = item.get("id", index)
                operation = item.get("operation")
                output, _ = await self._invoke(identity, operation, item.get("input"))
                results[index] = {"id": entry_id, "operation": operation, "ok": True, "output": output}
            except CallError as err:
                results[index] = {"id": entry_id, "operation": operation, "ok": False, "error": err.as_dict()}
            except Exception:  # noqa: BLE001 - one entry must not sink the batch
                logger.exception("batch entry %d failed", index)
                err = CallError(INTERNAL, "internal gateway error")
                results[index] = {"id": entry_id, "operation": operation, "ok": False, "error": err.as_dict()}

        async with anyio.create_task_group() as tg:
            for index, item in enumerate(calls):
                tg.start_soon(run, index, item)
        body = {"results": results}
        return types.CallToolResult(content=text(body), structured_content=body)

    # ---------------------------------------------------------------- handlers
    def make_server(self, default_identity: Identity) -> GatewayServer:
        handlers = {"search": self._search, "schema": self._schema, "call": self._call, "batch": self._batch}
        tools = self.tools

        async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
            return types.ListToolsResult(tools=tools)

        async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
            handler = handlers.get(params.name)
            if handler is None:
                raise errors.rpc_error(errors.INVALID_PARAMS, f"Unknown tool: {params.name}", name=params.name)
            identity = identity_of(ctx, default_identity)
            try:
                return await handler(identity, dict(params.arguments or {}))
            except CallError as err:
                return error_result(err)
            except Exception:  # noqa: BLE001 - never raise across the MCP boundary
                logger.exception("meta-tool %s failed", params.name)
                return error_result(CallError(INTERNAL, "internal gateway error"))

        def input_schema(name: str) -> dict[str, Any] | None:
            return next((dict(t.input_schema) for t in tools if t.name == name), None)

        return GatewayServer(
            "switchyard-search",
            instructions=(
                "Operations are reached through four tools: search (find), schema (learn the input), "
                "call (invoke one), batch (invoke several)."
            ),
            get_tool_input_schema=input_schema,
            on_list_tools=on_list_tools,
            on_call_tool=on_call_tool,
        )
