"""An HTTP MCP server (handshake era, no SDK) that misbehaves on request, for the fault suite:
the web twin of tests/fixtures/raw_mcp_server.py, so the same faults run over each upstream
transport.

Usage: python web_upstream.py PORT (--http | --sse)
--http   Streamable HTTP: POST /mcp, each answer one JSON body
--sse    the 2024-11-05 transport: GET /sse (the answers arrive there as events) and
         POST /messages/?session_id=...

Tools: echo(text); crash(): the process exits mid-call; hang(): never answered;
garbage(how): answered with `utf8` (one invalid UTF-8 byte), `deep` (nested 100,000 deep)
or `junk` (not JSON at all); big(bytes): a text of that many bytes.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
import uvicorn
from anyio.streams.memory import MemoryObjectSendStream
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

TOOLS = [
    {"name": name, "description": text, "inputSchema": {"type": "object"}}
    for name, text in [
        ("echo", "Echo the text back."),
        ("crash", "Exit mid-call."),
        ("hang", "Never answer."),
        ("garbage", "Answer with bytes that are no JSON-RPC message."),
        ("big", "Answer with a very large result."),
    ]
]


def answer(message: dict[str, Any]) -> bytes | None:
    """The bytes answering `message`, or None for a notification or a call never answered."""
    method, request_id = message.get("method"), message.get("id")
    if request_id is None:
        return None
    result: dict[str, Any]
    if method == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "web-faults", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        name = message["params"]["name"]
        args = message["params"].get("arguments") or {}
        if name == "crash":
            os._exit(3)
        if name == "hang":
            return None
        if name == "garbage":
            return garbage(request_id, str(args.get("how")))
        text = "x" * int(args["bytes"]) if name == "big" else str(args.get("text", ""))
        result = {"content": [{"type": "text", "text": text}], "isError": False}
    elif method == "ping":
        result = {}
    else:
        error = {"code": -32601, "message": f"no method {method}"}
        return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode()
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()


def garbage(request_id: Any, how: str) -> bytes:
    if how == "junk":
        return b"this is not JSON at all"
    result = {"content": [{"type": "text", "text": "bad"}], "isError": False}
    line = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()
    if how == "utf8":
        return line.replace(b'"text": "', b'"text": "\xff', 1)
    nested = b"[" * 100_000 + b"]" * 100_000
    return line.replace(b'"isError"', b'"deep": ' + nested + b', "isError"', 1)


async def streamable(request: Request) -> Response:
    message = json.loads(await request.body())
    body = answer(message)
    if body is None:
        if message.get("id") is None:
            return Response(status_code=202)
        await anyio.sleep_forever()  # hang: the POST is never answered
    return Response(body, media_type="application/json")


class LegacySse:
    """GET /sse opens a stream; POSTs to /messages/ are answered on it."""

    def __init__(self) -> None:
        self.streams: dict[str, MemoryObjectSendStream[bytes]] = {}

    async def connect(self, request: Request) -> Response:
        session = os.urandom(8).hex()
        send, receive = anyio.create_memory_object_stream[bytes](100)
        self.streams[session] = send

        async def events() -> Any:
            yield f"event: endpoint\ndata: /messages/?session_id={session}\n\n".encode()
            async with receive:
                async for body in receive:
                    yield b"event: message\ndata: " + body + b"\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    async def post(self, request: Request) -> Response:
        stream = self.streams.get(request.query_params.get("session_id", ""))
        if stream is None:
            return Response("unknown session", status_code=404)
        body = answer(json.loads(await request.body()))
        if body is not None:
            await stream.send(body)
        return Response("Accepted", status_code=202)


def main() -> None:
    port = int(sys.argv[1])
    if "--sse" in sys.argv:
        legacy = LegacySse()
        routes = [
            Route("/sse", legacy.connect, methods=["GET"]),
            Route("/messages/", legacy.post, methods=["POST"]),
        ]
    else:
        routes = [Route("/mcp", streamable, methods=["POST"])]
    uvicorn.run(Starlette(routes=routes), host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
