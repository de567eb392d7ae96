"""The client side of AM-UPSTREAM-RELAY: a Relay over one incoming MCP request.

The upstream layer hands what an upstream sends while answering (progress, log messages,
requests of its client) to the Relay of the client request it was made for; this module turns
those into messages on that request's own channel (its SSE stream on Streamable HTTP), so they
reach that client and no other. A handshake-era Streamable HTTP request answered with one JSON
body (server.answers) has no channel of its own: its messages go to its session's standalone
stream.

- progress: reported under the client's progress token, only when the request carried one;
- log messages: filtered by the level the client set (logging/setLevel, handshake era) or
  opted into on this request (2026-07-28's per-request log level);
- sampling / elicitation / roots: sent to the client when it declared the capability and its
  connection can carry a request back; otherwise refused with the reason.
"""

from __future__ import annotations

from typing import Any, Final

import mcp_types as types
from mcp.server.connection import allowed_log_levels
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, ConfigDict

from gatespec.core import CLIENT_CAPABILITIES, RelayError

__all__ = ["LOG_LEVELS", "LogLevels", "RequestRelay"]

# notifications/message levels, least severe first (RFC 5424 as MCP orders them).
LOG_LEVELS: Final = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)

# The request models of what an upstream may ask of its client.
_REQUESTS: Final[dict[str, type[BaseModel]]] = {
    "sampling/createMessage": types.CreateMessageRequest,
    "elicitation/create": types.ElicitRequest,
    "roots/list": types.ListRootsRequest,
}


class _Raw(BaseModel):
    """A client's result as it sent it (the SDK validates it per method first)."""

    model_config = ConfigDict(extra="allow")


class LogLevels:
    """The level each handshake-era client session set with logging/setLevel."""

    def __init__(self) -> None:
        self._levels: dict[str, str] = {}

    def set(self, session: str, level: str) -> None:
        self._levels[session] = level

    def passes(self, session: str, level: str) -> bool:
        floor = self._levels.get(session)
        if floor is None or level not in LOG_LEVELS:
            return True
        return LOG_LEVELS.index(level) >= LOG_LEVELS.index(floor)


def progress_token(ctx: ServerRequestContext[Any, Any]) -> types.ProgressToken | None:
    """The client's progress token on this request, if it sent one."""
    meta = (ctx.params or {}).get("_meta")
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    return token if isinstance(token, str | int) and not isinstance(token, bool) else None


class RequestRelay:
    """A core Relay over one incoming request (see the module docstring)."""

    def __init__(
        self, ctx: ServerRequestContext[Any, Any], session: str, levels: LogLevels | None = None
    ) -> None:
        self.ctx = ctx
        self.session = session
        self.levels = levels
        self._token = progress_token(ctx)
        self._allowed = allowed_log_levels(ctx.protocol_version, ctx.meta)
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        # A request whose answer is one JSON body carries nothing else (server.answers).
        self._related = ctx.request_id if modern or ctx.session.can_send_request else None

    @property
    def wants_progress(self) -> bool:
        return self._token is not None

    async def _send(self, notification: Any) -> None:
        await self.ctx.session.send_notification(notification, related_request_id=self._related)

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        if self._token is None:
            return
        params = types.ProgressNotificationParams(
            progress_token=self._token, progress=progress, total=total, message=message
        )
        await self._send(types.ProgressNotification(params=params))

    async def log(self, level: str, data: Any, logger: str | None) -> None:
        if level not in self._allowed:  # 2026-07-28: not opted in at this level on the request
            return
        if self.levels is not None and not self.levels.passes(self.session, level):
            return
        params = types.LoggingMessageNotificationParams.model_validate(
            {"level": level, "data": data, "logger": logger}
        )
        await self._send(types.LoggingMessageNotification(params=params))

    def refusal(self, method: str) -> str | None:
        capability = CLIENT_CAPABILITIES.get(method)
        if capability is None:
            return f"{method} is not a request a server may make of its client"
        if self.ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return (
                f"the client speaks protocol {self.ctx.protocol_version}, where a server asks "
                "for client input with input_required results, which gatespec does not relay"
            )
        declared = self.ctx.session.client_capabilities
        if declared is None or getattr(declared, capability, None) is None:
            return f"the client connected to gatespec did not declare the {capability} capability"
        if not self.ctx.session.can_send_request:
            return "the client's connection cannot carry a request back to it"
        return None

    async def ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        request = _REQUESTS[method].model_validate({"method": method, "params": params})
        related = ServerMessageMetadata(related_request_id=self.ctx.request_id)
        try:
            result = await self.ctx.session.send_request(
                request,  # type: ignore[arg-type]  # one of the ServerRequest models
                _Raw,
                metadata=related,
            )
        except MCPError as exc:
            raise RelayError(exc.code, exc.message, exc.error.data) from exc
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)
