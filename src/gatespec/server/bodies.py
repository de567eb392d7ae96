"""A POST's body read once, ahead of the app that serves it, and handed on unchanged.

Used where something must look at a POST before the SDK does: the request shapes the SDK
mishandles (server.request_shape) and the POSTs a replica forwards to another
(gatespec.replicas).
"""

from __future__ import annotations

from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from starlette.types import Message, Receive

__all__ = ["read_body", "replaying"]


async def read_body(receive: Receive) -> tuple[bytes, bool]:
    """The request body, up to the SDK's size limit (beyond it the SDK answers 413)."""
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return bytes(body), True
        body.extend(message.get("body", b""))
        if not message.get("more_body"):
            return bytes(body), True
        if len(body) > DEFAULT_MAX_REQUEST_BODY_SIZE:
            return bytes(body), False


def replaying(body: bytes, receive: Receive, complete: bool) -> Receive:
    """A receive that gives `body` first, then whatever is left of the request."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": not complete}
        return await receive()

    return replay
