"""Client input for 2026-07-28 clients: multi round-trip requests (MRTR, SEP-2322).

A 2026-07-28 client cannot be sent a request: a server that needs sampling, elicitation or
roots answers the call with an `input_required` result holding those requests, and the client
retries the same call with `inputResponses` and the result's `requestState`. An upstream of
either era asks gatespec mid-call (AM-UPSTREAM-RELAY), so the call behind such a client request
is run apart from it (an `Exchange`): when the upstream asks, the client's request is answered
`input_required` while the upstream call stays suspended; the retry hands the answers to the
upstream and waits for its next move, as often as the upstream asks again.

- `requestState` is a random handle (256 bits) to the suspended call in this process, bound to
  the caller (identity and session) and to the request (method, name or URI, arguments), and
  replaced every round; an unknown, foreign, stale or mismatched handle is a typed error that
  says nothing about other calls. Another replica or a restarted gatespec does not know it.
- A suspended call waits at most SUSPEND_SECONDS for the retry; then the upstream's request is
  answered with an error and a late retry gets a TIMEOUT error. At most MAX_SUSPENDED calls wait
  at once (MAX_SUSPENDED_PER_CALLER per caller): past that the upstream's request is refused.
- `logging/setLevel` does not exist in 2026-07-28 (a client opts into log messages per request
  with `_meta` "io.modelcontextprotocol/logLevel", which server.relay honours): it is answered
  with an error that says so and names the client mode where it works.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import secrets
from collections import OrderedDict
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final, Protocol

import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.methods import INPUT_REQUIRED_METHODS
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from gatespec.access import LOCAL
from gatespec.runtime_contract import RelayError
from gatespec.server.sessions import identity_of, session_key
from gatespec_surface.errors import ErrorCode, GatewayError

__all__ = [
    "MAX_SUSPENDED",
    "MAX_SUSPENDED_PER_CALLER",
    "SUSPEND_SECONDS",
    "Exchange",
    "InputRequiredRelay",
    "current_exchange",
]

logger = logging.getLogger(__name__)

# How long a suspended call waits for the client's retry: long enough for a person to answer
# an elicitation, short enough that an abandoned call frees its upstream request.
SUSPEND_SECONDS: Final = 300.0
MAX_SUSPENDED: Final = 250  # a process limit, not a spec bound
MAX_SUSPENDED_PER_CALLER: Final = 16
# Handles that expired or were replaced, remembered so their owner learns why (bounded).
_REMEMBERED: Final = 1024

WORKING_MODE: Final = (
    "a client in handshake mode (the mcp SDK's Client(mode='legacy'), protocol 2025-11-25)"
)
_UNKNOWN: Final = (
    "requestState names no call suspended in this gatespec process for this caller and "
    "request (calls are suspended in one process: another replica or a restarted gatespec "
    "cannot resume them); call the tool again without requestState"
)
_REPLACED: Final = (
    "requestState was already answered; retry with the requestState of the latest "
    "input_required result"
)

_exchange: ContextVar[Exchange | None] = ContextVar("gatespec_mrtr_exchange", default=None)


def current_exchange() -> Exchange | None:
    """The exchange the request being handled belongs to (None: not a 2026-07-28 call that
    can ask its client for input)."""
    return _exchange.get()


class _Host(Protocol):
    """What the middleware needs of the server it serves (server.catalog_server.GatewayServer)."""

    fallback_session: str
    requires_identity: bool

    def may_relay(self, method: str, params: Mapping[str, Any]) -> bool: ...

    def refused(self, method: str, error: GatewayError) -> HandlerResult: ...


@dataclass(frozen=True)
class _Asks:
    """Requests of the upstream that the client has not answered yet, by key."""

    requests: dict[str, types.InputRequest]


class Exchange:
    """One call of a 2026-07-28 client, run apart from the client requests that carry it."""

    def __init__(self, owner: str, binding: str) -> None:
        self.owner = owner
        self.binding = binding
        # The client request now waiting for news (notifications of the call go to it); None
        # between rounds.
        self.round_ctx: ServerRequestContext[Any, Any] | None = None
        self.task: asyncio.Task[HandlerResult] | None = None
        self.closed: str | None = None  # why the upstream's requests are no longer passed on
        self.timer: asyncio.TimerHandle | None = None
        self._asks: dict[str, tuple[types.InputRequest, asyncio.Future[dict[str, Any]]]] = {}
        self._changed = asyncio.Event()
        self._keys = itertools.count(1)

    def start(self, run: Any, running: set[asyncio.Task[HandlerResult]]) -> None:
        self.task = asyncio.get_running_loop().create_task(run)
        self.task.add_done_callback(self._done)
        running.add(self.task)  # the loop keeps only a weak reference to a task
        self.task.add_done_callback(running.discard)

    def _done(self, task: asyncio.Task[HandlerResult]) -> None:
        self._changed.set()
        if self.round_ctx is None and not task.cancelled() and task.exception() is not None:
            logger.info("an abandoned 2026-07-28 call ended: %r", task.exception())

    async def ask(self, request: types.InputRequest) -> dict[str, Any]:
        """The client's answer to an upstream's request (its next retry carries it)."""
        if self.closed is not None:
            raise RelayError(types.INVALID_REQUEST, self.closed)
        key = f"{request.method.split('/')[0]}-{next(self._keys)}"
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._asks[key] = (request, answer)
        self._changed.set()
        try:
            return await answer
        finally:
            self._asks.pop(key, None)

    def answer(self, responses: Mapping[str, Any]) -> None:
        for key, response in responses.items():
            entry = self._asks.get(key)
            if entry is not None and not entry[1].done() and isinstance(response, Mapping):
                entry[1].set_result(dict(response))

    def close(self, why: str) -> None:
        """Refuse what the upstream asks now and later (it gets the reason as an error)."""
        self.closed = why
        for _, answer in self._asks.values():
            if not answer.done():
                answer.set_exception(RelayError(types.INTERNAL_ERROR, why))

    async def news(self) -> HandlerResult | _Asks:
        """The call's result, or the open requests the client must answer."""
        assert self.task is not None
        while True:
            if self.task.done():
                return self.task.result()
            open_asks = {k: req for k, (req, answer) in self._asks.items() if not answer.done()}
            if open_asks:
                return _Asks(open_asks)
            self._changed.clear()
            await self._changed.wait()


