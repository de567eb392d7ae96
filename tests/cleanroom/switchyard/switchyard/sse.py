"""Legacy HTTP+SSE transport at the endpoints seed 001 names.

* `GET /sse` establishes an SSE stream and first sends an `endpoint` event
  whose data is `/messages?sessionId={uuid}` (seed 001, "SSE Connection").
* `POST /messages?sessionId=...` routes the JSON-RPC message to that
  session's transport (seed 001, "Message Handling").
* Each new SSE connection gets a NEW server instance connected to the
  transport; when the stream closes, the instance is closed and the session's
  resources are released (seed 001, "Session Management").

Built from the SDK's pieces (the SDK's own `SseServerTransport` announces
`?session_id=<hex>`, which is not the seed's `sessionId={uuid}`).  The
session is bound to the identity that opened it: a POST presenting another
identity is answered exactly as an unknown session (404).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import quote
from uuid import UUID, uuid4

import anyio
import mcp.types as types
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared._context_streams import ContextSendStream, create_context_streams
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from pydantic import ValidationError
from sse_starlette import EventSourceResponse
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from .access import SCOPE_KEY

logger = logging.getLogger(__name__)

ServerFactory = Callable[[Any], Any]  # identity -> low-level Server


class SseSessions:
    def __init__(
        self,
        make_server: ServerFactory,
        messages_path: str = "/messages",
        security: TransportSecuritySettings | None = None,
    ):
        self._make_server = make_server
        self._messages_path = messages_path
        self._security = TransportSecurityMiddleware(security)
        self._writers: dict[UUID, ContextSendStream[SessionMessage | Exception]] = {}
        self._owners: dict[UUID, Any] = {}

    @property
    def active(self) -> int:
        return len(self._writers)

    async def handle_sse(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        rejection = await self._security.validate_request(request, is_post=False)
        if rejection is not None:
            await rejection(scope, receive, send)
            return

        read_writer, read_stream = create_context_streams[SessionMessage | Exception](0)
        write_stream, write_reader = create_context_streams[SessionMessage](0)
        session_id = uuid4()
        identity = scope.get(SCOPE_KEY)
        self._writers[session_id] = read_writer
        self._owners[session_id] = identity
        root = scope.get("root_path", "").rstrip("/")
        endpoint = f"{quote(root + self._messages_path)}?sessionId={session_id}"
        sse_writer, sse_reader = anyio.create_memory_object_stream[dict[str, Any]](0)

        async def pump() -> None:
            async with sse_writer, write_reader:
                await sse_writer.send({"event": "endpoint", "data": endpoint})
                async for message in write_reader:
                    await sse_writer.send(
                        {"event": "message", "data": message.message.model_dump_json(by_alias=True, exclude_unset=True)}
                    )

        server = self._make_server(identity)
        logger.info("SSE session %s opened", session_id)
        try:
            async with anyio.create_task_group() as tg:

                async def respond() -> None:
                    # Returns when the client disconnects: close our side so the
                    # server instance below finishes (seed 001 "Destroy session").
                    await EventSourceResponse(content=sse_reader, data_sender_callable=pump)(scope, receive, send)
                    await read_writer.aclose()
                    await write_reader.aclose()
                    await sse_reader.aclose()
                    tg.cancel_scope.cancel()

                tg.start_soon(respond)
                await server.run(read_stream, write_stream, server.create_initialization_options())
                tg.cancel_scope.cancel()
        finally:
            self._writers.pop(session_id, None)
            self._owners.pop(session_id, None)
            logger.info("SSE session %s closed", session_id)

    async def handle_post(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        rejection = await self._security.validate_request(request, is_post=True)
        if rejection is not None:
            await rejection(scope, receive, send)
            return
        raw = request.query_params.get("sessionId") or request.query_params.get("session_id")
        if not raw:
            await Response("sessionId is required", status_code=400)(scope, receive, send)
            return
        try:
            session_id = UUID(raw)
        except ValueError:
            await Response("Invalid session ID", status_code=400)(scope, receive, send)
            return
        writer = self._writers.get(session_id)
        if writer is None or self._owners.get(session_id) != scope.get(SCOPE_KEY):
            await Response("Could not find session", status_code=404)(scope, receive, send)
            return
        body = await request.body()
        try:
            message = types.jsonrpc_message_adapter.validate_json(body, by_name=False)
        except ValidationError as err:
            await Response("Could not parse message", status_code=400)(scope, receive, send)
            await writer.send(err)
            return
        await Response("Accepted", status_code=202)(scope, receive, send)
        try:
            await writer.send(SessionMessage(message, metadata=ServerMessageMetadata(request_context=request)))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            logger.debug("SSE session %s closed while a message was being delivered", session_id)
