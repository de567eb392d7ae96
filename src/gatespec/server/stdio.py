"""stdin/stdout for the stdio transport: non-blocking pipes, and every line answered.

The SDK's stdio_server reads and writes through anyio.wrap_file, which runs every readline and
every write in a worker thread: measured here, that hop is most of the gateway's added latency
per call. When stdin and stdout are pipes or sockets (how MCP clients start servers),
`pipe_stdio` serves the session over the event loop's non-blocking pipe transports instead.
Anything else (a file, a terminal) keeps the SDK's own stdio_server.

Over the pipes, each line is parsed once here. A line that is not a valid JSON-RPC message
gets the JSON-RPC error the protocol prescribes (-32700 for text that is not JSON, -32600 for
JSON that is not a valid message, with the request's id when one can be read), where the SDK
would drop it and leave the client waiting. A line longer than LINE_LIMIT is skipped to its
end and answered -32600; the gateway goes on serving. A UTF-8 byte-order mark is ignored.
A request whose id is neither a string nor an integer (1.5, true, {}, [1]) is answered -32600
with id null (the SDK would take it for a notification and answer nothing).

At stdin's EOF the requests already read are still answered (bounded by `drain_timeout`, as
SIGTERM drains an HTTP gateway): only then does the session see its input end.

Like the SDK, the wire's descriptors are moved out of fd 0/1 while serving (stdin reads the null
device, stdout goes to stderr), so a handler's or child's stray print never corrupts the wire.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from gatespec_surface.errors import MESSAGE_MAX_CHARS
from gatespec_surface.text import clip

logger = logging.getLogger(__name__)

# One JSON-RPC message per line; large results are legitimate, unbounded lines are not.
LINE_LIMIT: Final = 64 * 1024 * 1024
_CHUNK: Final = 256 * 1024
_BOM: Final = "\ufeff"
PARSE_ERROR: Final = -32700  # JSON-RPC 2.0: the text is not JSON
INVALID_REQUEST: Final = -32600  # JSON-RPC 2.0: JSON, but not a valid request
DRAIN_TIMEOUT: Final = 30.0  # seconds the requests read before EOF get to finish

ReadStream = MemoryObjectReceiveStream[SessionMessage | Exception]
WriteStream = MemoryObjectSendStream[SessionMessage]


class OverlongLine(Exception):
    """A line longer than LINE_LIMIT (skipped up to its end)."""


def _is_pipe_or_socket(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


async def read_lines(reader: asyncio.StreamReader) -> AsyncIterator[bytes | OverlongLine]:
    """Each line (without its newline), or OverlongLine for one over LINE_LIMIT; ends at EOF."""
    buffer = bytearray()
    skipping = False  # inside an oversized line: drop bytes up to its newline
    while True:
        chunk = await reader.read(_CHUNK)
        if not chunk:
            if buffer and not skipping:
                yield bytes(buffer)
            return
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            if skipping:
                skipping = False
            else:
                buffer += chunk[start:end]
                if len(buffer) > LINE_LIMIT:
                    yield OverlongLine()
                else:
                    yield bytes(buffer)
            buffer.clear()
            start = end + 1
        if not skipping:
            buffer += chunk[start:]
            if len(buffer) > LINE_LIMIT:
                buffer.clear()
                skipping = True
                yield OverlongLine()


def _request_id(text: str) -> tuple[bool, Any]:
    """(is a notification, id) as far as `text` can be read: notifications get no reply."""
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return False, None
    if not isinstance(doc, dict):
        return False, None
    if "method" in doc and "id" not in doc:
        return True, None
    rid = doc.get("id")
    if isinstance(rid, bool) or not isinstance(rid, (str, int)):
        return False, None
    return False, rid


def _bad_id(text: str) -> bool:
    """Whether the message on `text` carries an id that is neither a string nor an integer
    (MCP: "MUST be a string or integer"; JSON-RPC's answer is Invalid Request, id null)."""
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return False
    if not isinstance(doc, dict) or "id" not in doc:
        return False
    rid = doc["id"]
    return isinstance(rid, bool) or not isinstance(rid, (str, int))


BAD_ID_MESSAGE: Final = "Invalid Request: the id must be a string or an integer"
TOO_DEEP_MESSAGE: Final = "Parse error: the JSON is nested too deeply"


def _error_line(rid: Any, code: int, message: str) -> str:
    reply = {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}
    return json.dumps(reply, ensure_ascii=True) + "\n"


def parse_line(line: bytes) -> SessionMessage | str | None:
    """The message on a line, or the error reply to write instead (None: write nothing)."""
    text = line.decode("utf-8", errors="replace").removeprefix(_BOM)
    if not text.strip():
        return None
    try:
        message = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except (ValueError, RecursionError) as exc:
        try:
            json.loads(text)
        except RecursionError:
            return _error_line(None, PARSE_ERROR, TOO_DEEP_MESSAGE)
        except ValueError:
            return _error_line(None, PARSE_ERROR, "Parse error: the line is not JSON")
        notification, rid = _request_id(text)
        if notification:
            logger.warning("dropped an invalid notification: %s", str(exc).splitlines()[0])
            return None
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return _error_line(
            rid, INVALID_REQUEST, clip(f"Invalid Request: {first}", MESSAGE_MAX_CHARS)
        )
    # A request with an id of another type validates as a notification (extra keys are
    # ignored): look at the raw id, only for notifications that mention one.
    if isinstance(message, types.JSONRPCNotification) and '"id"' in text and _bad_id(text):
        return _error_line(None, INVALID_REQUEST, BAD_ID_MESSAGE)
    return SessionMessage(message)


@asynccontextmanager
async def pipe_stdio(
    drain_timeout: float = DRAIN_TIMEOUT,
) -> AsyncIterator[tuple[ReadStream, WriteStream] | None]:
    """The session's (read, write) streams over non-blocking pipes, or None when fd 0/1 are
    not both pipes or sockets (then the caller uses the SDK's stdio_server)."""
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
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), in_file)
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, out_file
        )
        # drain() then waits until each message has left the buffer, so nothing written is
        # lost when the client closes stdin and the process exits right after.
        transport.set_write_buffer_limits(high=0)
        writer = asyncio.StreamWriter(transport, protocol, reader, loop)
        try:
            async with _session_streams(reader, writer, drain_timeout) as streams:
                yield streams
        finally:
            transport.close()
    finally:
        in_file.close()
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)


