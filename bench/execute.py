"""tool_execute round trip through the gateway against calling the same upstream directly, in the
same run, both over stdio with the official mcp client.

Direct:  client -> mcp-server-everything (stdio) `echo`
Gateway: client -> `gatespec serve` (stdio, gateway mode) -> mcp-server-everything `echo`,
         called as tool_execute(tool_id, {"message": ...})

Run: `python bench/execute.py --out bench/results/execute.json` (after `make install`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
EVERYTHING = ROOT / "node_modules" / ".bin" / "mcp-server-everything"
GATESPEC = Path(sys.executable).parent / "gatespec"


async def _timed_calls(
    params: StdioServerParameters, name: str, make_args: Any, n: int, warmup: int
) -> list[float]:
    async with Client(params) as client:
        for i in range(warmup):
            await client.call_tool(name, make_args(i))
        times = []
        for i in range(n):
            started = time.perf_counter()
            result = await client.call_tool(name, make_args(i))
            times.append((time.perf_counter() - started) * 1000)
            assert not result.is_error, result
        return times


async def _tool_id(params: StdioServerParameters) -> str:
    async with Client(params) as client:
        found = await client.call_tool("tool_browse", {"path": "/everything"})
        cards = found.structured_content["cards"]
        return next(c["id"] for c in cards if c["name"] == "echo")


def _summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "calls": len(times),
        "mean_ms": round(statistics.fmean(times), 3),
        "p50_ms": round(ordered[len(ordered) // 2], 3),
        "p99_ms": round(ordered[max(0, int(len(ordered) * 0.99) - 1)], 3),
    }


async def run(n: int, warmup: int) -> dict[str, Any]:
    direct = StdioServerParameters(command=str(EVERYTHING), args=["stdio"])
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "gateway.json"
        config.write_text(
            json.dumps(
                {"mcpServers": {"everything": {"command": str(EVERYTHING), "args": ["stdio"]}}}
            )
        )
        gateway = StdioServerParameters(
            command=str(GATESPEC), args=["serve", "--config", str(config), "--mode", "gateway"]
        )
        tool_id = await _tool_id(gateway)
        rounds: list[dict[str, Any]] = []
        # Alternate the two so that machine load drifts affect both alike.
        for _ in range(3):
            d = await _timed_calls(direct, "echo", lambda i: {"message": f"hello {i}"}, n, warmup)
            g = await _timed_calls(
                gateway,
                "tool_execute",
                lambda i: {"tool_id": tool_id, "args": {"message": f"hello {i}"}},
                n,
                warmup,
            )
            rounds.append({"direct": d, "gateway": g})
    direct_all = [t for r in rounds for t in r["direct"]]
    gateway_all = [t for r in rounds for t in r["gateway"]]
    d, g = _summary(direct_all), _summary(gateway_all)
    return {
        "upstream": "npm @modelcontextprotocol/server-everything, tool echo, stdio",
        "direct": d,
        "gateway": g,
        "ratio_p50": round(g["p50_ms"] / d["p50_ms"], 2),
        "ratio_mean": round(g["mean_ms"] / d["mean_ms"], 2),
        "goal_ratio": 1.15,
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "execute.json")
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    if not EVERYTHING.exists():
        print("node_modules is missing: run `make install`", file=sys.stderr)
        return 1
    result = anyio.run(run, args.calls, 20)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
