"""stdin/stdout for the stdio transport without a worker thread per line.

The SDK's stdio_server reads and writes through anyio.wrap_file, which runs every readline and
every write in a worker thread: measured here, that hop is most of the gateway's added latency
per call. When stdin and stdout are pipes or sockets (how MCP clients start servers), these
streams use the event loop's non-blocking pipe transports instead, and are handed to the SDK's
stdio_server as its explicit stdin/stdout. Anything else (a file, a terminal) keeps the SDK's own
streams.

Like the SDK, the wire's descriptors are moved out of fd 0/1 while serving (stdin reads the null
device, stdout goes to stderr), so a handler's or child's stray print never corrupts the wire.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

_LINE_LIMIT = 64 * 1024 * 1024  # one JSON-RPC message per line; large results are legitimate


def _is_pipe_or_socket(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class PipeLines:
    """The read side: `async for line in stdin` yields decoded text lines."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> PipeLines:
        return self

    async def __anext__(self) -> str:
        line = await self._reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


class PipeWriter:
    """The write side: `await stdout.write(text)`, `await stdout.flush()`."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


@asynccontextmanager
async def pipe_stdio() -> AsyncIterator[tuple[Any, Any] | None]:
    """(stdin, stdout) over non-blocking pipes, or None when fd 0/1 are not both pipes or
    sockets (then the caller uses the SDK's own streams)."""
    if not (_is_pipe_or_socket(0) and _is_pipe_or_socket(1)):
        yield None
        return
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    os.close(null)
    loop = asyncio.get_running_loop()
    in_file = os.fdopen(wire_in, "rb", buffering=0)
    out_file = os.fdopen(wire_out, "wb", buffering=0)
    try:
        reader = asyncio.StreamReader(limit=_LINE_LIMIT)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), in_file)
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, out_file
        )
        # drain() then waits until each message has left the buffer, so nothing written is
        # lost when the client closes stdin and the process exits right after.
        transport.set_write_buffer_limits(high=0)
        writer = asyncio.StreamWriter(transport, protocol, reader, loop)
        try:
            yield PipeLines(reader), PipeWriter(writer)
        finally:
            transport.close()
    finally:
        in_file.close()
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)
