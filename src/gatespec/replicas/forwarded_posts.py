"""A POST carried to another replica through the shared store, and served there.

A replica that receives a POST it cannot serve (a legacy message for an SSE stream held
elsewhere, replicas.sse_forward; a client's answer or cancellation for a request in flight
elsewhere, replicas.http_sessions) packs it, publishes it on the session's channel, and the
replica that can serve it passes it through its own app as if it had arrived there: the bearer
token is verified again and the SDK checks it against the session's owner. The headers, token
included, therefore cross the store (docs/scaling.md: protect it).
"""

from __future__ import annotations

import base64
import json
from typing import Any, Final

from starlette.types import ASGIApp, Message, Scope

__all__ = ["FORWARDED", "pack", "serve"]

FORWARDED: Final = "gatespec.forwarded"  # scope key: a POST another replica passed on


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
        FORWARDED: True,
    }
    status: list[int] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            status.append(message["status"])

    await app(scope, receive, send)
    return status[0] if status else None
