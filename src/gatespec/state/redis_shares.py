"""Per-identity shares of the artifacts kept in Redis/Valkey: the in-memory store's fairness
(gatespec.artifacts.ArtifactStore, issue 22 item 6) for the shared store.

Before an artifact is stored, one script keeps its identity within `max_share_bytes` (evicting
that identity's oldest artifacts), then, while all artifacts together are over
`max_total_bytes` or their number over `max_artifacts`, evicts the oldest artifact of the
identity holding the most bytes or artifacts, whichever bound is exceeded (the incoming artifact
counted to its own): one identity's flood evicts its own artifacts, never those of an identity
holding less. Left to itself, the server would evict under `maxmemory` whatever
key expires soonest, whoever stored it.

Keys (under the state prefix; the share's name is a digest of the identity key):
  shares               hash: share -> bytes held
  counts               hash: share -> artifacts held
  share:<share>        sorted set: "<handle> <digest> <size>" scored by the time stored (ms)
  refs                 hash: blob digest -> artifacts naming it (a blob is content-addressed
                       and may be another identity's too: deleted when none names it)
An evicted artifact's record stays until its TTL, marked `evicted`, so that its owner is told
"evicted" rather than "unknown"; entries older than the TTL are dropped from the accounting
when their share is next written or chosen. Each structure lives `ttl` from its last write.
The script names its keys itself: for a standalone server (or one Valkey/Redis primary), not a
cluster.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final

import redis.asyncio as aioredis

from gatespec.artifacts import Artifact, share_of

__all__ = ["RedisShares"]

_STORE_LUA: Final = """
local p, share, handle, digest = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local size, ttl = tonumber(ARGV[5]), tonumber(ARGV[6])
local max_share, max_total = tonumber(ARGV[7]), tonumber(ARGV[8])
local max_count = tonumber(ARGV[9])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local shares, counts, refs = p .. 'shares', p .. 'counts', p .. 'refs'
local function zkey(s) return p .. 'share:' .. s end
local function held(s) return tonumber(redis.call('HGET', shares, s) or '0') end
local function drop(s, member, evicted)
  local h, d, n = string.match(member, '^(%S+) (%S+) (%d+)$')
  redis.call('ZREM', zkey(s), member)
  if redis.call('HINCRBY', shares, s, -tonumber(n)) <= 0 then redis.call('HDEL', shares, s) end
  if redis.call('HINCRBY', counts, s, -1) <= 0 then redis.call('HDEL', counts, s) end
  if redis.call('HINCRBY', refs, d, -1) <= 0 then
    redis.call('HDEL', refs, d)
    redis.call('DEL', p .. 'blob:' .. d)
  end
  if evicted and redis.call('EXISTS', p .. 'art:' .. h) == 1 then
    redis.call('HSET', p .. 'art:' .. h, 'evicted', '1')
  end
end
local function purge(s)
  local gone = redis.call('ZRANGEBYSCORE', zkey(s), '-inf', now - ttl)
  for _, m in ipairs(gone) do drop(s, m, false) end
  return #gone
end
local function evict_oldest(s)
  local m = redis.call('ZRANGE', zkey(s), 0, 0)[1]
  if m then drop(s, m, true) else redis.call('HDEL', shares, s); redis.call('HDEL', counts, s) end
end
purge(share)
while held(share) + size > max_share and redis.call('ZCARD', zkey(share)) > 0 do
  evict_oldest(share)
end
-- the column of the bound exceeded: bytes first, then the count (as in memory)
local function heaviest(key, incoming)
  local all = redis.call('HGETALL', key)
  local total, top, most = incoming, nil, -1
  for i = 1, #all, 2 do
    local n = tonumber(all[i + 1])
    total = total + n
    if all[i] == share then n = n + incoming end
    if n > most then top, most = all[i], n end
  end
  return total, top
end
while true do
  local total, top = heaviest(shares, size)
  if total <= max_total or top == nil then
    local count
    count, top = heaviest(counts, 1)
    if count <= max_count or top == nil then break end
  end
  if purge(top) == 0 then evict_oldest(top) end
end
redis.call('HINCRBY', shares, share, size)
redis.call('HINCRBY', counts, share, 1)
-- oldest first means stored first: two stores in one millisecond must not tie (a tie would
-- order by the random handle), so a score is always above the share's newest
local score = now
local newest = redis.call('ZRANGE', zkey(share), -1, -1, 'WITHSCORES')[2]
if newest and tonumber(newest) >= score then score = tonumber(newest) + 0.001 end
redis.call('ZADD', zkey(share), score, handle .. ' ' .. digest .. ' ' .. size)
redis.call('HINCRBY', refs, digest, 1)
for _, k in ipairs({shares, counts, refs, zkey(share)}) do redis.call('PEXPIRE', k, ttl) end
return 1
"""


class RedisShares:
    def __init__(
        self,
        client: aioredis.Redis,
        prefix: str,
        ttl_ms: int,
        share: int,
        total: int,
        count: int,
    ) -> None:
        self.prefix = prefix
        self.ttl_ms = ttl_ms
        self.max_share_bytes = share
        self.max_total_bytes = total
        self.max_artifacts = count
        self._store = client.register_script(_STORE_LUA)

    async def queue(self, pipe: Any, artifact: Artifact, digest: str) -> None:
        """Queue, before the commands that store `artifact`, the script that makes room for it
        within its identity's share and the store's total."""
        identity = share_of(artifact.owner) or ""
        share = hashlib.sha256(identity.encode()).hexdigest()[:32]
        args: list[str | int] = [self.prefix, share, artifact.handle, digest, artifact.size]
        args += [self.ttl_ms, self.max_share_bytes, self.max_total_bytes, self.max_artifacts]
        # queued on the pipeline (redis-py's script call returns once it is queued)
        await self._store(args=args, client=pipe)
