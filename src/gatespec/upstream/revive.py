"""Keeping upstreams connected while serving (AM-UNAVAILABLE-NOT-MISSING).

Every upstream that is down is retried on its own, in the background (`UpstreamPool.revive`):
soon after it failed (`FIRST_RETRY`), then after twice as long each time, up to the refresh
interval. A retry never waits for another upstream's connect, so one hanging handshake keeps
nobody else out, and a crashed upstream is served again as soon as it reconnects; its tools
stayed in the catalog meanwhile, answered "unavailable". `on_back(key)` runs after each retry
settles (the runtime rebuilds its catalog).
"""

from __future__ import annotations

import logging
from typing import Final

import anyio

from gatespec.upstream.pool import SettledCallback, UpstreamPool

logger = logging.getLogger(__name__)

__all__ = ["FIRST_RETRY", "keep_connected"]

FIRST_RETRY: Final = 0.5  # seconds from a failure to its first retry
_POLL: Final = 0.25  # how often the states are looked at (a cheap check)


async def keep_connected(pool: UpstreamPool, interval: float, on_back: SettledCallback) -> None:
    """Retry every upstream that is down, each on its own backoff capped at `interval`
    seconds; returns at once when the interval is 0 (never retry)."""
    if interval <= 0:
        return
    wait: dict[str, float] = {}  # the next backoff of each upstream that is down
    due: dict[str, float] = {}  # when it may be tried again
    while True:
        now = anyio.current_time()
        for status in pool.statuses():
            key = status.key
            if status.state == "connected":
                wait.pop(key, None)
                due.pop(key, None)
            elif now >= due.get(key, now) and pool.revive(key, on_back):
                delay = wait.get(key, min(FIRST_RETRY, interval))
                due[key] = now + delay
                wait[key] = min(delay * 2, interval)
        await anyio.sleep(_POLL)
