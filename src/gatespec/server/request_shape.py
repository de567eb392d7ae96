"""Request bodies the SDK mishandles, answered with the JSON-RPC error they call for
(issue 22 #13, #14), in front of POST /mcp and POST /messages.

- JSON nested deeper than Python's parser goes (100,000 `[`): the SDK's handler raised a
  RecursionError and answered 500 with a traceback. Now: 400, Parse error, id null.
- A request whose id is neither a string nor an integer (`{"a": 1}`, 1.5, [1], true): the SDK
  took it for a notification (extra keys are ignored) and answered 202 with nothing else.
  JSON-RPC's answer is Invalid Request, id null (MCP: the id "MUST be a string or integer").

Everything else (text that is not JSON, batches, a valid message) goes to the SDK untouched.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from gatespec.server.bodies import read_body, replaying
from gatespec.server.stdio import BAD_ID_MESSAGE, INVALID_REQUEST, PARSE_ERROR, TOO_DEEP_MESSAGE

__all__ = ["RequestShape", "shape_error"]


def shape_error(body: bytes) -> tuple[int, str] | None:
    """(JSON-RPC code, message) for a body the SDK would mishandle, else None."""
    try:
        doc: Any = json.loads(body)
    except RecursionError:
        return PARSE_ERROR, TOO_DEEP_MESSAGE
    except ValueError:
        return None  # not JSON: the SDK answers Parse error itself
    if isinstance(doc, dict) and "method" in doc and "id" in doc:
        rid = doc["id"]
        if isinstance(rid, bool) or not isinstance(rid, (str, int)):
            return INVALID_REQUEST, BAD_ID_MESSAGE
    return None


class RequestShape:
    """ASGI wrapper: answers the bodies `shape_error` names, passes on the rest."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        body, complete = await read_body(receive)
        found = shape_error(body) if complete else None
        if found is None:
            await self.app(scope, replaying(body, receive, complete), send)
            return
        code, message = found
        reply = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
        data = json.dumps(reply).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 400,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(data)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": data})
