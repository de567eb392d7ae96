"""Upstream MCP connections (stdio or Streamable HTTP) via the official SDK.

Each upstream lives in its own task (so the SDK's task groups and cancel
scopes are entered and exited in one task).  A crash, hang or garbage
response from an upstream surfaces as :class:`UpstreamFailure`; it never
propagates further.  A dead connection is re-established on next use.

Requests are sent *raw* (wire dicts in, wire dicts out) through the
session's dispatcher so that one malformed tool or result is handled per
item by tollbooth instead of failing the SDK's whole-response validation.
The incoming request's ``_meta`` is never forwarded.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import anyio
import anyio.abc
from mcp import Client, StdioServerParameters

from .runtime import UpstreamFailure

log = logging.getLogger("tollbooth.upstream")

MAX_LIST_PAGES = 100
RECONNECT_BACKOFF = 2.0  # seconds after a failed connect before trying again


def _target(key: str, spec: Mapping[str, Any]) -> StdioServerParameters | str:
    if isinstance(spec.get("url"), str):
        return spec["url"]
    command = spec.get("command")
    if not isinstance(command, str) or not command:
        raise ValueError(f"upstream {key!r}: needs 'command' (stdio) or 'url' (Streamable HTTP)")
    args = spec.get("args") or []
    env = spec.get("env") or None
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ValueError(f"upstream {key!r}: 'args' must be a list of strings")
    if env is not None and (not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values())):
        raise ValueError(f"upstream {key!r}: 'env' must map strings to strings")
    return StdioServerParameters(command=command, args=args, env=env, cwd=spec.get("cwd"))


class _Connection:
    def __init__(self, key: str, spec: Mapping[str, Any], connect_timeout: float) -> None:
        self.key = key
        self.spec = spec
        self.connect_timeout = connect_timeout
        self.client: Client | None = None
        self.error: str | None = None
        self._scope: anyio.CancelScope | None = None
        self._ready = anyio.Event()
        self._done = anyio.Event()
        self._closing = False

    async def run(self) -> None:
        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                target = _target(self.key, self.spec)
                async with Client(target, mode="legacy", cache=None) as client:
                    self.client = client
                    self._ready.set()
                    await anyio.sleep_forever()
        except Exception as exc:  # noqa: BLE001 - an upstream must never take us down
            self.error = f"{type(exc).__name__}: {exc}"
            log.error("upstream %r failed: %s", self.key, self.error)
        except BaseException as exc:  # ExceptionGroup from SDK task groups
            if isinstance(exc, anyio.get_cancelled_exc_class()):
                raise
            self.error = f"{type(exc).__name__}: {exc}"
            log.error("upstream %r failed: %s", self.key, self.error)
        finally:
            self.client = None
            self._ready.set()
            self._done.set()

    async def wait_ready(self) -> bool:
        with anyio.move_on_after(self.connect_timeout):
            await self._ready.wait()
        if self.client is None:
            if self.error is None:
                self.error = f"connect timed out after {self.connect_timeout}s"
            self.close()
            return False
        return True

    def close(self) -> None:
        self._closing = True
        if self._scope is not None:
            self._scope.cancel()

    @property
    def dead(self) -> bool:
        if self._closing or self._done.is_set() or self.client is None:
            return True
        # The SDK dispatcher flags a closed transport (e.g. the upstream exited
        # between calls); treat that as dead so the next request reconnects.
        dispatcher = getattr(getattr(self.client, "_session", None), "_dispatcher", None)
        if getattr(dispatcher, "_closed", False):
            self.close()
            return True
        return False


class UpstreamManager:
    """Owns all upstream connections for the server's lifetime."""

    def __init__(
        self,
        servers: Mapping[str, Mapping[str, Any]],
        tg: anyio.abc.TaskGroup,
        call_timeout: float = 60.0,
        connect_timeout: float = 30.0,
    ) -> None:
        self.specs = dict(servers)
        self.tg = tg
        self.call_timeout = call_timeout
        self.connect_timeout = connect_timeout
        self.conns: dict[str, _Connection] = {}
        self._locks = {k: anyio.Lock() for k in self.specs}
        self._failed_at: dict[str, float] = {}

    async def start_all(self) -> None:
        async with anyio.create_task_group() as tg:
            for key in self.specs:
                tg.start_soon(self._ensure, key)

    async def _ensure(self, key: str) -> _Connection | None:
        async with self._locks[key]:
            conn = self.conns.get(key)
            if conn is not None and not conn.dead:
                return conn
            failed = self._failed_at.get(key)
            if failed is not None and anyio.current_time() - failed < RECONNECT_BACKOFF:
                return None
            conn = _Connection(key, self.specs[key], self.connect_timeout)
            self.conns[key] = conn
            self.tg.start_soon(conn.run)
            if await conn.wait_ready():
                self._failed_at.pop(key, None)
                return conn
            self._failed_at[key] = anyio.current_time()
            return None

    async def _request(self, key: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if key not in self.specs:
            raise UpstreamFailure(f"unknown upstream {key!r}")
        conn = await self._ensure(key)
        if conn is None or conn.client is None:
            err = self.conns[key].error if key in self.conns else None
            raise UpstreamFailure(f"upstream {key!r} unavailable: {err}", upstream=key)
        session = conn.client.session
        try:
            with anyio.fail_after(self.call_timeout + 5):
                raw = await _raw_request(session, method, params, self.call_timeout)
        except TimeoutError:
            conn.close()
            raise UpstreamFailure(f"upstream {key!r} timed out on {method}", upstream=key, reason="timeout") from None
        except Exception as exc:  # noqa: BLE001 - MCPError, closed streams, ...
            code = getattr(exc, "code", None)
            msg = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            details: dict[str, Any] = {"upstream": key}
            if isinstance(code, int):
                details["jsonrpc_code"] = code
            if code == -32001:  # REQUEST_TIMEOUT: the SDK already sent a cancel
                details["reason"] = "timeout"
            elif code == -32000 or not isinstance(code, int):  # connection closed / transport broke
                details["reason"] = "connection_closed" if code == -32000 else "transport_error"
                conn.close()  # reconnect on next use
            else:
                details["reason"] = "jsonrpc_error"
            raise UpstreamFailure(f"upstream {key!r} {method} failed: {msg}", **details) from None
        if not isinstance(raw, dict):
            raise UpstreamFailure(f"upstream {key!r} returned a non-object result", upstream=key)
        return raw

    async def list_tools(self, server: str) -> list[Any]:
        tools: list[Any] = []
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            params: dict[str, Any] = {} if cursor is None else {"cursor": cursor}
            page = await self._request(server, "tools/list", params)
            batch = page.get("tools")
            if not isinstance(batch, list):
                raise UpstreamFailure(f"upstream {server!r} tools/list has no 'tools' array", upstream=server)
            tools.extend(batch)
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                break
        return tools

    async def call_tool(self, server: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        # Only name + arguments are forwarded: never the caller's _meta.
        return await self._request(server, "tools/call", {"name": name, "arguments": arguments})

    def close_all(self) -> None:
        for conn in self.conns.values():
            conn.close()


async def _raw_request(session: Any, method: str, params: dict[str, Any], timeout: float) -> dict[str, Any]:
    """Send one request through the SDK session without result-model
    validation (uses the session's dispatcher and per-era stamp)."""
    dispatcher = getattr(session, "_dispatcher", None)
    stamp = getattr(session, "_stamp", None)
    if dispatcher is None or stamp is None:  # pragma: no cover - SDK internals moved
        return await _typed_request(session, method, params, timeout)
    data: dict[str, Any] = {"method": method, "params": dict(params)}
    opts: dict[str, Any] = {"timeout": timeout}
    stamp(data, opts)
    return await dispatcher.send_raw_request(method, data.get("params"), opts)


async def _typed_request(session: Any, method: str, params: dict[str, Any], timeout: float) -> dict[str, Any]:
    if method == "tools/list":
        import mcp.types as t

        res = await session.list_tools(params=t.PaginatedRequestParams(cursor=params.get("cursor")))
    else:
        res = await session.call_tool(params["name"], params.get("arguments"), read_timeout_seconds=timeout)
    return res.model_dump(by_alias=True, mode="json", exclude_none=True)
