"""A JWKS fetched from the identity provider's URL (`gateway.access.jwt.jwks_url`), so that a
key rotation needs no restart.

Key selection by the token's `kid`:
- a kid in the set held: that key, while the set is younger than `max_age`; an older set is
  fetched again first (so a retired key stops verifying within `max_age`);
- a kid not in the set (a new key appeared, or a made-up kid): the set is fetched again, once,
  if the last fetch is at least `min_interval` ago, and the kid looked up in it; otherwise,
  or when it is still unknown, the token is refused. However many tokens with unknown kids
  arrive, the provider is asked at most once per `min_interval` (a flood of made-up kids
  cannot turn the gateway into a load generator against it); concurrent lookups share one
  fetch.
A failed fetch keeps the set held (logged); it counts as a fetch for the rate limit.

httpx2 (the MCP SDK's HTTP client) fetches; PyJWT parses the set (jwt.PyJWKSet, which skips
keys it cannot use). PyJWT's own PyJWKClient fetches with blocking urllib and refetches on
every unknown kid, unlimited: neither fits a server's event loop.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, Final

import anyio
import httpx2
import jwt

__all__ = ["DEFAULT_MAX_AGE", "DEFAULT_MIN_INTERVAL", "RemoteJwks"]

log = logging.getLogger(__name__)

DEFAULT_MAX_AGE: Final = 300.0  # seconds a fetched set is used before it is fetched again
DEFAULT_MIN_INTERVAL: Final = 30.0  # the least seconds between two fetches
_FETCH_TIMEOUT: Final = 5.0
_MAX_BODY: Final = 1024 * 1024  # a JWKS is a few KiB; more is not one


class RemoteJwks:
    def __init__(
        self,
        url: str,
        max_age: float = DEFAULT_MAX_AGE,
        min_interval: float = DEFAULT_MIN_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = url
        self.max_age = max_age
        self.min_interval = min_interval
        self.clock = clock
        self.keys: dict[str, jwt.PyJWK] = {}
        self.fetched_at: float | None = None  # of the last good set
        self.tried_at: float | None = None  # of the last attempt, good or not
        self._lock = anyio.Lock()

    async def key(self, kid: Any) -> jwt.PyJWK:
        """The key a token's `kid` names; jwt.InvalidTokenError saying why when there is none
        (the refusal's reason is logged, never shown to the caller)."""
        async with self._lock:  # one fetch at a time; the others then read its result
            if self._stale():
                await self._fetch("the key set is older than its max age")
            if kid is None:
                if len(self.keys) != 1:
                    raise jwt.InvalidTokenError(
                        "the token names no key (kid) and the JWKS has several"
                    )
                return next(iter(self.keys.values()))
            if not isinstance(kid, str):
                raise jwt.InvalidTokenError("the token's kid is not a string")
            if kid not in self.keys and self._may_fetch():
                await self._fetch(f"unknown kid {kid[:64]!r}")
            found = self.keys.get(kid)
            if found is None:
                raise jwt.InvalidTokenError(f"no key {kid[:64]!r} in the JWKS at {self.url}")
            return found

    def _stale(self) -> bool:
        if self.fetched_at is None:
            return self._may_fetch()
        return self.clock() - self.fetched_at >= self.max_age and self._may_fetch()

    def _may_fetch(self) -> bool:
        return self.tried_at is None or self.clock() - self.tried_at >= self.min_interval

    async def _fetch(self, why: str) -> None:
        self.tried_at = self.clock()
        try:
            async with httpx2.AsyncClient(timeout=_FETCH_TIMEOUT) as client:
                response = await client.get(self.url, headers={"Accept": "application/json"})
            response.raise_for_status()
            if len(response.content) > _MAX_BODY:
                raise ValueError(f"the answer is over {_MAX_BODY} bytes")
            keyset = jwt.PyJWKSet.from_dict(response.json())
        except (httpx2.HTTPError, ValueError, jwt.PyJWKError) as exc:
            log.warning(
                "JWKS fetch from %s failed (%s); keeping the keys held: %s", self.url, why, exc
            )
            return
        # a key without a kid is kept under "" (only a token without a kid can use it)
        self.keys = {k.key_id or "": k for k in keyset.keys}
        self.fetched_at = self.tried_at
        log.info("JWKS fetched from %s (%s): %d keys", self.url, why, len(self.keys))