@asynccontextmanager
async def _session_streams(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, drain_timeout: float
) -> AsyncIterator[tuple[ReadStream, WriteStream]]:
    read_in, read_out = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_in, write_out = anyio.create_memory_object_stream[SessionMessage](0)
    lock = anyio.Lock()  # replies written here and by the session never interleave
    pending = _Pending()

    async def send_line(text: str) -> None:
        async with lock:
            writer.write(text.encode("utf-8"))
            await writer.drain()

    async def read_loop() -> None:
        async with read_in:
            async for line in read_lines(reader):
                if isinstance(line, OverlongLine):
                    await send_line(
                        _error_line(
                            None, INVALID_REQUEST, f"Invalid Request: over {LINE_LIMIT} bytes"
                        )
                    )
                    continue
                parsed = parse_line(line)
                if isinstance(parsed, SessionMessage):
                    pending.read(parsed)
                    await read_in.send(parsed)
                elif parsed is not None:
                    await send_line(parsed)
            # EOF: the session cancels whatever is in flight once its input ends, so it sees
            # the end only when every request read so far has been answered.
            with anyio.move_on_after(drain_timeout) as waited:
                await pending.drained.wait()
            if waited.cancelled_caught:
                logger.warning(
                    "stdin closed; %d request(s) still unanswered after %.0f s are dropped",
                    len(pending.ids),
                    drain_timeout,
                )

    async def write_loop() -> None:
        async with write_out:
            async for message in write_out:
                text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                try:
                    await send_line(text + "\n")
                finally:
                    pending.written(message)

    # Like the SDK's stdio_server, the loops end on their own: reading at EOF, writing once the
    # session has closed its write stream (so the last answers still go out).
    async with anyio.create_task_group() as tg:
        tg.start_soon(read_loop)
        tg.start_soon(write_loop)
        yield read_out, write_in


class _Pending:
    """The ids of the requests read and not yet answered (or cancelled by the client)."""

    def __init__(self) -> None:
        self.ids: set[str | int] = set()
        self.drained = anyio.Event()
        self.drained.set()

    def read(self, session_message: SessionMessage) -> None:
        message = session_message.message
        if isinstance(message, types.JSONRPCRequest):
            self.ids.add(message.id)
            if self.drained.is_set():
                self.drained = anyio.Event()
        elif isinstance(message, types.JSONRPCNotification):
            if message.method == "notifications/cancelled" and message.params:
                self._settle(message.params.get("requestId"))

    def written(self, session_message: SessionMessage) -> None:
        message = session_message.message
        if isinstance(message, (types.JSONRPCResponse, types.JSONRPCError)):
            self._settle(message.id)

    def _settle(self, rid: object) -> None:
        self.ids.discard(rid)
        if not self.ids:
            self.drained.set()
