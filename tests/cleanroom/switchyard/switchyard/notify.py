"""Fan-out of `notifications/*/list_changed` to every connected client
(seed 001, "Event Notification": "`GatewayServer` sends
`notifications/tools/list_changed` to all connected clients").

Two delivery paths, because mcp 2.x serves two protocol eras:

* handshake-era clients (2024-11-05 .. 2025-11-25): the session is captured
  when the client sends `notifications/initialized`; notifications go out on
  the connection's standalone channel (stdio pipe, SSE stream, or the
  Streamable HTTP GET stream).
* 2026-07-28 clients: change notifications travel only on
  `subscriptions/listen` streams, so each server instance registers a
  `ListenHandler` on a shared `InMemorySubscriptionBus` and events are
  published there.
"""

from __future__ import annotations

import logging
from typing import Any

import mcp.types as types
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ToolsListChanged,
)

logger = logging.getLogger(__name__)

_EVENTS = {"tools": ToolsListChanged(), "prompts": PromptsListChanged(), "resources": ResourcesListChanged()}


class Notifier:
    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        self._sessions: dict[int, Any] = {}
        # One handler shared by every server instance (it only tracks streams).
        self.listen_handler = ListenHandler(self.bus)

    @property
    def session_count(self) -> int:
        return len(self._sessions)

    async def on_initialized(self, ctx: Any, params: Any) -> None:
        """`notifications/initialized` handler: remember the client session."""
        session = ctx.session
        token = id(session)
        self._sessions[token] = session
        # The per-connection exit stack is unwound when the client goes away
        # (seed 001 "Destroy session": clean up resources).
        connection = getattr(session, "_connection", None)
        exit_stack = getattr(connection, "exit_stack", None)
        if exit_stack is not None:
            exit_stack.callback(self._sessions.pop, token, None)

    async def broadcast(self, kind: str) -> None:
        """Send `notifications/{kind}/list_changed` to every connected client."""
        for token, session in list(self._sessions.items()):
            try:
                if kind == "tools":
                    await session.send_tool_list_changed()
                elif kind == "prompts":
                    await session.send_prompt_list_changed()
                elif kind == "resources":
                    await session.send_resource_list_changed()
            except Exception as exc:  # noqa: BLE001 - a dead client must not stop the fan-out
                logger.debug("dropping client session after failed notify: %r", exc)
                self._sessions.pop(token, None)
        event = _EVENTS.get(kind)
        if event is not None:
            await self.bus.publish(event)

    def close(self) -> None:
        self.listen_handler.close()


def register_initialized(server: Any, notifier: Notifier) -> None:
    server.add_notification_handler("notifications/initialized", types.NotificationParams, notifier.on_initialized)
