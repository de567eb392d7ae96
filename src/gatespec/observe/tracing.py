"""OpenTelemetry traces of a served gateway: off by default, on by config or OTEL_* variables.

What is traced, once a tracer provider is installed (`start`):
- every client request: the mcp SDK's own server middleware makes one SERVER span per
  inbound MCP message ("tools/call tool_execute"), parented by a W3C trace context the client
  put in `_meta` (SEP-414);
- every upstream call (`upstream_span`, from the upstream pool): a child span naming the
  upstream ("upstream tools/call time"), around the SDK's own CLIENT span for the request,
  which carries the trace context on to the upstream in `_meta`;
- a client over HTTP may send its context as `traceparent` / `tracestate` headers instead of
  in `_meta` (`HeaderContext`, put in front of the SDK's middleware by the HTTP app);
- to HTTP upstreams the same context also travels as `traceparent` / `tracestate` headers
  (`trace_headers`): an HTTP server or a proxy in between reads those, not `_meta`. The SDK
  writes requests from a task of its own, where the caller's context is gone, so the headers
  are copied from the `_meta` the SDK stamped into the request body.

On when the config says `gateway.tracing` ("otlp", "console"; "none" turns it off whatever the
environment says), else when OTEL_TRACES_EXPORTER names an exporter; OTEL_SDK_DISABLED=true
turns it off. The SDK reads the other standard variables itself (OTEL_SERVICE_NAME,
OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_TRACES_SAMPLER ...). The console exporter writes to stderr
(a stdio gateway's stdout is its client's channel). The OTLP exporter (http/protobuf) is the
`otel` extra: pip install 'gatespec[otel]'.

opentelemetry-api comes with mcp and -sdk is a dependency (a few pure-Python modules); without a
provider every call here is the API's no-op.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

import httpx2
from opentelemetry import context, propagate, trace

from gatespec.serving import ServeError

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter

__all__ = [
    "EXPORTERS",
    "HeaderContext",
    "follow_http_headers",
    "TracingError",
    "start",
    "stop",
    "trace_headers",
    "traced",
    "tracing",
    "upstream_span",
]

logger = logging.getLogger(__name__)

EXPORTERS: Final = ("otlp", "console", "none")  # the values OTEL_TRACES_EXPORTER takes here
SERVICE_NAME: Final = "gatespec"  # unless OTEL_SERVICE_NAME (or its resource attribute) says
_TRACER: Final = trace.get_tracer("gatespec")
_HEADERS: Final = ("traceparent", "tracestate")

_on = False  # a provider was installed by `start`


class TracingError(ServeError):
    """Tracing was asked for but cannot start (an unknown exporter, a missing package)."""


def tracing() -> bool:
    return _on


def _wanted(setting: str | None) -> list[str]:
    """The exporters asked for: the config's, else OTEL_TRACES_EXPORTER's (none: off)."""
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return []
    raw = setting if setting else os.environ.get("OTEL_TRACES_EXPORTER", "")
    names = [n.strip().lower() for n in raw.split(",") if n.strip()]
    unknown = [n for n in names if n not in EXPORTERS]
    if unknown:
        raise TracingError(
            f"unknown trace exporter {unknown[0]!r} (expected one of {', '.join(EXPORTERS)})"
        )
    return [] if "none" in names else names


def _exporter(name: str) -> SpanExporter:
    if name == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        return ConsoleSpanExporter(out=sys.stderr)
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError as exc:
        raise TracingError(
            "the otlp trace exporter needs its package: pip install 'gatespec[otel]'"
        ) from exc
    return OTLPSpanExporter()


def start(
    setting: str | None = None, exporters: Sequence[SpanExporter] = ()
) -> TracerProvider | None:
    """Install a tracer provider when tracing is asked for (module docstring), or exporting
    to `exporters` (tests: spans handed over as each ends); None when tracing stays off.
    TracingError for an exporter that cannot be made."""
    global _on
    names = [] if exporters else _wanted(setting)
    if not names and not exporters:
        return None
    from opentelemetry.sdk.resources import OTEL_SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    resource = Resource.create(
        {} if os.environ.get(OTEL_SERVICE_NAME) else {"service.name": SERVICE_NAME}
    )
    provider = TracerProvider(resource=resource)
    for exporter in exporters:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    for name in names:
        provider.add_span_processor(BatchSpanProcessor(_exporter(name)))
    trace.set_tracer_provider(provider)
    _on = True
    logger.info("tracing on: exporting spans to %s", ", ".join(names) or "the given exporters")
    return provider


def stop(provider: TracerProvider | None) -> None:
    """Flush and close what `start` installed (spans still buffered are sent)."""
    global _on
    _on = False
    if provider is not None:
        provider.shutdown()


@contextmanager
def traced(setting: str | None) -> Iterator[TracerProvider | None]:
    """Tracing (if asked for) while the block runs; buffered spans are sent at its end."""
    provider = start(setting)
    try:
        yield provider
    finally:
        stop(provider)


@contextmanager
def upstream_span(upstream: str, method: str, name: str | None = None) -> Iterator[Any]:
    """A span around one request to `upstream` (a child of the client request's span)."""
    if not _on:
        yield None
        return
    title = f"upstream {method} {upstream}" + (f" {name}" if name else "")
    attributes = {"gatespec.upstream": upstream, "mcp.method.name": method}
    if name:
        attributes["gen_ai.tool.name" if method == "tools/call" else "mcp.target"] = name
    with _TRACER.start_as_current_span(
        title, kind=trace.SpanKind.INTERNAL, attributes=attributes
    ) as span:
        yield span


class HeaderContext:
    """Server middleware, outermost: an HTTP request that carries W3C trace headers gets
    them as its ambient context, so the SDK's span of the request joins that trace when the
    client put no context in `_meta` (which wins: the SDK's span parents from it first)."""

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        request = getattr(ctx, "request", None)
        headers = getattr(request, "headers", None)
        if not _on or headers is None or "traceparent" not in headers:
            return await call_next(ctx)
        token = context.attach(propagate.extract(dict(headers)))
        try:
            return await call_next(ctx)
        finally:
            context.detach(token)


def follow_http_headers(server: Any) -> None:
    """Put HeaderContext in front of `server`'s middleware (the SDK's span middleware)."""
    if not any(isinstance(m, HeaderContext) for m in server.middleware):
        server.middleware.insert(0, HeaderContext())


class _TraceHeaders(httpx2.AsyncBaseTransport):
    """An HTTP upstream's transport that sends a request's `_meta` trace context as the W3C
    headers too (module docstring)."""

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method == "POST" and b'"traceparent"' in request.content:
            try:
                meta = json.loads(request.content)["params"]["_meta"]
                for header in _HEADERS:
                    if isinstance(meta.get(header), str):
                        request.headers[header] = meta[header]
            except (ValueError, KeyError, TypeError, AttributeError):
                pass  # not one JSON-RPC request with a trace context: sent as it is
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def trace_headers() -> httpx2.AsyncBaseTransport | None:
    """The transport an HTTP upstream's client sends through while tracing (None: the
    default one)."""
    return _TraceHeaders(httpx2.AsyncHTTPTransport()) if _on else None
