"""The handshake-era session registry shared by replicas (redis backend only).

A handshake-era client holds a protocol session: a Streamable HTTP `Mcp-Session-Id`, or a
legacy SSE connection and its `session_id`. With the redis backend the replica that opens one
records it here, so that another replica can serve it (gatespec.replicas.http_sessions revives
a Streamable HTTP session; gatespec.replicas.sse_forward forwards a legacy POST to the replica that
holds the SSE stream). Keys (under the state prefix):

  sess:<sha256(session id)>   hash: kind ("http" or "sse"), owner (the credential that opened
                              it, as the SDK compares it; "" without access control), and for
                              http the negotiated protocol version and the initialize params
                              (TTL: the state ttl, refreshed while the session is used)
  sse:<session id>            pub/sub channel of one legacy SSE session: the replica holding
                              its stream subscribes, the others publish POSTed messages on it
  http:<session id>           pub/sub channel of one Streamable HTTP session: every replica
                              holding a copy subscribes; a replica that receives a client's
                              answer or cancellation for a request in flight elsewhere
                              publishes it there
  sessions-ended              pub/sub channel: a session deleted on one replica, so that the
                              others drop their copy

Round trips: recording, looking up, refreshing or removing a session is one each; forwarding a
POST is one (a script checks the owner and publishes, and says how many replicas received it:
0 means no replica holds the session).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import anyio

from gatespec.state.base import StateBackend, StateUnavailable
from gatespec.state.config import StateConfig

__all__ = ["SessionChannels", "SessionRecord", "SessionRegistry", "open_registry"]

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    import redis.asyncio as aioredis


_RESUBSCRIBE_DELAY: Final = 0.5  # seconds between attempts to subscribe again
_SUBSCRIBE_TIMEOUT: Final = 2.0  # seconds to wait for the server to confirm a subscription

# Forward a POST: KEYS = record, channel; ARGV = owner, payload. -1 when the session is
# not registered or belongs to another credential (answered as if it did not exist), else the
# number of replicas that received the message.
_FORWARD_LUA: Final = """
local owner = redis.call('HGET', KEYS[1], 'owner')
if (not owner) or owner ~= ARGV[1] then return -1 end
return redis.call('PUBLISH', KEYS[2], ARGV[2])
"""


def _redis_error() -> type[Exception]:
    """redis-py's error class, imported when a shared backend is in use: serving without one
    never pays redis-py's import (about 0.4 s and 7 MiB)."""
    from redis.exceptions import RedisError

    return RedisError


@dataclass(frozen=True)
class SessionRecord:
    kind: str  # "http" or "sse"
    owner: str  # owner_key() of the credential that opened it; "" without access control
    protocol_version: str = ""
    client_params: dict[str, Any] | None = None  # the initialize params (http)


def owner_key(requestor: Any) -> str:
    """The stored form of the SDK's AuthorizationContext (None: no access control)."""
    if requestor is None:
        return ""
    return json.dumps(dict(requestor), sort_keys=True, separators=(",", ":"))


class SessionRegistry:
    """Handshake-era sessions in the shared store (module docstring)."""

    def __init__(self, client: aioredis.Redis, config: StateConfig) -> None:
        self.client = client
        self.config = config
        self.prefix = config.prefix
        self.ttl = config.ttl
        self.ttl_ms = int(config.ttl * 1000)
        self.ended_channel = f"{config.prefix}sessions-ended"
        self._forward = client.register_script(_FORWARD_LUA)

    def _key(self, session_id: str) -> str:
        # Session ids arrive in headers and query strings: hashed to a bounded key.
        return f"{self.prefix}sess:{hashlib.sha256(session_id.encode()).hexdigest()}"

    def channel(self, kind: str, session_id: str) -> str:
        """The pub/sub channel of one session of `kind` ("sse" or "http")."""
        return f"{self.prefix}{kind}:{session_id}"

    async def record(self, session_id: str, record: SessionRecord) -> None:
        fields: dict[Any, Any] = {"kind": record.kind, "owner": record.owner}
        if record.kind == "http":
            fields["protocol_version"] = record.protocol_version
            fields["client_params"] = json.dumps(record.client_params or {})
        pipe = self.client.pipeline(transaction=False)
        pipe.hset(self._key(session_id), mapping=fields)
        pipe.pexpire(self._key(session_id), self.ttl_ms)
        await _run(pipe.execute(), "recording a session")

    async def lookup(self, session_id: str) -> SessionRecord | None:
        """The session's record (its ttl refreshed), or None when it is not registered."""
        pipe = self.client.pipeline(transaction=False)
        pipe.hgetall(self._key(session_id))
        pipe.pexpire(self._key(session_id), self.ttl_ms)
        raw, _ = await _run(pipe.execute(), "looking a session up")
        if not raw:
            return None
        fields = {k.decode(): v.decode("utf-8", errors="replace") for k, v in raw.items()}
        params = fields.get("client_params")
        return SessionRecord(
            kind=fields.get("kind", ""),
            owner=fields.get("owner", ""),
            protocol_version=fields.get("protocol_version", ""),
            client_params=json.loads(params) if params else None,
        )

    async def touch(self, session_id: str) -> bool:
        """Refresh the session's ttl; False when its record is gone (a store that restarted
        empty), so that the caller can record it again."""
        touched = self.client.pexpire(self._key(session_id), self.ttl_ms)
        return bool(await _run(touched, "refreshing a session"))

    async def remove(self, session_id: str, *, announce: bool = False) -> None:
        """Forget the session; `announce`: tell the other replicas to drop their copies."""
        pipe = self.client.pipeline(transaction=False)
        pipe.delete(self._key(session_id))
        if announce:
            pipe.publish(self.ended_channel, session_id)
        await _run(pipe.execute(), "removing a session")

    async def forward(self, kind: str, session_id: str, owner: str, payload: bytes) -> int:
        """Publish a POST on the session's channel: how many replicas received it (0: none
        holds the session), or -1 when it is not this owner's session."""
        keys = [self._key(session_id), self.channel(kind, session_id)]
        return int(
            await _run(self._forward(keys=keys, args=[owner, payload]), "forwarding a message")
        )


