"""Transports for one upstream: the SDK's stdio / Streamable HTTP / legacy SSE clients, plus
two small additions the gateway needs from them:

- end-of-stream detection (`EofWatch`): a crashed stdio server or a dropped SSE stream shows up
  as the read stream ending, so the upstream can be marked failed at once instead of on the
  next call;
- a stderr tail (`StderrTail`): a stdio server's stderr goes to an unlinked temporary file in
  append mode, so a start failure or crash can be reported with the server's last words.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any, Final, Self, TextIO, cast

import anyio
import httpx2
from mcp.client._transport import TransportStreams
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage

from gatespec.config import ServerConfig

_STDERR_CAP: Final = 1 << 20  # keep the stderr file under ~1 MiB...
_STDERR_KEEP: Final = 16 << 10  # ...by cutting it down to its last 16 KiB when it grows past


class StderrTail:
    """A stdio server's stderr, kept in an unlinked temp file; `tail()` reads its end cheaply.

    Append mode matters: the child shares the file description, so after `trim()` truncates
    the file the child's next write lands at the new end instead of leaving a hole.
    """

    def __init__(self) -> None:
        self.file = cast(
            TextIO, tempfile.TemporaryFile(mode="a+", encoding="utf-8", errors="replace")
        )

    def tail(self, max_chars: int = 800) -> str:
        try:
            fd = self.file.fileno()
            size = os.fstat(fd).st_size
            data = os.pread(fd, max_chars * 4, max(0, size - max_chars * 4))
        except (OSError, ValueError):
            return ""
        text = data.decode("utf-8", errors="replace").strip()
        return text[-max_chars:]

    def trim(self) -> None:
        """Bound the file for long-lived chatty servers (called now and then, cheap)."""
        try:
            fd = self.file.fileno()
            size = os.fstat(fd).st_size
            if size <= _STDERR_CAP:
                return
            keep = os.pread(fd, _STDERR_KEEP, size - _STDERR_KEEP)
            os.ftruncate(fd, 0)
            os.write(fd, keep)
        except (OSError, ValueError):
            pass

    def close(self) -> None:
        self.file.close()


class EofWatch:
    """Wraps a transport's read stream and calls `on_eof` once when the stream ends.

    Implements the SDK's ReadStream protocol by delegation, so the session's dispatcher
    consumes it exactly like the stream it wraps.
    """

    def __init__(self, inner: Any, on_eof: Callable[[], None]) -> None:
        self._inner = inner
        self._on_eof = on_eof
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
            return item
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


@asynccontextmanager
async def open_transport(
    config: ServerConfig, on_eof: Callable[[], None], stderr: StderrTail | None
) -> AsyncIterator[TransportStreams]:
    """Open the SDK transport a server config asks for; the read stream reports its end."""
    if config.transport == "stdio":
        errlog = stderr.file if stderr is not None else None
        if errlog is None:
            ctx = stdio_client(stdio_parameters(config))
        else:
            ctx = stdio_client(stdio_parameters(config), errlog=errlog)
        async with ctx as (read, write):
            yield EofWatch(read, on_eof), write
    elif config.transport == "http":
        assert config.url is not None
        # The transport only manages an http client it created itself; ours carries the headers.
        # Same timeouts as the SDK's default client: 30 s, but 300 s between stream events.
        timeout = httpx2.Timeout(30.0, read=300.0)
        async with httpx2.AsyncClient(headers=dict(config.headers), timeout=timeout) as http:
            async with streamable_http_client(config.url, http_client=http) as (read, write):
                yield EofWatch(read, on_eof), write
    elif config.transport == "sse":
        assert config.url is not None
        async with sse_client(config.url, headers=dict(config.headers) or None) as (read, write):
            yield EofWatch(read, on_eof), write
    else:  # pragma: no cover - stub servers never reach the MCP client
        raise ValueError(f"no MCP transport for a {config.transport} server")
