"""The result size cap for Streamable HTTP upstreams (AM-RESULT-SIZE-CAP).

`CappedHttp` is the httpx transport of an upstream's HTTP client. It reads the body of each
POST answer in chunks and stops at MAX_UPSTREAM_RESULT_BYTES, before the SDK has parsed any
of it, remembering which request the answer was for (the JSON-RPC id of the POST's body). The
SDK then resolves that request with an error of its own (a parse error, or "stream ended"),
which `rewrite` replaces on the way to the session by the same `OVERSIZED_CODE` error a stdio
upstream's oversized line gets: the request id, not the error's wording, says what happened.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import mcp_types as types
from mcp.shared.message import SessionMessage

from gatespec.upstream.oversized import oversized_error
from gatespec_surface.budgets import MAX_UPSTREAM_RESULT_BYTES

__all__ = ["CappedHttp", "ResultTooLarge"]


class ResultTooLarge(httpx2.StreamError):
    """An answer's body passed MAX_UPSTREAM_RESULT_BYTES (the SDK treats it as unreadable)."""


class _CappedBody(httpx2.AsyncByteStream):
    def __init__(self, inner: Any, on_over: Any) -> None:
        self.inner = inner
        self.on_over = on_over

    async def __aiter__(self) -> AsyncIterator[bytes]:
        total = 0
        async for chunk in self.inner:
            total += len(chunk)
            if total > MAX_UPSTREAM_RESULT_BYTES:
                self.on_over(total)
                raise ResultTooLarge(f"answer over {MAX_UPSTREAM_RESULT_BYTES:,} bytes")
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


def _request_id(body: bytes) -> types.RequestId | None:
    """The id of the JSON-RPC request a POST carries (None: a notification or a response)."""
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if isinstance(message, dict) and "method" in message and "id" in message:
        request_id = message["id"]
        if isinstance(request_id, int | str) and not isinstance(request_id, bool):
            return request_id
    return None


class CappedHttp(httpx2.AsyncBaseTransport):
    """An httpx transport that stops reading a POST's answer at the cap (module docstring)."""

    def __init__(self, inner: httpx2.AsyncBaseTransport | None = None) -> None:
        self.inner = inner or httpx2.AsyncHTTPTransport()
        self.capped: dict[types.RequestId, int] = {}

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        if request.method == "POST":
            request_id = _request_id(request.content)
            if request_id is not None:

                def over(size: int) -> None:
                    self.capped[request_id] = size

                response.stream = _CappedBody(response.stream, over)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()

    def rewrite(self, item: SessionMessage | Exception) -> SessionMessage | Exception:
        """The SDK's stand-in answer for a capped request, replaced by the oversized error."""
        if isinstance(item, SessionMessage) and isinstance(item.message, types.JSONRPCError):
            request_id = item.message.id
            size = self.capped.pop(request_id, None) if request_id is not None else None
            if request_id is not None and size is not None:
                return oversized_error(request_id, size)
        return item
