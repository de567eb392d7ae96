"""Streamable HTTP with bearer tokens (AM-ACCESS-CONTROL): one SDK app per identity behind a
small ASGI switch on the Authorization header. A request without a known token is 401 with a
Bearer challenge; a session belongs to the identity whose app opened it, so another identity's
session id is as unknown to the caller as one that never existed."""

from __future__ import annotations

import json
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import uvicorn
from mcp.server import Server
from starlette.types import Receive, Scope, Send

_CHALLENGE = 'Bearer realm="independent-gateway", error="invalid_token"'


def load_identities(path: str) -> dict[str, list[str] | None]:
    """{token: allow globs, or None for an unrestricted identity} from a JSON file
    {"identities": [{"token": "...", "allow": ["/*/echo", ...]}, ...]}."""
    document = json.loads(Path(path).read_text(encoding="utf-8"))
    out: dict[str, list[str] | None] = {}
    for entry in document["identities"]:
        allow = entry.get("allow")
        out[str(entry["token"])] = [str(a) for a in allow] if allow is not None else None
    return out


def _token(scope: Scope) -> str | None:
    for key, value in scope.get("headers", []):
        if key == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if scheme.lower() == "bearer" else None
    return None


async def _refuse(send: Send) -> None:
    body = b'{"error": "unauthorized", "message": "a valid bearer token is required"}'
    headers = [
        (b"content-type", b"application/json"),
        (b"www-authenticate", _CHALLENGE.encode()),
        (b"content-length", str(len(body)).encode()),
    ]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def serve_http(servers: dict[str, Server[Any]], port: int) -> None:
    """Serve every identity's server at http://127.0.0.1:port/mcp until cancelled."""
    apps = {
        token: server.streamable_http_app(host="127.0.0.1") for token, server in servers.items()
    }

    async def switch(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        app = apps.get(_token(scope) or "")
        if app is None:
            await _refuse(send)
        else:
            await app(scope, receive, send)

    async with AsyncExitStack() as stack:
        for server in servers.values():
            await stack.enter_async_context(server.session_manager.run())
        config = uvicorn.Config(
            switch, host="127.0.0.1", port=port, lifespan="off", log_level="warning"
        )
        await uvicorn.Server(config).serve()
