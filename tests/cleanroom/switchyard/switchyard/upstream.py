"""Connections to upstream MCP servers.

Each `Upstream` owns one supervised `mcp.Client` running in its own task:
connect (bounded by `connectTimeout`), serve requests, and on failure mark
itself down and reconnect with exponential backoff.  A broken or slow
upstream therefore never blocks the gateway or the other upstreams: callers
get `UpstreamUnavailable` / `UpstreamTimeout`, which the profiles turn into
MCP errors.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any, TypeVar

import anyio
import anyio.abc
import mcp.types as types
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from .config import Config, UpstreamSpec

logger = logging.getLogger(__name__)

T = TypeVar("T")

MAX_PAGES = 100
MAX_BACKOFF = 60.0

# Upstream notification method -> registry event name.
_EVENTS = {
    "notifications/tools/list_changed": "tools_changed",
    "notifications/prompts/list_changed": "prompts_changed",
    "notifications/resources/list_changed": "resources_changed",
}

EventCallback = Callable[[str, str], Awaitable[None]]


class UpstreamError(Exception):
    def __init__(self, server: str, message: str):
        super().__init__(message)
        self.server = server
        self.message = message


class UpstreamUnavailable(UpstreamError):
    """The upstream is not connected (seed 004: "Server {server_name} unavailable")."""

    def __init__(self, server: str, reason: str = ""):
        super().__init__(server, f"Server {server} unavailable")
        self.reason = reason


class UpstreamTimeout(UpstreamError):
    """The request exceeded the configured timeout and was cancelled (seed 001)."""

    def __init__(self, server: str, seconds: float):
        super().__init__(server, f"Timeout: request to server {server} exceeded {seconds:g}s")
        self.seconds = seconds


class UpstreamProtocolError(UpstreamError):
    """The upstream answered with something that is not valid MCP."""


class Upstream:
    def __init__(self, spec: UpstreamSpec, config: Config, on_event: EventCallback):
        self.spec = spec
        self.key = spec.key
        self.timeout = spec.timeout or config.default_timeout
        self.connect_timeout = config.connect_timeout
        self.backoff = config.reconnect_backoff
        self._on_event = on_event
        self.status = "connecting"  # "connecting" | "ready" | "down"
        self.last_error: str | None = None
        self._client: Client | None = None
        self._status_changed = anyio.Event()
        self._dead = anyio.Event()
        self._wake = anyio.Event()
        self._closing = False

    # ----------------------------------------------------------------- lifecycle
    def _set_status(self, status: str) -> None:
        self.status = status
        self._status_changed.set()
        self._status_changed = anyio.Event()

    def _make_client(self, stack: AsyncExitStack) -> Client:
        spec = self.spec
        common: dict[str, Any] = dict(mode=spec.protocol, cache=None, message_handler=self._on_message)
        if spec.command is not None:
            params = StdioServerParameters(command=spec.command, args=list(spec.args), env=spec.env, cwd=spec.cwd)
            return Client(params, **common)
        assert spec.url is not None
        if spec.headers:
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            http_client = create_mcp_http_client(headers=dict(spec.headers))
            stack.push_async_callback(http_client.aclose)
            return Client(streamable_http_client(spec.url, http_client=http_client), **common)
        return Client(spec.url, **common)

    async def run(self) -> None:
        """Supervisor loop; runs until cancelled."""
        delay = self.backoff
        previous_error: str | None = None
        while not self._closing:
            self._dead = anyio.Event()
            was_ready = False
            self.last_error = None
            try:
                # The cancel scope must enclose the client's whole lifetime (the
                # client owns task groups); only its deadline is lifted once connected.
                with anyio.CancelScope(deadline=anyio.current_time() + self.connect_timeout) as scope:
                    async with AsyncExitStack() as stack:
                        client = await stack.enter_async_context(self._make_client(stack))
                        scope.deadline = float("inf")
                        self._client = client
                        was_ready = True
                        delay = self.backoff
                        self._set_status("ready")
                        logger.info("upstream %s connected", self.key)
                        await self._on_event(self.key, "connected")
                        await self._dead.wait()
                if scope.cancelled_caught and not was_ready:
                    self.last_error = f"connect timed out after {self.connect_timeout:g}s"
            except Exception as exc:  # noqa: BLE001 - any failure just marks the upstream down
                self.last_error = _describe(exc)
                logger.debug("upstream %s failure", self.key, exc_info=exc)
            finally:
                self._client = None
            if self.last_error and self.last_error != previous_error:
                logger.warning("upstream %s down: %s", self.key, self.last_error)
            elif self.last_error:
                logger.debug("upstream %s still down: %s", self.key, self.last_error)
            previous_error = self.last_error
            self._set_status("down")
            if was_ready:
                await self._on_event(self.key, "disconnected")
            # Back off, but let a request wake us early (never sooner than `backoff`).
            await anyio.sleep(self.backoff)
            with anyio.move_on_after(max(0.0, delay - self.backoff)):
                await self._wake.wait()
            self._wake = anyio.Event()
            delay = min(delay * 2, MAX_BACKOFF)
            self._set_status("connecting")

    def mark_dead(self, reason: str) -> None:
        if self.status == "ready":
            self.last_error = reason
            self._dead.set()

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            logger.debug("upstream %s transport error: %r", self.key, message)
            return
        event = _EVENTS.get(getattr(message, "method", ""))
        if event is not None:
            await self._on_event(self.key, event)

    # ------------------------------------------------------------------ requests
    async def _acquire(self, timeout: float) -> Client:
        if self.status == "down":
            self._wake.set()
            raise UpstreamUnavailable(self.key, self.last_error or "not connected")
        with anyio.move_on_after(timeout):
            while self.status == "connecting":
                await self._status_changed.wait()
        client = self._client
        if self.status != "ready" or client is None:
            raise UpstreamUnavailable(self.key, self.last_error or "not connected")
        return client

    async def request(self, fn: Callable[[Client], Awaitable[T]], timeout: float | None = None) -> T:
        """Run `fn(client)` against this upstream under the request timeout.

        Upstream JSON-RPC errors propagate as `MCPError` unchanged (seed 001,
        "Propagate errors").  On timeout the in-flight request is cancelled
        (the SDK sends `notifications/cancelled` upstream) and
        `UpstreamTimeout` is raised (seed 001, "Enforce timeout").
        """
        seconds = self.timeout if timeout is None else timeout
        client = await self._acquire(seconds)
        with anyio.move_on_after(seconds):
            try:
                return await fn(client)
            except MCPError as exc:
                if exc.code == types.CONNECTION_CLOSED:
                    self.mark_dead("connection closed")
                    raise UpstreamUnavailable(self.key, "connection closed") from exc
                raise
            except ValidationError as exc:
                raise UpstreamProtocolError(self.key, f"server {self.key} sent an invalid result: {exc}") from exc
            except Exception as exc:  # noqa: BLE001 - transport failure (closed pipe, HTTP error, ...)
                self.mark_dead(_describe(exc))
                raise UpstreamUnavailable(self.key, _describe(exc)) from exc
        raise UpstreamTimeout(self.key, seconds)

    async def list_all(self, kind: str, timeout: float | None = None) -> list[Any]:
        """Fetch every page of tools/prompts/resources/templates (seed 001: "handling pagination")."""

        async def fetch(client: Client) -> list[Any]:
            items: list[Any] = []
            cursor: str | None = None
            for _ in range(MAX_PAGES):
                if kind == "tools":
                    page = await client.list_tools(cursor=cursor)
                    items.extend(page.tools)
                elif kind == "prompts":
                    page = await client.list_prompts(cursor=cursor)
                    items.extend(page.prompts)
                elif kind == "resources":
                    page = await client.list_resources(cursor=cursor)
                    items.extend(page.resources)
                elif kind == "resource_templates":
                    page = await client.list_resource_templates(cursor=cursor)
                    items.extend(page.resource_templates)
                else:  # pragma: no cover - programming error
                    raise ValueError(kind)
                cursor = page.next_cursor
                if not cursor:
                    break
            return items

        return await self.request(fetch, timeout)

    def supports(self, kind: str) -> bool:
        """Whether the upstream advertised the capability behind `kind`."""
        client = self._client
        if client is None:
            return True
        try:
            caps = client.server_capabilities
        except Exception:  # noqa: BLE001
            return True
        if kind == "tools":
            return caps.tools is not None
        if kind == "prompts":
            return caps.prompts is not None
        return caps.resources is not None


def _describe(exc: BaseException) -> str:
    """Innermost message of a (possibly grouped) exception."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"


