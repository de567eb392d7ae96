"""gatespec.server.http_writes: a complete HTTP response leaves in one transport write, a
streamed one (SSE) is not held back past the next loop step, and closing sends what is held.

Unit tests: uvicorn's real protocol and parser on a real event loop, fed raw request bytes;
only the transport is a recorder (what reaches the socket is what it records).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from uvicorn.config import Config
from uvicorn.server import ServerState

from gatespec.server.http_writes import OneWriteHttpProtocol

pytestmark = pytest.mark.anyio

REQUEST = b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 2\r\n\r\n{}"


class RecordingTransport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 50000), "sockname": ("127.0.0.1", 8000)}.get(
            name, default
        )

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


def serve(app: Any) -> tuple[OneWriteHttpProtocol, RecordingTransport]:
    config = Config(app, lifespan="off", log_config=None)
    config.load()
    protocol = OneWriteHttpProtocol(config, ServerState(), {}, asyncio.get_running_loop())
    transport = RecordingTransport()
    protocol.connection_made(transport)
    protocol.data_received(REQUEST)
    return protocol, transport


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_complete_response_is_one_write() -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", b"2")],
            }
        )
        await send({"type": "http.response.body", "body": b"{}"})

    _, transport = serve(app)
    await settle()
    assert len(transport.writes) == 1, transport.writes
    head, _, body = transport.writes[0].partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"content-type: application/json" in head
    assert body == b"{}"


async def test_a_streamed_response_is_not_held_until_it_ends() -> None:
    release = asyncio.Event()

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"data: 1\n\n", "more_body": True})
        await release.wait()
        await send({"type": "http.response.body", "body": b"data: 2\n\n"})

    _, transport = serve(app)
    await settle()
    sent = b"".join(transport.writes)
    assert sent.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"data: 1\n\n" in sent and b"data: 2" not in sent
    release.set()
    await settle()
    assert b"".join(transport.writes).endswith(b"data: 2\n\n\r\n0\r\n\r\n")


async def test_closing_sends_what_is_held_first() -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"x"})

    protocol, transport = serve(app)
    await settle()
    protocol.transport.write(b"held")
    protocol.transport.close()
    assert transport.writes[-1] == b"held" and transport.closed
