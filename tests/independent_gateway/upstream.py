"""mcpServers config and one persistent official-SDK client per upstream server."""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

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


@dataclass
class Upstream:
    """Holds one connected client for the process lifetime, inside its own task."""

    name: str
    target: Any
    tools: list[dict[str, Any]] = field(default_factory=list)
    client: Client | None = None
    failure: str | None = None

    async def serve(self, ready: anyio.Event, stop: anyio.Event) -> None:
        # The client context is entered and left in this one task, as anyio requires.
        try:
            async with Client(
                self.target, mode="auto", cache=None, read_timeout_seconds=CALL_TIMEOUT_S
            ) as client:
                self.tools = await self._list_tools(client)
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
    async def _list_tools(client: Client) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor)
            tools += [
                t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in page.tools
            ]
            cursor = page.next_cursor
            if not cursor:
                return tools

    async def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        if self.client is None:
            raise ConnectionError(
                f"upstream {self.name!r} is not connected ({self.failure or 'closed'})"
            )
        result = await self.client.call_tool(tool, args)
        return result.model_dump(by_alias=True, exclude_none=True, mode="json")
