"""The aggregate profile (issue 10): a merged tools/list in front of ten upstreams, one of
them slow, and what each profile's tools/list costs a client in tokens.

1. Ten upstreams: the ten largest servers of the real catalog (LiveMCPBench Apache-2.0 +
   github-mcp-server MIT, ../shared/data/tool-retrieval/mcp_catalog.json), each its own
   bench/catalog_server.py process answering tools/list after FAST_S seconds (a remote server's
   round trip), and one of them after SLOW_S seconds.
   Measured with the official client over stdio (handshake era), ROUNDS interleaved calls each:
   every upstream's own tools/list, gatespec's aggregate tools/list (each call broadcasts
   afresh), and FastMCP's proxy over the same ten (when the bench extras are installed). The
   merged answer should take about as long as the slowest upstream alone, not the sum.
2. Token cost: the exact cl100k_base tokens of the tools/list a client receives from gatespec
   over the same ten upstreams in the aggregate, transparent and gateway profiles (each tool as
   compact JSON, as context.py counts passthrough).

Run: `python bench/aggregate.py --out bench/results/aggregate.json`.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from catalog_server import catalog_servers
from harness import BENCH, GATESPEC, PYTHON, load_average, percentile, write_result
from mcp import Client, StdioServerParameters

from gatespec.tokens import count_tokens

UPSTREAMS = 10
FAST_S = 0.05
SLOW_S = 0.5
ROUNDS = 20
GOAL_VS_SLOWEST = 1.3  # "about as long as the slowest upstream"


def _upstreams() -> dict[str, list[str]]:
    """config key -> argv of the ten upstreams; the last (smallest) is the slow one."""
    sizes = {name: len(tools) for name, tools in catalog_servers().items()}
    chosen = sorted(sizes, key=lambda n: (-sizes[n], n))[:UPSTREAMS]
    out = {}
    for i, name in enumerate(chosen):
        delay = SLOW_S if i == len(chosen) - 1 else FAST_S
        argv = [PYTHON, str(BENCH / "catalog_server.py"), "--server", name]
        out[f"s{i}"] = [*argv, "--list-delay", str(delay)]
    return out


def _config(path: Path, upstreams: dict[str, list[str]], profile: str) -> Path:
    body = {
        "mcpServers": {k: {"command": a[0], "args": a[1:]} for k, a in upstreams.items()},
        "gateway": {"profile": profile, "refresh_interval": 0},
    }
    path.write_text(json.dumps(body), encoding="utf-8")
    return path


async def _all_tools(client: Client) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor, cache_mode="refresh")
        tools += [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in page.tools]
        cursor = page.next_cursor
        if not cursor:
            return tools


def _client(argv: list[str]) -> Client:
    return Client(StdioServerParameters(command=argv[0], args=argv[1:]), mode="legacy", cache=None)


async def _latency(targets: dict[str, list[str]]) -> dict[str, list[float]]:
    """ROUNDS interleaved tools/list calls (all pages) per target, in seconds."""
    samples: dict[str, list[float]] = {k: [] for k in targets}
    async with AsyncExitStack() as stack:
        clients = {k: await stack.enter_async_context(_client(argv)) for k, argv in targets.items()}
        for client in clients.values():
            await _all_tools(client)  # warm: connected, listed once
        for _ in range(ROUNDS):
            for key, client in clients.items():
                start = time.perf_counter()
                await _all_tools(client)
                samples[key].append(time.perf_counter() - start)
    return samples


def _ms(samples: list[float]) -> dict[str, float]:
    return {
        "p50": round(percentile(samples, 0.5) * 1000, 1),
        "p99": round(percentile(samples, 0.99) * 1000, 1),
    }


async def _tokens(configs: dict[str, Path]) -> dict[str, dict[str, int]]:
    out = {}
    for profile, config in configs.items():
        async with _client([GATESPEC, "serve", "--config", str(config)]) as client:
            tools = await _all_tools(client)
        text = [json.dumps(t, ensure_ascii=False, separators=(",", ":")) for t in tools]
        out[profile] = {"tools_listed": len(tools), "tokens": sum(count_tokens(t) for t in text)}
    return out


async def run() -> dict[str, Any]:
    upstreams = _upstreams()
    loads = [load_average()]
    with tempfile.TemporaryDirectory(prefix="gatespec-bench-agg-") as tmp:
        work = Path(tmp)
        configs = {
            p: _config(work / f"{p}.json", upstreams, p)
            for p in ("aggregate", "transparent", "gateway")
        }
        targets = {f"direct/{k}": argv for k, argv in upstreams.items()}
        targets["gatespec"] = [GATESPEC, "serve", "--config", str(configs["aggregate"])]
        fastmcp = importlib.util.find_spec("fastmcp") is not None
        if fastmcp:
            plain = work / "fastmcp.json"
            plain.write_text(
                json.dumps(
                    {"mcpServers": json.loads(configs["aggregate"].read_text())["mcpServers"]}
                )
            )
            targets["fastmcp"] = [PYTHON, str(BENCH / "fastmcp_proxy.py"), "--config", str(plain)]
        samples = await _latency(targets)
        loads.append(load_average())
        tokens = await _tokens(configs)
    direct = {k.split("/")[1]: _ms(v) for k, v in samples.items() if k.startswith("direct/")}
    slowest = max(direct.values(), key=lambda r: r["p50"])
    total = round(sum(r["p50"] for r in direct.values()), 1)
    merged = _ms(samples["gatespec"])
    result: dict[str, Any] = {
        "upstreams": UPSTREAMS,
        "list_delay_s": {"slow": SLOW_S, "others": FAST_S},
        "rounds": ROUNDS,
        "load_average": loads,
        "client": "official mcp client, stdio, handshake era; tools/list with every page",
        "direct_ms": direct,
        "slowest_alone_p50_ms": slowest["p50"],
        "sum_of_upstreams_p50_ms": total,
        "gatespec_aggregate_ms": merged,
        "gatespec_vs_slowest": round(merged["p50"] / slowest["p50"], 2),
        "gatespec_vs_sum": round(merged["p50"] / total, 2),
        "goal_vs_slowest": GOAL_VS_SLOWEST,
        "tokens": tokens,
    }
    if "fastmcp" in samples:
        result["fastmcp_ms"] = _ms(samples["fastmcp"])
        result["fastmcp_vs_slowest"] = round(result["fastmcp_ms"]["p50"] / slowest["p50"], 2)
    return result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=BENCH / "results" / "aggregate.json")
    args = parser.parse_args()
    write_result(args.out, anyio.run(run))
    return 0


if __name__ == "__main__":
    sys.exit(main())
