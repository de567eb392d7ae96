"""The shared state backend: Redis or Valkey through redis-py's asyncio client.

Every replica pointed at the same server sees the same artifacts and seen cards (cache-stable browsing), so
any replica can answer any request (docs/scaling.md has the model). Keys (all under `prefix`):

  art:<handle>       hash: owner, media_type, label, uri, is_text, size, digest, and
                     evicted once its identity's share made room             (TTL ttl)
  shares, share:<s>, refs   what each identity holds (gatespec.state.redis_shares)
  blob:<sha256>      the artifact's bytes, content-addressed: a result stored twice is kept
                     once                                                          (TTL ttl)
  events             pub/sub channel: {"origin": replica, "event": "tools_changed"}
  seen:<sha256(scope)>  hash: tool id -> its card frozen at first sighting as JSON, or "" for
                     a tool seen through hydration only          (TTL ttl from its last use)

Round trips: tool_execute stores all of a call's artifacts and records its implicit
hydration in one pipeline, after the upstream call; tool_view is one
script call (record and bytes together); a cache-stable browse is one read of the entries of the
cards it shows (HMGET: its cost does not grow with the session) and, when it showed a card for
the first time, one write.

Artifacts live `ttl` seconds from their creation. A handle whose record is gone is answered
VIEW_FAILED "unknown or has expired" (the store cannot tell the two apart, and must not tell
another caller's handle from a made-up one); a record whose bytes the server evicted under
memory pressure says that. Configure the server with `maxmemory-policy volatile-ttl` or
`noeviction` so that nothing younger than its TTL is evicted (README).

The client reconnects by itself after the server restarts (redis-py's connection pool opens
new connections on the next command; scripts are reloaded on NOSCRIPT by redis-py's Script).
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final
from urllib.parse import urlsplit

import anyio
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import RedisError

from gatespec.artifacts import Artifact, check_handle, new_artifact, view_error
from gatespec.seen_cards import SeenCards
from gatespec.state.base import ArtifactWriter, StateUnavailable
from gatespec.state.config import StateConfig
from gatespec.state.redis_shares import RedisShares

__all__ = ["RedisState", "StagedArtifacts"]

log = logging.getLogger(__name__)

# One attempt and two quick retries: enough to ride over a reconnect after a server restart,
# short enough that an outage is answered within about `timeout` rather than hanging a call.
_RETRIES: Final = 2
_RESUBSCRIBE_DELAY: Final = 0.5  # seconds between attempts to subscribe again

# tool_view: the record and the bytes it names, in one round trip. Returns nothing for an
# unknown handle, {fields} when the bytes are gone, {fields, bytes} otherwise.
_VIEW_LUA: Final = """
local f = redis.call('HGETALL', KEYS[1])
if #f == 0 then return false end
local digest = ''
for i = 1, #f, 2 do if f[i] == 'digest' then digest = f[i + 1] end end
local blob = redis.call('GET', ARGV[1] .. digest)
if not blob then return {f} end
return {f, blob}
"""

# Cache-stable state: ARGV = id1, value1, id2, value2, ..., ttl_ms. A value "" marks a tool
# seen (never overwrites); a card is stored unless another is already frozen for that id,
# which counts as a conflict when it differs from ours. Returns the number of conflicts.
_SAVE_LUA: Final = """
local conflicts = 0
for i = 1, #ARGV - 1, 2 do
  local id, v = ARGV[i], ARGV[i + 1]
  local cur = redis.call('HGET', KEYS[1], id)
  if v == '' then
    if not cur then redis.call('HSET', KEYS[1], id, '') end
  elseif (not cur) or cur == '' then
    redis.call('HSET', KEYS[1], id, v)
  elseif cur ~= v then
    conflicts = conflicts + 1
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[#ARGV])
return conflicts
"""


def _card_json(card: dict[str, Any]) -> str:
    # Python's json keeps key order and round-trips floats exactly: the card another replica
    # reads back renders to the same bytes.
    return json.dumps(card, ensure_ascii=False, separators=(",", ":"))


class StagedArtifacts:
    """An ArtifactWriter that keeps one call's artifacts until the backend flushes them."""

    def __init__(self, max_artifact_bytes: int) -> None:
        self.max_total_bytes = max_artifact_bytes
        self.staged: list[Artifact] = []

    def fits(self, size: int) -> bool:
        return size <= self.max_total_bytes

    def put(
        self,
        data: bytes,
        media_type: str,
        label: str,
        uri: str | None = None,
        owner: str | None = None,
    ) -> dict[str, Any]:
        if not self.fits(len(data)):
            raise ValueError(f"artifact of {len(data)} bytes exceeds {self.max_total_bytes} bytes")
        artifact = new_artifact(data, media_type, label, uri, owner)
        self.staged.append(artifact)
        return artifact.ref()


class RedisArtifacts:
    def __init__(self, client: aioredis.Redis, config: StateConfig) -> None:
        self.client = client
        self.prefix = config.prefix
        self.ttl_ms = int(config.ttl * 1000)
        self.ttl = config.ttl
        # an artifact over its identity's whole share could never be kept
        self.max_artifact_bytes = min(config.max_artifact_bytes, config.share_bytes)
        self._view = client.register_script(_VIEW_LUA)
        self.shares = RedisShares(
            client,
            self.prefix,
            self.ttl_ms,
            config.share_bytes,
            config.total_bytes,
            config.max_artifacts,
        )

    def writer(self) -> ArtifactWriter:
        return StagedArtifacts(self.max_artifact_bytes)

    async def flush(self, writer: ArtifactWriter) -> None:
        pipe = self.client.pipeline(transaction=False)
        if await self.queue(pipe, writer):
            await _execute(pipe, "storing artifacts")

    async def queue(self, pipe: Any, writer: ArtifactWriter) -> bool:
        """Queue the commands that store `writer`'s artifacts on `pipe`; False if none."""
        if not isinstance(writer, StagedArtifacts) or not writer.staged:
            return False
        for art in writer.staged:
            digest = hashlib.sha256(art.data).hexdigest()
            await self.shares.queue(pipe, art, digest)  # room within its identity's share first
            # Re-storing identical bytes only refreshes their TTL to outlive the new record.
            pipe.set(f"{self.prefix}blob:{digest}", art.data, px=self.ttl_ms)
            key = f"{self.prefix}art:{art.handle}"
            pipe.hset(
                key,
                mapping={
                    "owner": art.owner or "",
                    "media_type": art.media_type,
                    "label": art.label,
                    "uri": art.uri or "",
                    "has_uri": "1" if art.uri is not None else "0",
                    "is_text": "1" if art.is_text else "0",
                    "size": art.size,
                    "digest": digest,
                },
            )
            pipe.pexpire(key, self.ttl_ms)
        return True

    async def get(self, handle: object, owner: str | None) -> Artifact:
        handle = check_handle(handle)
        try:
            reply = await self._view(
                keys=[f"{self.prefix}art:{handle}"], args=[self.prefix + "blob:"]
            )
        except RedisError as exc:
            raise view_error(
                f"artifact {handle}: the shared state store is unreachable ({exc}); try again",
                handle,
            ) from None
        unknown = view_error(
            f"no artifact {handle}: the handle is unknown or has expired "
            f"(artifacts are kept {self.ttl:g} s)",
            handle,
        )
        if not reply:
            raise unknown
        raw = reply[0]
        fields = {
            raw[i].decode(): raw[i + 1].decode("utf-8", errors="replace")
            for i in range(0, len(raw), 2)
        }
        if fields.get("owner", "") not in ("", owner or ""):
            raise unknown  # another caller's handle reads as one that never existed
        if fields.get("evicted") == "1":
            raise view_error(
                f"artifact {handle} was evicted to keep this identity's artifacts within "
                f"{self.shares.max_share_bytes} bytes (and the store within "
                f"{self.shares.max_total_bytes} bytes and {self.shares.max_artifacts} "
                "artifacts); run the tool again to get a new one",
                handle,
            )
        if len(reply) < 2:
            raise view_error(
                f"artifact {handle} ({fields.get('size')} bytes) was evicted from the shared "
                "store under memory pressure before its TTL ran out; run the tool again",
                handle,
            )
        return Artifact(
            handle=handle,
            data=bytes(reply[1]),
            media_type=fields["media_type"],
            label=fields["label"],
            uri=fields["uri"] if fields.get("has_uri") == "1" else None,
            is_text=fields["is_text"] == "1",
            owner=fields["owner"] or None,
        )


class RedisSeenCards:
    def __init__(self, client: aioredis.Redis, config: StateConfig) -> None:
        self.client = client
        self.prefix = config.prefix
        self.ttl_ms = int(config.ttl * 1000)
        self._save = client.register_script(_SAVE_LUA)

    def _key(self, scope: str) -> str:
        # Scopes are caller-controlled text (a session id header): hashed to a bounded key.
        return f"{self.prefix}seen:{hashlib.sha256(scope.encode()).hexdigest()}"

    async def load(self, scope: str, ids: Sequence[str]) -> SeenCards:
        if not ids:
            return SeenCards()
        key = self._key(scope)
        pipe = self.client.pipeline(transaction=False)
        pipe.hmget(key, list(ids))
        pipe.pexpire(key, self.ttl_ms)  # a session in use stays, even with nothing new to store
        try:
            values, _ = await pipe.execute()
        except RedisError as exc:
            raise StateUnavailable(f"reading a session's seen cards failed: {exc}") from exc
        seen: list[str] = []
        frozen: dict[str, Any] = {}
        for tool_id, value in zip(ids, values, strict=True):
            if value:
                frozen[tool_id] = json.loads(value)
            elif value is not None:
                seen.append(tool_id)  # "": seen through hydration, never shown
        return SeenCards(seen, frozen)

    async def save(self, scope: str, session: SeenCards) -> bool:
        changes = session.changes()
        if not changes:
            return True
        args: list[str | int] = []
        for tool_id, card in changes.items():
            args += [tool_id, "" if card is None else _card_json(card)]
        return await self._run(scope, args) == 0

    async def record_seen(self, scope: str, tool_id: str) -> None:
        pipe = self.client.pipeline(transaction=False)
        self.queue_seen(pipe, scope, tool_id)
        try:
            await pipe.execute()
        except RedisError as exc:
            raise StateUnavailable(f"saving a session's seen cards failed: {exc}") from exc

    def queue_seen(self, pipe: Any, scope: str, tool_id: str) -> None:
        # "" marks a tool seen and never overwrites a frozen card: HSETNX does exactly that,
        # without a script (in a pipeline redis-py would ask SCRIPT EXISTS first, and EVAL
        # would send the script's text every call).
        key = self._key(scope)
        pipe.hsetnx(key, tool_id, "")
        pipe.pexpire(key, self.ttl_ms)

    async def _run(self, scope: str, args: list[str | int]) -> int:
        try:
            return int(await self._save(keys=[self._key(scope)], args=[*args, self.ttl_ms]))
        except RedisError as exc:
            raise StateUnavailable(f"saving a session's seen cards failed: {exc}") from exc


async def _execute(pipe: Any, what: str) -> None:
    try:
        await pipe.execute()
    except RedisError as exc:
        raise StateUnavailable(f"{what} failed: {exc}") from exc


class RedisState:
    name = "redis"

    def __init__(self, config: StateConfig, client: aioredis.Redis | None = None) -> None:
        assert config.url is not None
        self.config = config
        self.client = client or aioredis.Redis.from_url(
            config.url,
            socket_timeout=config.timeout,
            socket_connect_timeout=config.timeout,
            retry=Retry(ExponentialBackoff(cap=0.2, base=0.02), _RETRIES),
            **_credentials(config),
        )
        self.artifacts = RedisArtifacts(self.client, config)
        self.seen_cards = RedisSeenCards(self.client, config)
        self.channel = f"{config.prefix}events"
        self.origin = secrets.token_hex(8)  # this replica, to ignore its own events

    async def ping(self) -> None:
        try:
            await self.client.ping()
        except RedisError as exc:
            raise StateUnavailable(f"{self.config.url_shown}: {exc}") from exc

    async def commit_execute(self, scope: str, seen: str | None, writer: ArtifactWriter) -> None:
        pipe = self.client.pipeline(transaction=False)
        stored = await self.artifacts.queue(pipe, writer)
        if seen is not None:
            self.seen_cards.queue_seen(pipe, scope, seen)
        if stored or seen is not None:
            await _execute(pipe, "storing the call's artifacts and seen tool")

    async def publish(self, event: str) -> None:
        message = json.dumps({"origin": self.origin, "event": event})
        try:
            await self.client.publish(self.channel, message)
        except RedisError as exc:
            log.warning("could not tell the other replicas %r: %s", event, exc)

    async def follow(self, on_event: Callable[[str], Awaitable[None]]) -> None:
        """Subscribe to the events channel for good: after a lost subscription (the server
        restarted) subscribe again and report "resync", since events may have been missed."""
        lost = False
        while True:
            try:
                async with self.client.pubsub(ignore_subscribe_messages=True) as pubsub:
                    await pubsub.subscribe(self.channel)
                    if lost:
                        lost = False
                        await on_event("resync")
                    async for message in pubsub.listen():
                        event = _peer_event(message, self.origin)
                        if event is not None:
                            await on_event(event)
            except RedisError as exc:
                if not lost:
                    log.warning("replica events lost (%s); subscribing again", exc)
                lost = True
                await anyio.sleep(_RESUBSCRIBE_DELAY)

    async def aclose(self) -> None:
        await self.client.aclose()


def _credentials(config: StateConfig) -> dict[str, Any]:
    """redis-py's arguments for the config's username, password and TLS files (a rediss://
    url verifies the server's certificate and host name whatever redis-py's defaults are)."""
    found: dict[str, Any] = {}
    if config.username is not None:
        found["username"] = config.username
    if config.password is not None:
        found["password"] = config.password
    if urlsplit(config.url or "").scheme == "rediss":
        found["ssl_cert_reqs"] = "required"
        found["ssl_check_hostname"] = True
        tls = config.tls
        if tls is not None:
            files = {"ssl_ca_certs": tls.ca_file, "ssl_certfile": tls.cert_file}
            files["ssl_keyfile"] = tls.key_file
            found.update({k: str(v) for k, v in files.items() if v is not None})
    return found


def _peer_event(message: Any, origin: str) -> str | None:
    """The event of a pub/sub message another replica sent; None for anything else."""
    if not isinstance(message, dict) or message.get("type") != "message":
        return None
    try:
        body = json.loads(message["data"])
    except (ValueError, TypeError):
        return None
    if not isinstance(body, dict) or body.get("origin") == origin:
        return None
    event = body.get("event")
    return event if isinstance(event, str) else None
