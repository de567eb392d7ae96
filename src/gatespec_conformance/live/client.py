"""Layer 2's connection to the implementation under test (IUT), through the official mcp client.

The IUT is either started by the kit over stdio (a command, in its own process group, stderr
kept for the report) or reached over Streamable HTTP at a URL. Every tools/call is bounded in
time and never raises: a `CallResult` says what came back (a result, a JSON-RPC error, a
timeout, or the connection's end). A connection that ended makes the next call raise
`IUTGone`, so the runner can stop or restart instead of timing out call after call.

`CallLog` reads the fixture upstream's call log, the evidence of what reached upstream.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import CONNECTION_CLOSED
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from gatespec_conformance.live import readings

__all__ = ["CallLog", "CallResult", "IUTGone", "LiveSession", "Target"]

PROTOCOLS: Final = ("auto", "legacy", *MODERN_PROTOCOL_VERSIONS)
_LIST_FIELDS: Final = {
    "tools/list": "tools",
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
}
_GRACE: Final = 5.0  # seconds past a call's own timeout before the kit gives up on it
_STDERR_TAIL: Final = 2000


class IUTGone(Exception):
    """The connection to the IUT ended; nothing more can be asked of it."""


@dataclass(frozen=True)
class Target:
    """How to reach the IUT: a stdio command (started by the kit) or a Streamable HTTP URL."""

    command: tuple[str, ...] = ()
    url: str | None = None
    env: dict[str, str] = field(default_factory=dict)  # added to the kit's environment
    protocol: str = "auto"  # Client(mode=...): auto, legacy or a 2026-era version
    cwd: str | None = None
    token: str | None = None  # a bearer token for the URL (Authorization header)

    def describe(self) -> str:
        return self.url or " ".join(self.command)


@dataclass(frozen=True)
class CallResult:
    """One tools/call as the client saw it: exactly one of result and error is set."""

    name: str
    arguments: Any
    result: types.CallToolResult | None
    error: str | None  # JSON-RPC error, timeout or lost connection, worded
    duration: float
    rpc_code: int | None = None  # the JSON-RPC error code, when the call got one

    @property
    def is_error(self) -> bool:
        return self.result is None or self.result.is_error is True

    @property
    def texts(self) -> list[str]:
        """The text parts of the content, in order."""
        if self.result is None:
            return []
        return [c.text for c in self.result.content if isinstance(c, types.TextContent)]

    @property
    def text(self) -> str:
        """The text content, text parts joined by newlines (what a client shows a model)."""
        return "\n".join(self.texts)

    @property
    def structured(self) -> Any:
        return None if self.result is None else self.result.structured_content

    def document(self) -> tuple[Any, str]:
        """(the meta-tool's answer as JSON, where it was found): structuredContent when there
        is any ("structured"), else the text content parsed as JSON ("text"), else (None, "").
        The seeds fix the answer, not its carrier: both are read (readings.answer)."""
        return readings.answer(self)

    @property
    def rpc_error(self) -> bool:
        """The call was refused at the protocol level (a JSON-RPC error, not a timeout or a
        lost connection)."""
        return (
            self.result is None and self.rpc_code is not None and self.rpc_code != CONNECTION_CLOSED
        )

    def shown(self) -> dict[str, Any]:
        """A compact account of what came back, for a report's "got"."""
        if self.result is None:
            return {"protocol_error": self.error}
        out: dict[str, Any] = {"isError": bool(self.result.is_error)}
        text = self.text
        out["text"] = text if len(text) <= 600 else text[:597] + "..."
        if self.structured is not None:
            out["structuredContent"] = self.structured
        return out


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "payload"
    return f"{where}: {err['msg']}"


class LiveSession:
    """One client connection to the IUT (an async context manager).

    One runner task owns the whole mcp.Client context (anyio requires the task that entered
    a context to exit it, and the client's own task group would otherwise cancel whatever
    task entered it when the IUT dies). Requests are sent from the caller's task."""

    def __init__(self, target: Target, *, connect_timeout: float = 60.0) -> None:
        self.target = target
        self.connect_timeout = connect_timeout
        self.client: Client | None = None
        self.gone: str | None = None  # why the connection ended
        self._errlog: Any = None
        self._changed = anyio.Event()
        # What the IUT sent on its own: log messages, and list_changed per list.
        self.logs: list[types.LoggingMessageNotificationParams] = []
        self.changed: dict[str, int] = {"tools": 0, "prompts": 0, "resources": 0}
        self._tg: Any = None
        self._ready = anyio.Event()
        self._stop = anyio.Event()
        self._finished = anyio.Event()
        self._failure: BaseException | None = None

    # ------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> LiveSession:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._run)
        await self._ready.wait()  # the handshake is bounded by the client's read timeout
        if self.client is None:
            await self._shutdown()  # the IUT has exited: its stderr is complete
            tail = self.stderr_tail()
            self._close_log()
            raise IUTGone(
                f"cannot connect to {self.target.describe()}: {_worded(self._failure)}"
                + (f"; its stderr ends: {tail}" if tail else "")
            )
        return self

    async def _run(self) -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                client = await stack.enter_async_context(await self._client(stack))
                self.client = client
                self._ready.set()
                await self._stop.wait()
        except Exception as exc:  # the IUT died or the handshake failed: never propagate
            self._failure = exc
            if self.client is not None and self.gone is None:
                self._lost(f"the connection ended: {_worded(exc)}")
        finally:
            self._ready.set()
            self._finished.set()

    async def __aexit__(self, *exc: object) -> None:
        await self._shutdown()
        self._close_log()

    async def _shutdown(self) -> None:
        self._stop.set()
        with anyio.move_on_after(15, shield=True):
            await self._finished.wait()
        if self._tg is not None:  # exited directly: a wrapping scope would break its nesting
            self._tg.cancel_scope.cancel()
            await self._tg.__aexit__(None, None, None)
            self._tg = None

    def _close_log(self) -> None:
        if self._errlog is not None:
            self._errlog.close()
            self._errlog = None

    async def _client(self, stack: contextlib.AsyncExitStack) -> Client:
        options: dict[str, Any] = {
            "mode": self.target.protocol,
            "cache": None,
            "message_handler": self._message,
            "read_timeout_seconds": self.connect_timeout,
            # 2026-07-28 delivers log messages only to requests that ask for them
            "log_level": "debug",
        }
        if self.target.url is not None and self.target.token is not None:
            headers = {"Authorization": f"Bearer {self.target.token}"}
            http = await stack.enter_async_context(
                httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0))
            )
            return Client(streamable_http_client(self.target.url, http_client=http), **options)
        if self.target.url is not None:
            return Client(self.target.url, **options)
        command, *args = self.target.command
        params = StdioServerParameters(
            command=command,
            args=args,
            env={**os.environ, **self.target.env},
            cwd=self.target.cwd,
        )
        # stderr goes to a file (the SDK needs a real descriptor) whose tail explains a crash.
        self._errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        transport = stdio_client(params, errlog=self._errlog)
        return Client(transport, **options)

    def stderr_tail(self) -> str:
        if self._errlog is None:
            return ""
        try:
            self._errlog.flush()
            self._errlog.seek(0)
            text = self._errlog.read()
        except (OSError, ValueError):
            return ""
        return " ".join(text[-_STDERR_TAIL:].split())

    @property
    def protocol_version(self) -> str:
        return self.client.protocol_version if self.client is not None else ""

    @property
    def modern(self) -> bool:
        return self.protocol_version in MODERN_PROTOCOL_VERSIONS

    async def _message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._changed.set()
        kinds: dict[type, str] = {
            types.ToolListChangedNotification: "tools",
            types.PromptListChangedNotification: "prompts",
            types.ResourceListChangedNotification: "resources",
        }
        kind = kinds.get(type(message))
        if kind is not None:
            self.changed[kind] += 1
        if isinstance(message, types.LoggingMessageNotification):
            self.logs.append(message.params)

    def _live(self) -> Client:
        if self.gone is not None or self.client is None:
            raise IUTGone(self.gone or "not connected")
        return self.client

    def _lost(self, why: str) -> None:
        tail = self.stderr_tail()
        self.gone = why + (f"; its stderr ends: {tail}" if tail else "")

    # ------------------------------------------------------------ requests

    async def list_tools(self, timeout: float = 30.0) -> list[types.Tool]:
        """Every tools/list page (raises IUTGone when the connection is lost)."""
        client = self._live()
        tools: list[types.Tool] = []
        cursor: str | None = None
        try:
            with anyio.fail_after(timeout + _GRACE):
                for _ in range(1000):
                    page = await client.list_tools(cursor=cursor, cache_mode="refresh")
                    tools.extend(page.tools)
                    cursor = page.next_cursor
                    if not cursor:
                        return tools
        except TimeoutError:
            raise IUTGone(f"tools/list got no answer within {timeout:g}s") from None
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self._lost(f"the connection closed during tools/list ({exc})")
                raise IUTGone(self.gone or "") from None
            raise
        raise IUTGone("tools/list pages never end (1000 pages)")

    async def list_all(self, method: str, timeout: float = 30.0) -> list[dict[str, Any]]:
        """Every entry of a list (tools, prompts, resources, templates) in wire form,
        following nextCursor (IUTGone when the connection is lost or the pages never end;
        MCPError when the IUT refuses, ValidationError for a malformed page)."""
        entries: list[dict[str, Any]] = []
        cursor: str | None = None
        try:
            with anyio.fail_after(timeout + _GRACE):
                for _ in range(1000):
                    page = await self.page(method, cursor)
                    entries += page[_LIST_FIELDS[method]]
                    cursor = page.get("nextCursor")
                    if not cursor:
                        return entries
        except TimeoutError:
            raise IUTGone(f"{method} got no answer within {timeout:g}s") from None
        raise IUTGone(f"{method} pages never end (1000 pages)")

    async def page(self, method: str, cursor: str | None = None) -> dict[str, Any]:
        """One page of a list in wire form (the official client validates it)."""
        client = self._live()
        fetch = {
            "tools/list": client.list_tools,
            "prompts/list": client.list_prompts,
            "resources/list": client.list_resources,
            "resources/templates/list": client.list_resource_templates,
        }[method]
        try:
            result = await fetch(cursor=cursor, cache_mode="refresh")
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self._lost(f"the connection closed during {method}")
                raise IUTGone(self.gone or "") from None
            raise
        page: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        page.setdefault(_LIST_FIELDS[method], [])
        return page

    async def call(self, name: str, arguments: Any, timeout: float) -> CallResult:
        """One tools/call, bounded by `timeout` seconds; never raises except IUTGone."""
        client = self._live()
        start = time.monotonic()
        result: types.CallToolResult | None = None
        error: str | None = None
        rpc_code: int | None = None
        try:
            with anyio.fail_after(timeout + _GRACE):
                result = await client.call_tool(name, arguments, read_timeout_seconds=timeout)
        except TimeoutError:
            error = f"no answer within {timeout:g}s"
        except MCPError as exc:
            error = f"JSON-RPC error {exc.code}: {exc}"
            rpc_code = exc.code
            if exc.code == CONNECTION_CLOSED:
                self._lost(f"the connection closed during tools/call {name}")
        except ValidationError as exc:
            error = f"the result is not a valid CallToolResult: {_first_error(exc)}"
        except Exception as exc:  # a transport failure: the connection is unusable
            error = _worded(exc)
            self._lost(f"tools/call {name} failed: {error}")
        return CallResult(name, arguments, result, error, time.monotonic() - start, rpc_code)

    async def expect_list_changed(
        self, trigger: Callable[[], Awaitable[CallResult]], timeout: float
    ) -> tuple[CallResult, str | None]:
        """Run `trigger` and wait for a tools/list change announcement, in this connection's
        era: a notifications/tools/list_changed (handshake era) or a subscriptions/listen
        event (2026-07-28). (trigger's result, None) or (..., why nothing arrived)."""
        client = self._live()
        if self.modern:
            call: CallResult | None = None
            try:
                async with client.listen(tools_list_changed=True) as subscription:
                    call = await trigger()
                    try:
                        with anyio.fail_after(timeout):
                            await subscription.__anext__()
                    except (TimeoutError, StopAsyncIteration):
                        return call, f"no subscriptions/listen event within {timeout:g}s"
                    return call, None
            except MCPError as exc:  # the IUT refused or dropped the subscription
                return call or await trigger(), f"subscriptions/listen failed: {exc}"
        self._changed = anyio.Event()
        sent = await trigger()
        with anyio.move_on_after(timeout):
            await self._changed.wait()
            return sent, None
        return sent, f"no notifications/tools/list_changed within {timeout:g}s"


def _worded(exc: BaseException | None) -> str:
    if exc is None:
        return "no reason given"
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text != type(exc).__name__ else text


class CallLog:
    """The fixture upstream's call log: one JSON object per line, appended per tools/call."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def entries(self) -> list[dict[str, Any]]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        out = []
        for line in text.splitlines():
            try:
                value = json.loads(line)
            except ValueError:
                continue  # a line being written right now
            if isinstance(value, dict):
                out.append(value)
        return out

    def mark(self) -> int:
        """A position: `since(mark)` gives the calls logged after it."""
        return len(self.entries())

    def since(self, mark: int) -> list[dict[str, Any]]:
        return self.entries()[mark:]
