"""OpenTelemetry traces (gatespec.observe.tracing), recorded by the SDK's in-memory exporter.

A gateway (gatespec's runtime and MCP server, in this process) fronts a real MCP server over
Streamable HTTP on a real port; that server's one tool answers with the W3C trace headers
its HTTP request carried. One client tools/call must then make one trace: the gateway's span
for the client request, a child span for the upstream call, the SDK's client span under it,
and the upstream's own server span, with the upstream's `traceparent` header naming that
client span. Off by default: no provider, no headers.
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from types import SimpleNamespace
from typing import Any

import anyio
import mcp_types as types
import pytest
import uvicorn
from mcp import Client
from mcp.server import Server
from mcp.server._otel import OpenTelemetryMiddleware
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from starlette.requests import Request

from gatespec.config import parse_config
from gatespec.observe import tracing
from gatespec.runtime import ProxyRuntime
from gatespec.server import build_server

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


def headers_server() -> Server[Any]:
    """An MCP server whose tool `headers` answers with the trace headers it was sent."""

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        schema = {"type": "object", "properties": {}}
        return types.ListToolsResult(
            tools=[types.Tool(name="headers", description="trace headers", input_schema=schema)]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        seen = ctx.request.headers
        found = {h: seen.get(h) for h in ("traceparent", "tracestate")}
        return types.CallToolResult(
            content=[types.TextContent(type="text", text="headers")], structured_content=found
        )

    return Server("traced", on_list_tools=list_tools, on_call_tool=call_tool)


@asynccontextmanager
async def upstream_on_a_port() -> AsyncIterator[str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    app = headers_server().streamable_http_app()
    web = uvicorn.Server(uvicorn.Config(app, log_config=None, log_level="warning", lifespan="on"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(web.serve, [sock])
        while not web.started:
            await anyio.sleep(0.02)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
        web.should_exit = True


@pytest.fixture(scope="module")
def installed() -> Iterator[InMemorySpanExporter]:
    """One provider for the module: the API takes one global provider per process, and the
    tracers made before (the mcp SDK's, ours) keep the first one they resolved."""
    spans = InMemorySpanExporter()
    provider = tracing.start(exporters=[spans])
    try:
        yield spans
    finally:
        tracing.stop(provider)
        # put the API's globals back for the other tests (as opentelemetry's test utilities do)
        trace._TRACER_PROVIDER_SET_ONCE._done = False  # type: ignore[attr-defined]
        trace._TRACER_PROVIDER = None  # type: ignore[attr-defined]


@pytest.fixture
def exporter(installed: InMemorySpanExporter) -> InMemorySpanExporter:
    installed.clear()
    return installed


async def call_headers(url: str) -> dict[str, str | None]:
    config = parse_config({"mcpServers": {"up": {"url": url}}}, environ={})
    runtime = ProxyRuntime.from_config(config)
    try:
        await runtime.start()
        server = build_server(runtime, fallback_session="test")
        tool_id = next(item.id for item in runtime.catalog.items())
        async with Client(server, mode="legacy") as client:
            done = await client.call_tool("tool_execute", {"tool_id": tool_id, "args": {}})
        assert not done.is_error, done
        # the envelope lists a small structured result as "key: value" facts
        facts = done.structured_content["facts"]
        return {
            k: json.loads(v) if v == "null" else v for k, v in (f.split(": ", 1) for f in facts)
        }
    finally:
        await runtime.aclose()


def named(spans: list[ReadableSpan], prefix: str) -> ReadableSpan:
    found = [s for s in spans if s.name.startswith(prefix)]
    assert len(found) == 1, [s.name for s in spans]
    return found[0]


async def test_off_by_default_no_headers() -> None:
    """(First: before this module installs a provider.)"""
    assert not tracing.tracing()
    async with upstream_on_a_port() as url:
        seen = await call_headers(url)
    assert seen == {"traceparent": None, "tracestate": None}


async def test_one_trace_from_the_client_request_to_the_http_upstream(
    exporter: InMemorySpanExporter,
) -> None:
    async with upstream_on_a_port() as url:
        seen = await call_headers(url)
    spans = list(exporter.get_finished_spans())
    request = named(spans, "tools/call tool_execute")  # the gateway's span of the request
    assert request.kind is trace.SpanKind.SERVER
    upstream = named(spans, "upstream tools/call up headers")
    assert upstream.parent is not None and upstream.parent.span_id == request.context.span_id
    assert upstream.attributes["gatespec.upstream"] == "up"
    send = named(spans, "MCP send tools/call headers")  # the SDK's client span, inside it
    assert send.parent is not None and send.parent.span_id == upstream.context.span_id
    served = named(spans, "tools/call headers")  # the upstream's own span: the same trace
    assert served.parent is not None and served.parent.span_id == send.context.span_id
    assert {s.context.trace_id for s in (request, upstream, send, served)} == {
        request.context.trace_id
    }
    trace_id = format(request.context.trace_id, "032x")
    span_id = format(send.context.span_id, "016x")
    assert seen["traceparent"].startswith(f"00-{trace_id}-{span_id}-")  # then the flags


def test_on_by_the_standard_environment_or_the_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OTEL_TRACES_EXPORTER", raising=False)
    monkeypatch.delenv("OTEL_SDK_DISABLED", raising=False)
    assert tracing._wanted(None) == []
    assert tracing._wanted("console") == ["console"]
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "otlp,console")
    assert tracing._wanted(None) == ["otlp", "console"]
    assert tracing._wanted("none") == []  # the config turns it off whatever the environment says
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    assert tracing._wanted("console") == []
    monkeypatch.delenv("OTEL_SDK_DISABLED")
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "zipkin")
    with pytest.raises(tracing.TracingError, match="unknown trace exporter 'zipkin'"):
        tracing._wanted(None)


async def test_a_client_may_send_its_context_as_http_headers(
    exporter: InMemorySpanExporter,
) -> None:
    """An HTTP client's traceparent header parents the request's span (when `_meta` has none)."""
    trace_id, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [(b"traceparent", f"00-{trace_id}-{parent}-01".encode())],
    }
    ctx = SimpleNamespace(
        request=Request(scope),
        method="tools/call",
        params={"name": "tool_browse"},
        protocol_version="2025-11-25",
        request_id=1,
        meta=None,  # no context in _meta
    )
    server = SimpleNamespace(middleware=[OpenTelemetryMiddleware()])
    tracing.follow_http_headers(server)
    tracing.follow_http_headers(server)  # once only
    assert [type(m) for m in server.middleware] == [tracing.HeaderContext, OpenTelemetryMiddleware]

    async def handler(ctx: Any) -> Any:
        return {}

    async def sdk(ctx: Any) -> Any:  # the chain as the SDK's runner composes it
        return await server.middleware[1](ctx, handler)

    await server.middleware[0](ctx, sdk)
    span = named(list(exporter.get_finished_spans()), "tools/call tool_browse")
    assert format(span.context.trace_id, "032x") == trace_id
    assert span.parent is not None and format(span.parent.span_id, "016x") == parent
