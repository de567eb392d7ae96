"""How Streamable HTTP answers a POSTed request: one JSON body, or an SSE stream
(AM-HTTP-ANSWER-FORM).

A JSON body is the cheaper answer (the SSE framing cost 0.1-0.7 ms of server CPU per call,
bench/execute.py), but it carries the response alone. A request gets an SSE stream only when
something may reach its client before the response, over that request's stream:

- its handling may reach an upstream that talks back (`GatewayServer.may_relay`: tool_execute
  and the search profile's call; in the aggregate profile every routed or broadcast request),
- and the client can be sent something related to it: the request carries a progress token,
  or the session declared sampling, elicitation or roots when it initialized.

Log messages an upstream sends during a request answered with JSON go to the session's
standalone (GET) stream instead (server.relay); they are the session's own either way.

2026-07-28 requests are the SDK's own affair: it answers JSON unless the handler sends
something first. This module only changes the handshake-era session transport, whose choice the
SDK makes once per session: a ContextVar carries the choice for the one POST being handled.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any, Final

from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types import InitializeRequestParams
from starlette.requests import Request

from gatespec.runtime_contract import CLIENT_CAPABILITIES
from gatespec.server._sdk import PostHookTransport, on_admit, recast

__all__ = ["MayRelay", "answer_per_request"]

MayRelay = Callable[[str, Mapping[str, Any]], bool]

# What a client declares so that an upstream may ask it something mid-request.
_ASKABLE: Final = frozenset(CLIENT_CAPABILITIES.values())
# The answer form of the POST being handled (the SDK reads it through the property below).
_JSON_ANSWER: ContextVar[bool] = ContextVar("gatespec_json_answer", default=False)


class ChoosingTransport(PostHookTransport):
    """A handshake-era session's transport that chooses each answer's form (module
    docstring). Made from the SDK's own transport by `answer_per_request`."""

    may_relay: MayRelay
    declared: frozenset[str]  # what the session's client declared of _ASKABLE
    # ids of requests being answered with one JSON body, kept only for a session whose events
    # are stored for resumption (replicas.http_sessions): None otherwise
    json_answered: set[str] | None

    @property
    def is_json_response_enabled(self) -> bool:
        # Read while a POST is handled (its accept check, its answer, its messages' metadata);
        # elsewhere (the message router) False, so messages related to a streamed request
        # reach its stream. A request answered with JSON has nothing related sent to it.
        return _JSON_ANSWER.get()

    @is_json_response_enabled.setter
    def is_json_response_enabled(self, value: bool) -> None:
        """The SDK's constructor sets it once per session; chosen per request instead."""

    @asynccontextmanager
    async def handling_post(self, request: Request) -> AsyncIterator[None]:
        # The SDK reads the body again; Starlette keeps it on the request.
        try:
            message = json.loads(await request.body())
        except ValueError:
            message = None  # the SDK answers the parse error
        as_json = not self.streams(message)
        if (
            as_json
            and self.json_answered is not None
            and isinstance(message, dict)
            and "id" in message
        ):
            # Its answer has no event id on the wire: nothing to store for resumption.
            self.json_answered.add(str(message["id"]))
        token = _JSON_ANSWER.set(as_json)
        try:
            yield
        finally:
            _JSON_ANSWER.reset(token)

    def unreplayable(self, stream_id: str) -> bool:
        """Whether `stream_id` is a request answered with JSON (the event store's skip); its
        answer is the last message on it, so it is forgotten once asked about."""
        if self.json_answered is not None and stream_id in self.json_answered:
            self.json_answered.discard(stream_id)
            return True
        return False

    def streams(self, message: object) -> bool:
        """Whether the POSTed message is a request to answer with an SSE stream."""
        if not isinstance(message, dict) or "id" not in message:
            return False  # a notification, a response or a batch: 202 or an error
        method = message.get("method")
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        if method == "initialize":
            caps = params.get("capabilities")
            caps = caps if isinstance(caps, dict) else {}
            self.declared = frozenset(c for c in _ASKABLE if caps.get(c) is not None)
            return False
        if not isinstance(method, str) or not self.may_relay(method, params):
            return False
        meta = params.get("_meta")
        return bool(self.declared) or (isinstance(meta, dict) and "progressToken" in meta)


def answer_per_request(manager: StreamableHTTPSessionManager, may_relay: MayRelay) -> None:
    """Make every session `manager` opens (or adopts) from now on choose its answers per
    request."""

    def choosing(
        transport: StreamableHTTPServerTransport, client_params: InitializeRequestParams | None
    ) -> None:
        # The SDK builds (and registers) the transport; this only changes how it answers.
        transport = recast(transport, ChoosingTransport)
        transport.may_relay = may_relay
        transport.declared = frozenset()
        transport.json_answered = None
        if client_params is not None:  # adopted: initialized on another replica
            caps = client_params.capabilities.model_dump(exclude_none=True)
            transport.declared = frozenset(c for c in _ASKABLE if c in caps)

    on_admit(manager, choosing)
