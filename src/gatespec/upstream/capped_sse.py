"""The result size cap for legacy SSE upstreams (AM-RESULT-SIZE-CAP).

A legacy SSE upstream answers every request as an event on one long GET stream. The SDK's
client reads events of at most `EVENT_LIMIT` bytes and, past that, fails the whole stream: one
oversized answer would disconnect the upstream and every call in flight on it. So the stream
passes through `CappedSse` first, which splits it into events without parsing them and skips
an event over the limit unread, in chunks, keeping only its two ends. The request it answered
(found as for a stdio line: gatespec.upstream.oversized) gets in its place a small event with
the oversized error, and the stream goes on. An oversized event that answers no request we can
name ends the stream, as on stdio: the upstream is reconnected rather than a guess made.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Final

import httpx2
import mcp_types as types
from mcp.client.sse import sse_client
from mcp.shared.message import SessionMessage

from gatespec.upstream._sdk import sse_event_limit
from gatespec.upstream.oversized import EDGE, Oversized
from gatespec_surface.budgets import MAX_UPSTREAM_RESULT_BYTES

__all__ = ["EVENT_LIMIT", "CappedSse", "capped_sse_client", "split_events"]

log = logging.getLogger(__name__)


_SDK_LIMIT: Final = sse_event_limit()
# Bytes of one event, line ends and field names included (the SDK counts less: never more).
EVENT_LIMIT: Final = min(MAX_UPSTREAM_RESULT_BYTES, _SDK_LIMIT or MAX_UPSTREAM_RESULT_BYTES)
_WHAT: Final = (
    "the MCP SDK's limit on one legacy SSE event"
    if EVENT_LIMIT < MAX_UPSTREAM_RESULT_BYTES
    else "MAX_UPSTREAM_RESULT_BYTES"
)


# An event with fewer brackets than this cannot nest past the SDK's parser (pydantic-core stops
# at a depth of about 200), so it is not parsed twice.
_DEPTH_CHECK_FROM: Final = 150


@dataclass(frozen=True)
class Skipped:
    """An event over the limit: its first and last EDGE bytes and its size."""

    head: bytes
    tail: bytes
    size: int


async def split_events(chunks: AsyncIterator[bytes], limit: int) -> AsyncIterator[bytes | Skipped]:
    """The stream's events, each with its lines and the blank line that ends it, or Skipped
    for one over `limit` bytes. A trailing event without its blank line comes last as is.
    Lines end at LF (a CR before it belongs to the line end)."""
    event = bytearray()
    skipped: Skipped | None = None
    line_empty = True  # nothing but line-end bytes since the last LF
    async for chunk in chunks:
        start = 0
        while start < len(chunk):
            lf = chunk.find(b"\n", start)
            piece = chunk[start:] if lf == -1 else chunk[start : lf + 1]
            if skipped is None:
                event += piece
                if len(event) > limit:
                    skipped = Skipped(bytes(event[:EDGE]), bytes(event[-EDGE:]), len(event))
                    event.clear()
            else:
                tail = (skipped.tail + piece)[-EDGE:]
                skipped = Skipped(skipped.head, tail, skipped.size + len(piece))
            if piece.rstrip(b"\r\n"):
                line_empty = False
            if lf == -1:
                break
            start = lf + 1
            if line_empty:  # a blank line: the event ends
                if skipped is not None:
                    yield skipped
                    skipped = None
                elif event:
                    yield bytes(event)
                event.clear()
            line_empty = True
    if event and skipped is None:
        yield bytes(event)


def _error_event(message: SessionMessage) -> bytes:
    body = message.message.model_dump_json(by_alias=True, exclude_unset=True)
    return b"event: message\ndata: " + body.encode() + b"\n\n"


class _CappedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: Any, pending: Oversized) -> None:
        self.inner = inner
        self.pending = pending

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for event in split_events(self.inner.__aiter__(), EVENT_LIMIT):
            if not isinstance(event, Skipped):
                yield self._readable(event)
                continue
            if not self.pending.is_answer(event.head, event.tail):
                log.warning("upstream message of over %s bytes skipped", event.size)
                continue  # a notification over the cap answers no one (issue 22 #15)
            request = self.pending.request_of(event.head, event.tail)
            if request is None:
                raise httpx2.StreamError(
                    f"an SSE event of over {event.size:,} bytes answers no request that can be "
                    f"named; the gateway reads at most {EVENT_LIMIT:,} bytes ({_WHAT})"
                )
            log.warning(
                "upstream answer of over %s bytes skipped (request %r)", event.size, request
            )
            yield _error_event(self.pending.answer(request, event.size, EVENT_LIMIT, _WHAT))

    def _readable(self, event: bytes) -> bytes:
        """`event`, or the error its request gets when its data nests deeper than the SDK
        reads (the SDK would log and drop it, and the call wait for call_timeout; issue 22
        #16). Only an event with many brackets is parsed here a second time."""
        if event.count(b"[") + event.count(b"{") < _DEPTH_CHECK_FROM:
            return event
        data = b"\n".join(
            line[5:].removeprefix(b" ") for line in event.splitlines() if line.startswith(b"data:")
        )
        try:
            types.jsonrpc_message_adapter.validate_json(data, by_name=False)
        except (ValueError, RecursionError) as exc:
            request = self.pending.malformed(data)
            if request is not None:
                log.warning("upstream answer unreadable (request %r): %s", request, exc)
                return _error_event(
                    self.pending.fail(request, "it is not valid or nested too deeply")
                )
        return event

    async def aclose(self) -> None:
        await self.inner.aclose()


class CappedSse(httpx2.AsyncBaseTransport):
    """An httpx transport that records the requests POSTed to a legacy SSE upstream and caps
    the events of its GET stream (module docstring)."""

    def __init__(self, pending: Oversized, inner: httpx2.AsyncBaseTransport | None = None) -> None:
        self.inner = inner or httpx2.AsyncHTTPTransport()
        self.pending = pending

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method == "POST":
            self._record(request.content)
        response = await self.inner.handle_async_request(request)
        if request.method == "GET":
            response.stream = _CappedStream(response.stream, self.pending)
        return response

    def _record(self, body: bytes) -> None:
        try:
            message = json.loads(body)
        except ValueError:
            return
        if isinstance(message, dict) and "method" in message:
            kind = types.JSONRPCRequest if "id" in message else types.JSONRPCNotification
            try:
                self.pending.sent(kind.model_validate(message))
            except ValueError:
                return

    async def aclose(self) -> None:
        await self.inner.aclose()


@asynccontextmanager
async def capped_sse_client(
    url: str, headers: dict[str, str] | None
) -> AsyncIterator[tuple[Any, Any, Callable[[Any], Any]]]:
    """The SDK's legacy SSE client over a CappedSse transport: its streams, and the hook that
    forgets the requests whose answers the session reads (pass it to EofWatch)."""
    pending = Oversized()

    def client(
        headers: dict[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        auth: httpx2.Auth | None = None,
    ) -> httpx2.AsyncClient:
        # what the SDK's default factory makes (sse_client always passes its timeouts), over
        # the capping transport
        return httpx2.AsyncClient(
            headers=headers, timeout=timeout, auth=auth, transport=CappedSse(pending)
        )

    def answered(item: SessionMessage | Exception) -> SessionMessage | Exception:
        if isinstance(item, SessionMessage):
            pending.answered(item.message)
        return item

    async with sse_client(url, headers=headers, httpx_client_factory=client) as (read, write):
        yield read, write, answered
