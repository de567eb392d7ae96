"""Transports for one upstream: the SDK's stdio / Streamable HTTP / legacy SSE clients, plus
two small additions the gateway needs from them:

- end-of-stream detection (`EofWatch`): a crashed stdio server or a dropped SSE stream shows up
  as the read stream ending, so the upstream can be marked failed at once instead of on the
  next call;
- a stderr tail (`StderrTail`, gatespec.spawn): a stdio server's stderr goes to an unlinked
  temporary file, so a start failure or crash can be reported with the server's last words;
- adopting a process started early (`adopted_stdio`, see gatespec.spawn): the SDK's stdio client
  only talks to processes it spawns itself, so a process spawned before the SDK was imported is
  driven here the same way (JSON lines on stdin/stdout; on close stdin is closed, then after
  the SDK's grace periods its session gets SIGTERM, then SIGKILL);
- a size cap on what a server says (AM-RESULT-SIZE-CAP): a stdio line longer than
  MAX_UPSTREAM_RESULT_BYTES is skipped unparsed, in bounded chunks, and the request it answered
  gets an error naming the limit (gatespec.upstream.oversized); the connection stays up. HTTP
  answers are capped by capped_http, legacy SSE events by capped_sse.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from types import TracebackType
from typing import Any, Final, Self

import anyio
import httpx2
import mcp_types as types
from mcp.client.stdio import (
    FORCE_KILL_TIMEOUT,
    PROCESS_TERMINATION_TIMEOUT,
    StdioServerParameters,
    stdio_client,
)
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage

from gatespec.config import ServerConfig
from gatespec.observe.tracing import trace_headers
from gatespec.spawn import EarlyProcess, StderrTail
from gatespec.upstream._sdk import TransportStreams
from gatespec.upstream.capped_http import CappedHttp
from gatespec.upstream.capped_sse import capped_sse_client
from gatespec.upstream.oversized import EDGE, Oversized
from gatespec_surface.budgets import MAX_UPSTREAM_RESULT_BYTES

log = logging.getLogger(__name__)

__all__ = [
    "OPENERS",
    "EofWatch",
    "StderrTail",
    "adopted_stdio",
    "open_transport",
    "stdio_parameters",
]


class EofWatch:
    """Wraps a transport's read stream and calls `on_eof` once when the stream ends.

    Implements the SDK's ReadStream protocol by delegation, so the session's dispatcher
    consumes it exactly like the stream it wraps.
    """

    def __init__(
        self,
        inner: Any,
        on_eof: Callable[[], None],
        rewrite: Callable[[SessionMessage | Exception], SessionMessage | Exception] | None = None,
    ) -> None:
        self._inner = inner
        self._on_eof = on_eof
        self._rewrite = rewrite
        self._fired = False

    @property
    def last_context(self) -> Any:  # forwarded: the dispatcher reads it when present
        return getattr(self._inner, "last_context", None)

    def _eof(self) -> None:
        if not self._fired:
            self._fired = True
            self._on_eof()

    async def receive(self) -> SessionMessage | Exception:
        try:
            item: SessionMessage | Exception = await self._inner.receive()
            return self._rewrite(item) if self._rewrite is not None else item
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._eof()
            raise

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()


def stdio_parameters(config: ServerConfig) -> StdioServerParameters:
    """The SDK's spawn parameters; env is merged over the SDK's safe default environment."""
    assert config.command is not None  # guaranteed by the config loader for stdio servers
    return StdioServerParameters(
        command=config.command,
        args=list(config.args),
        env=dict(config.env) or None,
        cwd=config.cwd,
    )


def _parse(line: bytes) -> SessionMessage | Exception:
    """One stdout line as the SDK's stdio client reads it (a parse error is passed on)."""
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except (ValueError, RecursionError) as exc:
        return exc if isinstance(exc, ValueError) else ValueError(f"RecursionError: {exc}")


def _why(exc: Exception) -> str:
    """One short line on why a line is not a valid message."""
    text = str(exc)
    if "utf-8" in text.lower() or "unicode" in text.lower():
        return "it is not valid UTF-8"
    if "recursion" in text.lower() or "nest" in text.lower():
        return "it is nested too deeply"
    first = text.splitlines()[0] if text else type(exc).__name__
    return first[:200]


async def _wait_exit(process: Any, timeout: float) -> bool:
    with anyio.move_on_after(timeout):
        while process.poll() is None:
            await anyio.sleep(0.01)
        return True
    return False


async def _stop(process: Any) -> None:
    """The SDK's shutdown order: stdin is closed already; grace, SIGTERM, grace, SIGKILL."""
    for sig, grace in ((None, PROCESS_TERMINATION_TIMEOUT), (signal.SIGTERM, FORCE_KILL_TIMEOUT)):
        if sig is not None:
            with suppress(OSError):
                os.killpg(process.pid, sig)
        if await _wait_exit(process, grace):
            return
    with suppress(OSError):
        os.killpg(process.pid, signal.SIGKILL)
    await _wait_exit(process, 2.0)


async def _skip_line(reader: asyncio.StreamReader, first: bytes) -> tuple[bytes, bytes, int]:
    """Consume the rest of a line that began with `first` (too long to buffer): its first and
    last `EDGE` bytes and its size. Reads in chunks; nothing is kept or parsed."""
    head, tail, size = first[:EDGE], first[-EDGE:], len(first)
    while True:
        try:
            chunk = await reader.readuntil(b"\n")
        except asyncio.LimitOverrunError as exc:
            chunk = await reader.readexactly(exc.consumed)
        except asyncio.IncompleteReadError as exc:
            chunk = exc.partial
            if not chunk:
                return head, tail, size
        size += len(chunk)
        tail = (tail + chunk)[-EDGE:]
        if chunk.endswith(b"\n"):
            return head, tail, size


