"""mcpServers config and one persistent official-SDK client per upstream server."""

from __future__ import annotations

import copy
import json
import os
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage
from mcp_types.methods import validate_server_result
from mcp_types.version import SUPPORTED_PROTOCOL_VERSIONS

CALL_TIMEOUT_S = 120.0
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def log(message: str) -> None:
    print(f"independent_gateway: {message}", file=sys.stderr, flush=True)


def _expand(value: str) -> str:
    """`${VAR}` references are filled from the environment, as several MCP hosts do."""
    return _ENV_REF.sub(lambda m: os.environ.get(m.group(1), ""), value)


def load_config(path: str) -> dict[str, Any]:
    """Return {server name: target} for the stdio and Streamable HTTP entries of the file."""
    document = json.loads(Path(path).read_text(encoding="utf-8"))
    servers = document.get("mcpServers") if isinstance(document, dict) else None
    if not isinstance(servers, dict):
        raise ValueError(f"{path}: no mcpServers object")
    targets: dict[str, Any] = {}
    for name, entry in sorted(servers.items()):
        if not isinstance(entry, dict):
            raise ValueError(f"{path}: mcpServers.{name} is not an object")
        if "command" in entry:
            env = {k: _expand(str(v)) for k, v in (entry.get("env") or {}).items()}
            targets[name] = StdioServerParameters(
                command=_expand(str(entry["command"])),
                args=[_expand(str(a)) for a in entry.get("args") or []],
                env={**os.environ, **env},
                cwd=entry.get("cwd"),
            )
        elif isinstance(entry.get("url"), str):
            targets[name] = _expand(entry["url"])
        else:
            raise ValueError(f"{path}: mcpServers.{name} has neither command nor url")
    return targets


class _Watch:
    """Outbound tools/list request ids, and the raw tools their answers carried.

    The raw dicts keep what the SDK models drop (e.g. annotations.costHint, seed 002).
    """

    def __init__(self, server: str) -> None:
        self.server = server
        self.ids: set[Any] = set()
        self.listed: list[dict[str, Any]] = []


class _StreamEnd:
    """Wraps one end of the SDK's transport streams; everything not overridden passes through."""

    def __init__(self, inner: Any, watch: _Watch) -> None:
        self._inner, self._watch = inner, watch

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def __aenter__(self) -> Any:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)


class _TrackingWrite(_StreamEnd):
    async def send(self, item: SessionMessage) -> None:
        message = item.message
        if isinstance(message, types.JSONRPCRequest) and message.method == "tools/list":
            self._watch.ids.add(message.id)
        await self._inner.send(item)


class _FilteringRead(_StreamEnd):
    """Drops, with a log line, listed tools that are not valid MCP Tool definitions.

    The SDK validates a tools/list result as a whole, so one malformed tool would otherwise
    make the whole upstream unusable.
    """

    async def receive(self) -> Any:
        item = await self._inner.receive()
        message = getattr(item, "message", None)
        if isinstance(message, types.JSONRPCResponse) and message.id in self._watch.ids:
            self._watch.ids.discard(message.id)
            tools = message.result.get("tools")
            if isinstance(tools, list):
                kept = [t for t in tools if self._valid(message.result, t)]
                message.result["tools"] = kept
                self._watch.listed += copy.deepcopy(kept)
        return item

    def _valid(self, result: dict[str, Any], tool: Any) -> bool:
        """Valid under some protocol version (the session has not told us which): a result
        may carry fields of one version that another's schema refuses."""
        problem = ""
        for version in SUPPORTED_PROTOCOL_VERSIONS:
            try:
                validate_server_result("tools/list", version, {**result, "tools": [tool]})
                return True
            except KeyError:
                continue
            except ValueError as exc:
                problem = problem or str(exc).splitlines()[0]
        name = tool.get("name") if isinstance(tool, dict) else None
        log(
            f"upstream {self._watch.server!r}: tool {name!r} is not a valid MCP tool, left out: {problem}"
        )
        return False

    def __aiter__(self) -> _FilteringRead:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None


@asynccontextmanager
async def _transport(target: Any, watch: _Watch) -> AsyncIterator[Any]:
    opened = stdio_client(target) if isinstance(target, StdioServerParameters) else None
    async with opened or streamable_http_client(target) as (read, write):
        yield _FilteringRead(read, watch), _TrackingWrite(write, watch)


@dataclass
class Upstream:
    """Holds one connected client for the process lifetime, inside its own task."""

    name: str
    target: Any
    tools: list[dict[str, Any]] = field(default_factory=list)
    client: Client | None = None
    failure: str | None = None
    server_name: str | None = None  # what the upstream calls itself (serverInfo.name)

    async def serve(self, ready: anyio.Event, stop: anyio.Event) -> None:
        # The client context is entered and left in this one task, as anyio requires.
        watch = _Watch(self.name)
        try:
            async with Client(
                _transport(self.target, watch),
                mode="auto",
                cache=None,
                read_timeout_seconds=CALL_TIMEOUT_S,
            ) as client:
                self.tools = await self._list_tools(client, watch)
                self.server_name = client.server_info.name if client.server_info else None
                self.client = client
                ready.set()
                await stop.wait()
        except Exception as exc:  # a dead upstream must not take the others down
            self.failure = f"{type(exc).__name__}: {exc}"
            log(f"upstream {self.name!r} unavailable: {self.failure}")
        finally:
            self.client = None
            ready.set()

    @staticmethod
    async def _list_tools(client: Client, watch: _Watch) -> list[dict[str, Any]]:
        """Page through tools/list with the SDK; answer with the raw tools it carried."""
        watch.listed.clear()
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor)
            cursor = page.next_cursor
            if not cursor:
                return list(watch.listed)

    async def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        if self.client is None:
            raise ConnectionError(
                f"upstream {self.name!r} is not connected ({self.failure or 'closed'})"
            )
        result = await self.client.call_tool(tool, args)
        return result.model_dump(by_alias=True, exclude_none=True, mode="json")
