"""What an upstream sends while answering reaches the client request behind it
(AM-UPSTREAM-RELAY).

Progress needs no help: a request relayed with the client's progress wish carries a token of
the SDK's own, and its callback reports under the client's token. Logging notifications and
requests the upstream makes of its client (sampling, elicitation, roots) carry no request id on
a shared connection, so they are related to the client request in flight there: `InFlight`
tracks those requests per upstream, and relates a message only when every request in flight
belongs to one client session. Anything else is refused (a request) or kept in the gateway's
log (a log message): guessing would hand one client's data to another.

A connection that belongs to one client session (profiles.aggregate.client_upstreams) also has an
`owner`: the relay of that client's request being served when nothing is tracked (the upstream
asks while the connection opens, before the call is sent), so nothing is guessed there either.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

import mcp_types as types
from pydantic import BaseModel, ValidationError

from gatespec.runtime_contract import Relay, RelayError

logger = logging.getLogger(__name__)

# The result model of each request an upstream may make of its client.
_RESULTS: Final[dict[str, tuple[type[BaseModel], ...]]] = {
    "sampling/createMessage": (types.CreateMessageResult, types.CreateMessageResultWithTools),
    "elicitation/create": (types.ElicitResult,),
    "roots/list": (types.ListRootsResult,),
}


class InFlight:
    """The client requests in flight on one upstream, and what to relate to them."""

    def __init__(self, key: str) -> None:
        self.key = key
        self._relays: list[Relay] = []
        # The request of the one client this connection belongs to, while it is served
        # (profiles.aggregate.client_upstreams); None on a shared connection.
        self.owner: Relay | None = None

    @contextmanager
    def track(self, relay: Relay | None) -> Iterator[None]:
        """While the block runs, messages from the upstream may relate to `relay`."""
        if relay is None:
            yield
            return
        self._relays.append(relay)
        try:
            yield
        finally:
            self._relays.remove(relay)

    def related(self) -> tuple[Relay | None, str]:
        """(the relay a message from the upstream belongs to, or None and why not)."""
        relays = list(self._relays)
        if not relays and self.owner is not None:
            return self.owner, ""
        if not relays:
            return None, "no client request is in flight on this upstream connection"
        sessions = {r.session for r in relays}
        if len(sessions) > 1:
            return None, (
                f"requests of {len(sessions)} client sessions are in flight on this upstream "
                "connection, so which one it belongs to is unknown"
            )
        return relays[-1], ""

    def logger_name(self, name: str | None) -> str:
        """The logger a relayed message names: the upstream's key, then its own logger."""
        return f"{self.key}/{name}" if name else self.key

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        """An upstream's notifications/message: to the related client, else to our log."""
        relay, why = self.related()
        if relay is None:
            logger.info(
                "upstream %r [%s] %s (not relayed: %s)", self.key, params.level, params.data, why
            )
            return
        try:
            await relay.log(params.level, params.data, self.logger_name(params.logger))
        except Exception:  # the client went away: the upstream must not notice
            logger.debug("relaying a log message of %r failed", self.key, exc_info=True)

    async def ask(self, method: str, params: BaseModel) -> BaseModel | types.ErrorData:
        """A request the upstream makes of its client, relayed, or refused with a reason."""
        relay, why = self.related()
        refusal = why if relay is None else relay.refusal(method)
        if relay is None or refusal:
            message = f"gatespec cannot pass {method} from upstream {self.key!r} on: {refusal}"
            logger.info("%s", message)
            return types.ErrorData(code=types.INVALID_REQUEST, message=message)
        try:
            raw = await relay.ask(
                method, params.model_dump(by_alias=True, mode="json", exclude_none=True)
            )
        except RelayError as exc:
            return types.ErrorData(code=exc.code, message=exc.message, data=exc.data)
        for model in _RESULTS[method]:
            try:
                return model.model_validate(raw, by_name=False)
            except ValidationError:
                continue
        message = f"the client's answer to {method} is not a valid result"
        return types.ErrorData(code=types.INTERNAL_ERROR, message=message)

    # The mcp client's callbacks (ClientSession(sampling_callback=...)).

    async def sampling(self, context: Any, params: types.CreateMessageRequestParams) -> Any:
        return await self.ask("sampling/createMessage", params)

    async def elicitation(self, context: Any, params: types.ElicitRequestParams) -> Any:
        return await self.ask("elicitation/create", params)

    async def roots(self, context: Any) -> Any:
        return await self.ask("roots/list", types.RequestParams())


__all__ = ["InFlight"]