async def _next_line(reader: asyncio.StreamReader) -> bytes | tuple[bytes, bytes, int]:
    """The next line (b"" at the end), or (head, tail, size) of one over the cap."""
    try:
        return await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as exc:
        return exc.partial
    except asyncio.LimitOverrunError as exc:
        first = await reader.readexactly(exc.consumed)
        return await _skip_line(reader, first)


@asynccontextmanager
async def adopted_stdio(early: EarlyProcess) -> AsyncIterator[TransportStreams]:
    """MCP over the pipes of a stdio server spawned before this connection (asyncio only)."""
    process = early.process
    assert process.stdin is not None and process.stdout is not None
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_UPSTREAM_RESULT_BYTES)
    read_pipe, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), process.stdout
    )
    write_pipe, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, process.stdin
    )
    writer = asyncio.StreamWriter(write_pipe, protocol, reader, loop)
    inbound_send, inbound = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    outbound, outbound_receive = anyio.create_memory_object_stream[SessionMessage](0)

    pending = Oversized()

    async def read_lines() -> None:
        async with inbound_send:
            with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                while line := await _next_line(reader):
                    if isinstance(line, tuple):
                        if not pending.is_answer(line[0], line[1]):
                            log.warning("upstream message of over %s bytes skipped", line[2])
                            continue  # a notification over the cap answers no one
                        request = pending.request_of(line[0], line[1])
                        if request is None:  # an answer to no one we can name: end it
                            return
                        await inbound_send.send(pending.answer(request, line[2]))
                    elif line.strip():
                        parsed = _parse(line)
                        if isinstance(parsed, SessionMessage):
                            pending.answered(parsed.message)
                        elif (request := pending.malformed(line)) is not None:
                            # Its request fails now rather than at call_timeout.
                            parsed = pending.fail(request, _why(parsed))
                        await inbound_send.send(parsed)

    async def write_lines() -> None:
        async with outbound_receive:
            try:
                async for message in outbound_receive:
                    pending.sent(message.message)
                    text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    writer.write(text.encode("utf-8") + b"\n")
                    await writer.drain()
            except (ConnectionError, OSError):
                await inbound_send.aclose()  # the session sees the connection end

    async with anyio.create_task_group() as tg:
        tg.start_soon(read_lines)
        tg.start_soon(write_lines)
        try:
            yield inbound, outbound
        finally:
            with anyio.CancelScope(shield=True):
                outbound.close()
                write_pipe.close()  # EOF on the server's stdin: its cue to exit
                await _stop(process)
                read_pipe.close()
            tg.cancel_scope.cancel()


Opener = Callable[
    [ServerConfig, Callable[[], None], StderrTail | None],
    AbstractAsyncContextManager[TransportStreams],
]


@asynccontextmanager
async def _stdio(
    config: ServerConfig, on_eof: Callable[[], None], stderr: StderrTail | None
) -> AsyncIterator[TransportStreams]:
    errlog = stderr.file if stderr is not None else None
    if errlog is None:
        ctx = stdio_client(stdio_parameters(config))
    else:
        ctx = stdio_client(stdio_parameters(config), errlog=errlog)
    async with ctx as (read, write):
        yield EofWatch(read, on_eof), write


@asynccontextmanager
async def _http(
    config: ServerConfig, on_eof: Callable[[], None], stderr: StderrTail | None
) -> AsyncIterator[TransportStreams]:
    assert config.url is not None
    # The transport only manages an http client it created itself; ours carries the headers.
    # Same timeouts as the SDK's default client: 30 s, but 300 s between stream events.
    # The transport stops reading an answer at the size cap (capped_http); SSE-framed
    # answers get the same cap instead of the SDK's 1 MiB default per event.
    timeout = httpx2.Timeout(30.0, read=300.0)
    capped = CappedHttp(trace_headers())  # W3C trace headers while tracing
    async with httpx2.AsyncClient(
        headers=dict(config.headers), timeout=timeout, transport=capped
    ) as http:
        async with streamable_http_client(
            config.url, http_client=http, max_sse_event_size=MAX_UPSTREAM_RESULT_BYTES
        ) as (read, write):
            yield EofWatch(read, on_eof, capped.rewrite), write


@asynccontextmanager
async def _sse(
    config: ServerConfig, on_eof: Callable[[], None], stderr: StderrTail | None
) -> AsyncIterator[TransportStreams]:
    assert config.url is not None
    # Its events are capped the same way, one at a time (capped_sse).
    async with capped_sse_client(config.url, dict(config.headers) or None) as (
        read,
        write,
        answered,
    ):
        yield EofWatch(read, on_eof, answered), write


# One opener per kind the MCP client reaches (gatespec.upstream_kinds: the kinds with `mcp`;
# tests/runtime/upstream/test_upstream_kinds.py checks that every one has its opener).
OPENERS: Final[Mapping[str, Opener]] = {"stdio": _stdio, "http": _http, "sse": _sse}


@asynccontextmanager
async def open_transport(
    config: ServerConfig,
    on_eof: Callable[[], None],
    stderr: StderrTail | None,
    early: EarlyProcess | None = None,
) -> AsyncIterator[TransportStreams]:
    """Open the SDK transport a server config asks for (or drive the stdio process started
    early for it); the read stream reports its end."""
    if early is not None:
        async with adopted_stdio(early) as (read, write):
            yield EofWatch(read, on_eof), write
        return
    opener = OPENERS.get(config.transport)
    if opener is None:  # pragma: no cover - stub servers never reach the MCP client
        raise ValueError(f"no MCP transport for a {config.transport} server")
    async with opener(config, on_eof, stderr) as streams:
        yield streams
