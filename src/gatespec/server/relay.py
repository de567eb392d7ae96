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
  connection can carry a request back, or, for a 2026-07-28 client's call, put in an
  input_required result (server.mrtr); otherwise refused with the reason. Each is sent under an
  id that names this process (`ask_id`), so that when the client's answer reaches another
  replica that replica knows it is not its own and passes it on (replicas.http_sessions); ids
  the dispatcher minted would also collide between replicas serving one session.
"""

from __future__ import annotations

import itertools
import secrets
from typing import Any, Final

import mcp_types as types
from mcp.server.connection import allowed_log_levels
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.methods import validate_client_result
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, ConfigDict

from gatespec.runtime_contract import CLIENT_CAPABILITIES, RelayError
from gatespec.server._sdk import send_request_as
from gatespec.server.mrtr import WORKING_MODE, current_exchange

__all__ = ["ASK_ID_PREFIX", "LOG_LEVELS", "LogLevels", "RequestRelay", "asked_here"]

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

# Ids of the requests this process sends its clients: "gatespec-<process>-<n>". A string that
# does not parse as an integer stays unique for the whole session (mcp CallOptions.request_id).
ASK_ID_PREFIX: Final = "gatespec-"
_PROCESS: Final = f"{ASK_ID_PREFIX}{secrets.token_hex(6)}-"
_ask_numbers = itertools.count(1)


def ask_id() -> str:
    return f"{_PROCESS}{next(_ask_numbers)}"


def asked_here(request_id: Any) -> bool:
    """False when `request_id` is one another gatespec process sent (its answer is awaited
    there); True for this process's ids and anything else (left to the SDK, as ever)."""
    return not (
        isinstance(request_id, str)
        and request_id.startswith(ASK_ID_PREFIX)
        and not request_id.startswith(_PROCESS)
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
    """A Relay (runtime_contract) over one incoming request (see the module docstring)."""

    def __init__(
        self, ctx: ServerRequestContext[Any, Any], session: str, levels: LogLevels | None = None
    ) -> None:
        self.ctx = ctx
        self.session = session
        self.levels = levels
        self._token = progress_token(ctx)
        self._allowed = allowed_log_levels(ctx.protocol_version, ctx.meta)
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        if modern:
            # 2026-07-28 has no sessions (every sessionless HTTP client has one key): each
            # request stands alone, so an upstream's message is never taken for another's.
            self.session = f"{session}|request:{secrets.token_hex(8)}"
        # A 2026-07-28 call that may ask its client for input (server.mrtr): what the upstream
        # sends goes to the client request of the current round.
        self.exchange = current_exchange() if modern else None
        # A request whose answer is one JSON body carries nothing else (server.answers).
        self._related = ctx.request_id if modern or ctx.session.can_send_request else None

    @property
    def wants_progress(self) -> bool:
        return self._token is not None

    async def _send(self, notification: Any) -> None:
        if self.exchange is None:
            await self.ctx.session.send_notification(notification, related_request_id=self._related)
            return
        ctx = self.exchange.round_ctx
        if ctx is not None:  # between rounds no client request is open: nothing can reach it
            await ctx.session.send_notification(notification, related_request_id=ctx.request_id)

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
        modern = self.ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        if modern and self.exchange is None:
            return (
                f"the client speaks protocol {self.ctx.protocol_version}, where gatespec passes "
                "requests for client input on (as input_required results) only during "
                "tool_execute, call, and the aggregate profile's tools/call, prompts/get and "
                f"resources/read; {method} works here for {WORKING_MODE}"
            )
        declared = self.ctx.session.client_capabilities
        if declared is None or getattr(declared, capability, None) is None:
            return f"the client connected to gatespec did not declare the {capability} capability"
        if not modern and not self.ctx.session.can_send_request:
            return "the client's connection cannot carry a request back to it"
        return None

    async def ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        request = _REQUESTS[method].model_validate({"method": method, "params": params})
        if self.exchange is not None:
            return await self.exchange.ask(request)  # type: ignore[arg-type]
        wire = request.model_dump(by_alias=True, mode="json", exclude_none=True)
        session = self.ctx.session
        try:
            raw = await send_request_as(session, method, wire.get("params"), ask_id())
        except MCPError as exc:
            raise RelayError(exc.code, exc.message, exc.error.data) from exc
        try:  # what ServerSession.send_request checks
            validate_client_result(method, session.protocol_version, raw)
        except KeyError:
            pass
        result = _Raw.model_validate(raw, by_name=False)
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)
