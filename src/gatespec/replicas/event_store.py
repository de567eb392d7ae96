"""Stream resumption for handshake-era Streamable HTTP sessions, shared by replicas (the SDK's
EventStore over Redis/Valkey streams; redis backend only).

The SDK stores every message a session sends on an SSE stream (a POST's stream, keyed by its
request id, or the standalone GET stream) and gives it an event id; a client whose stream broke
reconnects with `Last-Event-ID` and is sent what came after. The SDK hands its store stream ids
that are not unique across sessions (every GET stream is "_GET_stream"), so each session gets
its own store (`SessionEvents`), and a client can only replay its own session's events.

Keys (under the state prefix): ev:<sha256(session id, stream id)>, a Redis stream of
{m: the JSON-RPC message, "" for the SDK's priming event}, at most MAX_EVENTS long (older
events are trimmed) and expiring `ttl` after its last event. An event id is
"<stream entry id>:<stream id>", so any replica can find the stream again.

Round trips: storing an event is one (XADD with trimming and PEXPIRE in one pipeline); a replay
is one (XRANGE). Answers the session chose to send as one JSON body have no event id on the
wire and nothing to resume: they are not stored (`skip`).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types import JSONRPCMessage, jsonrpc_message_adapter

from gatespec.state.config import StateConfig

__all__ = ["MAX_EVENTS", "SessionEvents"]

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    import redis.asyncio as aioredis


MAX_EVENTS: Final = 1000  # per stream; a client that missed more resumes from the oldest kept
_NOT_KEPT: Final = "0-0"  # the event id of a message the store skipped or could not store


def _redis_error() -> type[Exception]:
    """redis-py's error class, imported when a shared backend is in use: serving without one
    never pays redis-py's import (about 0.4 s and 7 MiB)."""
    from redis.exceptions import RedisError

    return RedisError


class SessionEvents(EventStore):
    """One session's resumable events in the shared store (module docstring)."""

    def __init__(
        self,
        client: aioredis.Redis,
        config: StateConfig,
        session_id: str,
        skip: Callable[[StreamId], bool] | None = None,
    ) -> None:
        self.client = client
        self.prefix = config.prefix
        self.ttl_ms = int(config.ttl * 1000)
        self.session_id = session_id
        self.skip = skip

    def _key(self, stream_id: StreamId) -> str:
        digest = hashlib.sha256(f"{self.session_id}\n{stream_id}".encode()).hexdigest()
        return f"{self.prefix}ev:{digest}"

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        if message is not None and self.skip is not None and self.skip(stream_id):
            return f"{_NOT_KEPT}:{stream_id}"
        data = "" if message is None else message.model_dump_json(by_alias=True, exclude_unset=True)
        key = self._key(stream_id)
        pipe = self.client.pipeline(transaction=False)
        pipe.xadd(key, {"m": data}, maxlen=MAX_EVENTS, approximate=False)
        pipe.pexpire(key, self.ttl_ms)
        try:
            entry, _ = await pipe.execute()
        except _redis_error() as exc:
            # The message still goes out live; only its replay is lost. Never fail the send.
            log.warning("storing an event of session %s failed: %s", self.session_id[:16], exc)
            return f"{_NOT_KEPT}:{stream_id}"
        return f"{entry.decode()}:{stream_id}"

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        entry, sep, stream_id = last_event_id.partition(":")
        if not sep or not _is_entry_id(entry):
            return None  # not an id this store gave out
        try:
            events: Any = await self.client.xrange(self._key(stream_id), min=f"({entry}", max="+")
        except _redis_error() as exc:
            log.warning("replaying events of session %s failed: %s", self.session_id[:16], exc)
            return None
        for event_id, fields in events:
            data = fields.get(b"m", b"")
            if not data:
                continue  # a priming event: nothing to send again
            message = jsonrpc_message_adapter.validate_json(data, by_name=False)
            await send_callback(EventMessage(message, f"{event_id.decode()}:{stream_id}"))
        return stream_id


def _is_entry_id(value: str) -> bool:
    ms, dash, seq = value.partition("-")
    return bool(dash) and ms.isdigit() and seq.isdigit()