def _binding(method: str, params: Mapping[str, Any]) -> str:
    """What a retry must repeat: the method, its target and its arguments."""
    target = params.get("uri") if method == "resources/read" else params.get("name")
    return json.dumps([method, target, params.get("arguments")], sort_keys=True, default=str)


class InputRequiredRelay:
    """Server middleware: 2026-07-28 requests whose upstream asks for client input (see the
    module docstring)."""

    def __init__(self, host: _Host) -> None:
        self.host = host
        self._suspended: dict[str, Exchange] = {}
        self._running: set[asyncio.Task[HandlerResult]] = set()
        self._remembered: OrderedDict[str, tuple[str, GatewayError]] = OrderedDict()

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return await call_next(ctx)
        if ctx.method == "logging/setLevel":
            raise _no_set_level(ctx.protocol_version)
        params = ctx.params or {}
        if ctx.method not in INPUT_REQUIRED_METHODS:
            return await call_next(ctx)
        owner = self._owner(ctx)
        if params.get("requestState") is not None:
            return await self._resume(ctx, owner, params)
        if owner is None or not self.host.may_relay(ctx.method, params):
            return await call_next(ctx)
        exchange = Exchange(owner, _binding(ctx.method, params))
        token = _exchange.set(exchange)  # the task (and the relays made in it) see it
        try:
            exchange.start(call_next(ctx), self._running)
        finally:
            _exchange.reset(token)
        return await self._round(exchange, ctx)

    def _owner(self, ctx: ServerRequestContext[Any, Any]) -> str | None:
        who = identity_of(ctx, LOCAL)
        if who is None and not self.host.requires_identity:
            who = LOCAL  # HTTP without access control: the local caller (server.catalog_server)
        if who is None:
            return None
        return f"{who.key}|{session_key(ctx, self.host.fallback_session)}"

    async def _round(
        self, exchange: Exchange, ctx: ServerRequestContext[Any, Any]
    ) -> HandlerResult:
        """Wait for the call's result or its next requests for client input."""
        exchange.round_ctx = ctx
        try:
            while True:
                news = await exchange.news()
                if not isinstance(news, _Asks):
                    return news
                full = self._full(exchange.owner)
                if full is not None:
                    exchange.close(full)  # the upstream is refused; its call goes on
                    continue
                handle = secrets.token_urlsafe(32)
                self._suspended[handle] = exchange
                exchange.timer = asyncio.get_running_loop().call_later(
                    SUSPEND_SECONDS, self._expire, exchange, handle
                )
                return types.InputRequiredResult(input_requests=news.requests, request_state=handle)
        except BaseException:
            # The client gave this round up (cancelled it, or went away): so goes the call.
            if exchange.task is not None and not exchange.task.done():
                exchange.close("the client cancelled the call")
                exchange.task.cancel()
            raise
        finally:
            exchange.round_ctx = None

    def _full(self, owner: str) -> str | None:
        if len(self._suspended) >= MAX_SUSPENDED:
            return f"gatespec holds {MAX_SUSPENDED} suspended calls already (2026-07-28 input_required)"
        if sum(e.owner == owner for e in self._suspended.values()) >= MAX_SUSPENDED_PER_CALLER:
            return (
                f"this client has {MAX_SUSPENDED_PER_CALLER} calls waiting for its input already "
                "(2026-07-28 input_required)"
            )
        return None

    def _expire(self, exchange: Exchange, handle: str) -> None:
        if self._suspended.pop(handle, None) is None:
            return
        why = (
            f"the client did not retry within {SUSPEND_SECONDS:g} s with the input the upstream "
            "asked for (2026-07-28 input_required)"
        )
        self._remember(handle, exchange.owner, GatewayError(ErrorCode.TIMEOUT, why))
        exchange.close(why)

    def _remember(self, handle: str, owner: str, error: GatewayError) -> None:
        self._remembered[handle] = (owner, error)
        while len(self._remembered) > _REMEMBERED:
            self._remembered.popitem(last=False)

    async def _resume(
        self, ctx: ServerRequestContext[Any, Any], owner: str | None, params: Mapping[str, Any]
    ) -> HandlerResult:
        wire = params.get("requestState")
        handle = wire if isinstance(wire, str) else ""
        exchange = self._suspended.get(handle)
        if (
            exchange is None
            or owner is None
            or exchange.owner != owner
            or exchange.binding != _binding(ctx.method, params)
        ):
            known = self._remembered.get(handle)
            if known is not None and owner is not None and known[0] == owner:
                return self.host.refused(ctx.method, known[1])
            return self.host.refused(ctx.method, GatewayError(ErrorCode.ARGS_INVALID, _UNKNOWN))
        del self._suspended[handle]
        self._remember(handle, owner, GatewayError(ErrorCode.ARGS_INVALID, _REPLACED))
        if exchange.timer is not None:
            exchange.timer.cancel()
        responses = params.get("inputResponses")
        exchange.answer(responses if isinstance(responses, Mapping) else {})
        return await self._round(exchange, ctx)


def _no_set_level(version: str) -> MCPError:
    return MCPError(
        code=types.METHOD_NOT_FOUND,
        message=(
            f"logging/setLevel is not part of protocol {version}: a client of that protocol "
            f"opts into log messages on each request with _meta {types.LOG_LEVEL_META_KEY!r} "
            f"(the mcp SDK's Client(log_level=...)), which gatespec honours; logging/setLevel "
            f"works for {WORKING_MODE}"
        ),
        data={"method": "logging/setLevel", "protocolVersion": version, "worksIn": "2025-11-25"},
    )
