"""The aggregate profile's plugin chain (seed 004 "Plugin Interactions", AM-PLUGIN-CHAIN).

A plugin is middleware over tools: it sees every listed tool and every tools/call by the
upstream's clean name, with the routing context (server key, session, method) as a separate
value. It may hide or rename listed tools, change a call's name or arguments, or refuse a call
by raising a GatewayError; it can never change the server a call goes to, which the boundary
parsed once (routing.RoutingContext is frozen and routing never looks at names again).

Shipped plugins: `ToolFilter` (allow/deny globs per server) and `AuditLog` (one JSON line per
call: time, session, server, tool, duration, outcome; argument values only when configured).
"""

from __future__ import annotations

import fnmatch
import json
import logging
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gatespec.config import PluginConfig
from gatespec.profiles.aggregate.routing import RoutingContext
from gatespec_surface.errors import ErrorCode, GatewayError

__all__ = [
    "AuditLog",
    "CallOutcome",
    "Chain",
    "Observed",
    "Plugin",
    "ToolCall",
    "ToolFilter",
    "build_chain",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ToolCall:
    """A tools/call as plugins see it: the clean tool name and the arguments."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CallOutcome:
    """How a call ended: "ok", "tool_error" (an isError result) or the gatespec error code."""

    outcome: str
    seconds: float


class Plugin:
    """Middleware over tools; every hook is optional (the defaults change nothing)."""

    name = "plugin"

    def tools(self, server: str, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """One server's tools (clean names, wire form), before they are namespaced."""
        return tools

    async def before_call(self, context: RoutingContext, call: ToolCall) -> ToolCall:
        """The call about to go upstream; raise GatewayError to refuse it."""
        return call

    async def after_call(
        self, context: RoutingContext, call: ToolCall, outcome: CallOutcome
    ) -> None:
        """The call has ended (or was refused)."""


class Chain:
    """The configured plugins, in order (`after_call` in reverse, like nested middleware)."""

    def __init__(self, plugins: Sequence[Plugin] = ()) -> None:
        self.plugins = tuple(plugins)

    def tools(self, server: str, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for plugin in self.plugins:
            tools = plugin.tools(server, tools)
        return tools

    async def before_call(self, context: RoutingContext, call: ToolCall) -> ToolCall:
        for plugin in self.plugins:
            call = await plugin.before_call(context, call)
        return call

    async def after_call(
        self, context: RoutingContext, call: ToolCall, outcome: CallOutcome
    ) -> None:
        for plugin in reversed(self.plugins):
            try:
                await plugin.after_call(context, call, outcome)
            except Exception:  # an observer's failure must not fail the call it observed
                logger.exception("plugin %s failed after a call", plugin.name)

    @asynccontextmanager
    async def observed(self, context: RoutingContext, call: ToolCall) -> AsyncIterator[Observed]:
        """A call made in the block, told to after_call however it ends: "ok" or
        "tool_error" once the block reports the upstream's result (`Observed.ended`), the
        gatespec error code it raised, or "cancelled". The block sets `Observed.call` to what
        before_call made of the call."""
        seen = Observed(call)
        started = time.monotonic()
        try:
            yield seen
        except GatewayError as exc:
            seen.outcome = exc.code.value
            raise
        finally:
            outcome = CallOutcome(seen.outcome, time.monotonic() - started)
            await self.after_call(context, seen.call, outcome)


@dataclass
class Observed:
    """A call going through the chain (Chain.observed), and how it ended so far."""

    call: ToolCall
    outcome: str = "cancelled"

    def ended(self, result: dict[str, Any]) -> dict[str, Any]:
        """The upstream answered `result` (an isError result is the tool's own failure)."""
        self.outcome = "tool_error" if result.get("isError") else "ok"
        return result


def _matches(name: str, globs: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, g) for g in globs)


class ToolFilter(Plugin):
    """Allow and deny globs over clean tool names, per server key. A server with an allow
    list offers only the tools it matches; deny removes what it matches. A hidden tool is
    neither listed nor callable: a call answers TOOL_NOT_FOUND, as for a tool that does not
    exist (saying "forbidden" would reveal that it does)."""

    name = "tool_filter"

    def __init__(self, rules: Mapping[str, tuple[Sequence[str], Sequence[str]]]) -> None:
        self.rules = {server: (tuple(a), tuple(d)) for server, (a, d) in rules.items()}

    def allows(self, server: str, tool: str) -> bool:
        rule = self.rules.get(server)
        if rule is None:
            return True
        allow, deny = rule
        return (not allow or _matches(tool, allow)) and not _matches(tool, deny)

    def tools(self, server: str, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [t for t in tools if self.allows(server, str(t.get("name")))]

    async def before_call(self, context: RoutingContext, call: ToolCall) -> ToolCall:
        if not self.allows(context.server, call.name):
            raise GatewayError(
                ErrorCode.TOOL_NOT_FOUND,
                f"Tool not found: server {context.server} offers no tool {call.name!r}",
                context.asked or f"{context.server}__{call.name}",
                {"server": context.server},
            )
        return call


class AuditLog(Plugin):
    """One JSON line per call, appended to `path`: time (UTC, ISO 8601), session, server,
    tool, duration_ms, outcome, and arguments only when `arguments` is set."""

    name = "audit_log"

    def __init__(self, path: Path, arguments: bool = False) -> None:
        self.path = path
        self.arguments = arguments

    async def after_call(
        self, context: RoutingContext, call: ToolCall, outcome: CallOutcome
    ) -> None:
        entry: dict[str, Any] = {
            "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "session": context.session,
            "server": context.server,
            "tool": call.name,
            "duration_ms": round(outcome.seconds * 1000, 3),
            "outcome": outcome.outcome,
        }
        if self.arguments:
            entry["arguments"] = call.arguments
        line = json.dumps(entry, ensure_ascii=False, default=str) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as out:  # one write per line, then closed
            out.write(line)


def build_chain(configs: Sequence[PluginConfig], server_keys: Mapping[str, str]) -> Chain:
    """The chain gateway.plugins configures. `server_keys` maps config keys to server keys
    (the filter's rules name config keys, as the user wrote them)."""
    plugins: list[Plugin] = []
    for config in configs:
        if config.type == "tool_filter":
            rules = {server_keys.get(k, k): rule for k, rule in config.servers.items()}
            plugins.append(ToolFilter(rules))
        elif config.type == "audit_log" and config.path is not None:
            plugins.append(AuditLog(config.path, config.arguments))
    return Chain(plugins)
