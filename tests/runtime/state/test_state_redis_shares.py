"""Issue 22 item 6 on the shared store: per-identity shares of the artifacts kept in a real
Valkey (gatespec.state.redis_shares), with the in-memory store's rule (ArtifactStore): an
identity over its share evicts its own oldest artifacts; over the store's total, the identity
holding the most gives way first; one identity's flood never evicts an identity holding less.
Two RedisState objects stand for two replicas writing to the same store."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from gatespec.state import StateConfig
from gatespec.state.redis_backend import RedisState
from gatespec_surface.errors import ErrorCode, GatewayError
from tests.fixtures.valkey_server import Valkey

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

ALICE, BOB = "alice|session-1", "bob|session-9"


async def replicas(valkey: Valkey, **bounds: Any) -> tuple[RedisState, RedisState]:
    config = StateConfig(backend="redis", url=valkey.url, ttl=60, **bounds)
    return RedisState(config), RedisState(config)


@pytest.fixture
async def pair(valkey: Valkey) -> AsyncIterator[tuple[RedisState, RedisState]]:
    a, b = await replicas(valkey, max_total_bytes=1000)
    try:
        yield a, b
    finally:
        await a.aclose()
        await b.aclose()


async def store(state: RedisState, data: bytes, owner: str) -> str:
    writer = state.artifacts.writer()
    handle = writer.put(data, "text/plain", "label", owner=owner)["handle"]
    await state.artifacts.flush(writer)
    return str(handle)


async def readable(state: RedisState, handle: str, owner: str) -> bool | str:
    """True when the owner reads it back, else the VIEW_FAILED message."""
    try:
        await state.artifacts.get(handle, owner)
        return True
    except GatewayError as exc:
        assert exc.code is ErrorCode.VIEW_FAILED
        return exc.message


async def test_one_identitys_flood_evicts_its_own_artifacts_not_anothers(pair: Any) -> None:
    a, b = pair
    bobs = await store(b, b"b" * 300, BOB)
    alices = [await store((a, b)[i % 2], bytes([65 + i]) * 200, ALICE) for i in range(10)]
    # Bob holds less than Alice throughout: his artifact stays
    assert await readable(a, bobs, BOB) is True
    # Alice's newest fit beside Bob's 300 bytes within the 1000; her oldest gave way
    kept = [await readable(b, h, ALICE) is True for h in alices]
    assert kept == [False] * 7 + [True] * 3
    said = await readable(a, alices[0], ALICE)
    assert isinstance(said, str) and "evicted" in said
    # another identity asking for Alice's evicted handle learns nothing (AM-ACCESS-NO-LEAK)
    assert "unknown or has expired" in str(await readable(a, alices[0], BOB))


async def test_an_identity_over_its_share_evicts_its_own_oldest(valkey: Valkey) -> None:
    a, b = await replicas(valkey, max_total_bytes=10_000, max_share_bytes=500)
    try:
        bobs = await store(a, b"b" * 400, BOB)
        alices = [await store(b, bytes([65 + i]) * 200, ALICE) for i in range(5)]
        assert [await readable(a, h, ALICE) is True for h in alices] == [False] * 3 + [True] * 2
        assert await readable(b, bobs, BOB) is True
        # an artifact over one identity's whole share is never accepted for storage
        assert not a.artifacts.writer().fits(501)
    finally:
        await a.aclose()
        await b.aclose()


async def test_bytes_two_identities_share_survive_one_evicting_them(pair: Any) -> None:
    a, b = pair
    same = b"s" * 300
    bobs = await store(a, same, BOB)  # stored once (content-addressed), named twice
    alices_copy = await store(b, same, ALICE)
    for i in range(5):  # Alice's flood evicts her copy of the shared bytes
        await store(a, bytes([70 + i]) * 200, ALICE)
    assert "evicted" in str(await readable(a, alices_copy, ALICE))
    assert await readable(b, bobs, BOB) is True  # Bob's copy still has its bytes


async def test_the_accounting_keeps_the_store_within_its_total(pair: Any, valkey: Valkey) -> None:
    import redis

    a, b = pair
    for n, owner in enumerate([ALICE, BOB, "carol|s", ALICE, BOB, "dave|s"] * 3):
        await store((a, b)[n % 2], bytes([65 + n]) * 150, owner)
    with redis.Redis(port=valkey.port) as client:
        held = {k.decode(): int(v) for k, v in client.hgetall("gatespec:shares").items()}
        blobs = client.keys("gatespec:blob:*")
        live = [k for k in client.keys("gatespec:art:*") if not client.hget(k, "evicted")]
    assert sum(held.values()) <= 1000
    assert len(live) == len(blobs) == sum(held.values()) // 150


async def test_the_count_bound_evicts_from_the_identity_holding_the_most(valkey: Valkey) -> None:
    """max_artifacts holds on the shared store as in memory: past it, the identity holding the
    most artifacts gives way (its oldest first); bytes are far from their bound here."""
    a, b = await replicas(valkey, max_total_bytes=1_000_000, max_artifacts=4)
    try:
        bobs = await store(a, b"bob", BOB)
        alices = [await store((a, b)[i % 2], bytes([65 + i]) * 10, ALICE) for i in range(6)]
        assert await readable(b, bobs, BOB) is True  # Bob holds 1 of the 4 throughout
        kept = [await readable(a, h, ALICE) is True for h in alices]
        assert kept == [False] * 3 + [True] * 3
        said = await readable(b, alices[0], ALICE)
        assert isinstance(said, str) and "4 artifacts" in said
    finally:
        await a.aclose()
        await b.aclose()
