"""One socket write per HTTP response where uvicorn makes two.

uvicorn writes a response's status line and headers as soon as the app sends
`http.response.start`, then the body: two `send` syscalls, each of which may wake the client
(py-spy on a steady run of POST /mcp: the socket writes were a quarter of the server's busy
time). This protocol holds what uvicorn writes during one step of the event loop and writes
it at once, when the response is complete or, for a response still streaming (SSE), at the
next step. Nothing is reordered and nothing waits longer than one step.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = ["OneWriteHttpProtocol"]


class _HeldWrites:
    """A transport that passes everything through but `write`, which it holds until `flush`
    (called once the response is complete, or at the next loop step at the latest)."""

    __slots__ = ("_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not self._held:
            self._loop.call_soon(self.flush)
        self._held.append(data)

    def flush(self) -> None:
        if not self._held:
            return
        data = self._held[0] if len(self._held) == 1 else b"".join(self._held)
        self._held.clear()
        if not self._transport.is_closing():
            self._transport.write(data)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class OneWriteHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol whose responses leave in one write (module docstring)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.transport = _HeldWrites(transport, self.loop)  # type: ignore[assignment]

    def on_response_complete(self) -> None:
        self.transport.flush()  # type: ignore[attr-defined]
        super().on_response_complete()
