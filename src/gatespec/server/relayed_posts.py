"""A POST carried to another replica through the shared store, and served there.

A replica that receives a POST it cannot serve (a legacy message for an SSE stream held
elsewhere, server.sse_relay; a client's answer or cancellation for a request in flight
elsewhere, server.shared_sessions) packs it, publishes it on the session's channel, and the
replica that can serve it passes it through its own app as if it had arrived there: the bearer
token is verified again and the SDK checks it against the session's owner. The headers, token
included, therefore cross the store (docs/scaling.md: protect it).
"""

from __future__ import annotations

import base64
import json
from typing import Any, Final

from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from starlette.types import ASGIApp, Message, Receive, Scope

__all__ = ["RELAYED", "pack", "read_body", "replaying", "serve"]

RELAYED: Final = "gatespec.relayed"  # scope key: a POST another replica passed on


def pack(scope: Scope, body: bytes) -> bytes:
    """What `serve` needs to replay the POST of `scope` with `body` on another replica."""
    payload = {
        "query": scope.get("query_string", b"").decode("latin-1"),
        "headers": [[k.decode("latin-1"), v.decode("latin-1")] for k, v in scope["headers"]],
        "client": list(scope["client"]) if scope.get("client") else None,
        "body": base64.b64encode(body).decode(),
    }
    return json.dumps(payload).encode()


async def serve(app: ASGIApp, path: str, data: bytes) -> int | None:
    """Pass a packed POST through `app` at `path`; the status it was answered with."""
    payload = json.loads(data)
    body = base64.b64decode(payload["body"])
    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": payload["query"].encode("latin-1"),
        "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in payload["headers"]],
        "client": tuple(payload["client"]) if payload["client"] else None,
        "server": None,
        RELAYED: True,
    }
    status: list[int] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            status.append(message["status"])

    await app(scope, receive, send)
    return status[0] if status else None


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