class UpstreamPool:
    """All configured upstreams, supervised in one task group."""

    def __init__(self, config: Config):
        self.config = config
        self._callbacks: list[EventCallback] = []
        self.upstreams: dict[str, Upstream] = {
            key: Upstream(spec, config, self._dispatch) for key, spec in config.servers.items()
        }
        self._tg: anyio.abc.TaskGroup | None = None

    def subscribe(self, callback: EventCallback) -> None:
        self._callbacks.append(callback)

    async def _dispatch(self, server: str, event: str) -> None:
        for cb in list(self._callbacks):
            try:
                await cb(server, event)
            except Exception:  # noqa: BLE001
                logger.exception("event callback failed for %s/%s", server, event)

    def get(self, key: str) -> Upstream | None:
        return self.upstreams.get(key)

    def keys(self) -> list[str]:
        return list(self.upstreams)

    async def __aenter__(self) -> UpstreamPool:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        for upstream in self.upstreams.values():
            self._tg.start_soon(upstream.run, name=f"upstream:{upstream.key}")
        return self

    async def __aexit__(self, *exc: Any) -> None:
        assert self._tg is not None
        for upstream in self.upstreams.values():
            upstream._closing = True  # noqa: SLF001
        self._tg.cancel_scope.cancel()
        await self._tg.__aexit__(None, None, None)


def log_to_stderr(level: int = logging.INFO) -> None:
    logging.basicConfig(level=level, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