async def _run(call: Awaitable[Any], what: str) -> Any:
    try:
        return await call
    except _redis_error() as exc:
        raise StateUnavailable(f"{what} failed: {exc}") from exc


OnMessage = Callable[[str, bytes], Awaitable[None]]


class SessionChannels:
    """This replica's subscriptions: the channels of the sessions it holds (a legacy SSE
    stream, a copy of a Streamable HTTP session), and the sessions-ended channel. One pub/sub
    connection; `run` until cancelled (it subscribes again after the store comes back, so a
    session held before an outage keeps receiving)."""

    def __init__(self, registry: SessionRegistry) -> None:
        self.registry = registry
        # per session kind ("sse", "http"): called with (session id, payload) of a message
        self.on_forwarded: dict[str, OnMessage] = {}
        self.on_ended: Callable[[str], Awaitable[None]] | None = None
        self._pubsub: Any = None
        self._held: set[str] = set()  # channels of the sessions held here
        self._confirmed: dict[str, anyio.Event] = {}
        self._up = anyio.Event()

    async def hold(self, kind: str, session_id: str, *, confirm: bool = True) -> None:
        """Receive the session's messages from now on. `confirm`: return once the store
        confirmed the subscription (a legacy client POSTs as soon as it knows the session);
        else only send the command (a Streamable HTTP session's channel carries answers to
        requests the replica has yet to send, so nothing can be published before it lands)."""
        channel = self.registry.channel(kind, session_id)
        self._held.add(channel)
        if not confirm:
            if self._up.is_set():
                await self._subscribe(channel, session_id)
            return  # else run() subscribes once the store is back
        confirmed = self._confirmed[channel] = anyio.Event()
        with anyio.move_on_after(_SUBSCRIBE_TIMEOUT):
            await self._up.wait()
            if await self._subscribe(channel, session_id):
                await confirmed.wait()

    async def _subscribe(self, channel: str, session_id: str) -> bool:
        try:
            await self._pubsub.subscribe(channel)
        except _redis_error() as exc:
            log.warning("could not subscribe to session %s: %s", session_id[:16], exc)
            return False
        return True

    async def release(self, kind: str, session_id: str) -> None:
        channel = self.registry.channel(kind, session_id)
        self._held.discard(channel)
        self._confirmed.pop(channel, None)
        if self._pubsub is not None and self._up.is_set():
            try:
                await self._pubsub.unsubscribe(channel)
            except _redis_error():
                pass  # the subscription ends with the connection anyway

    async def run(self) -> None:
        lost = False
        while True:
            try:
                async with self.registry.client.pubsub() as pubsub:
                    self._pubsub = pubsub
                    await pubsub.subscribe(self.registry.ended_channel, *self._held)
                    self._up.set()
                    lost = False
                    async for message in pubsub.listen():
                        await self._dispatch(message)
            except _redis_error() as exc:
                if not lost:  # once per outage, not on every attempt
                    log.warning("session channels lost (%s); subscribing again", exc)
                lost = True
            finally:
                self._up = anyio.Event()
                self._pubsub = None
            await anyio.sleep(_RESUBSCRIBE_DELAY)

    async def _dispatch(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        channel = message.get("channel")
        channel = channel.decode() if isinstance(channel, bytes) else str(channel)
        if kind == "subscribe":
            event = self._confirmed.get(channel)
            if event is not None:
                event.set()
            return
        if kind != "message":
            return
        data = message["data"]
        try:
            if channel == self.registry.ended_channel:
                if self.on_ended is not None:
                    await self.on_ended(data.decode())
                return
            session_kind, _, session_id = channel.removeprefix(self.registry.prefix).partition(":")
            handler = self.on_forwarded.get(session_kind)
            if handler is not None:
                await handler(session_id, data)
        except Exception:  # one bad message must not end the subscriptions
            log.exception("handling a message on %s failed", channel)


def open_registry(state: StateBackend | None) -> SessionRegistry | None:
    """The registry of a shared backend; None for the memory backend (sessions stay in the
    replica that opened them, as before)."""
    if state is None or state.name != "redis":
        return None  # decided by name: importing the redis backend would import redis-py
    from gatespec.state.redis_backend import RedisState

    assert isinstance(state, RedisState)
    return SessionRegistry(state.client, state.config)
