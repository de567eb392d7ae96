"""Resident memory side by side: each proxy over stdio in front of the same upstream (npm
server-everything, tool echo), its RSS idle (after the first tools/list and IDLE_S seconds)
and after each checkpoint of sequential calls (1,000 and 10,000 by default, `--calls`). Targets: gatespec's gateway, transparent and aggregate profiles, the floor
(bench/floor_proxy.py) and FastMCP's proxy (bench/fastmcp_proxy.py), in a rotated order
per round. RSS is the proxy process's own (not its upstream's).

Growth after calls is the figure to watch: idle is mostly the interpreter and the mcp SDK
(importing `mcp` alone is ~55 MiB here); what a proxy keeps per call shows as a rise between
checkpoints. The gateway profile builds its cards, browse tree and token encoder on the
first browse (a one-time cost, runtime.py), which lands before the first checkpoint; its BM25
index and the semantic model wait for the first query browse, which this benchmark never makes.

By default (`--no-tracemalloc` skips it) each gatespec profile also runs once more with Python's allocations
traced (bench/tracemalloc_hook: a snapshot at idle and at each checkpoint) and the JSON says
what Python memory is held at each and which lines' allocations grew most between idle and the
last checkpoint, and between the first checkpoint and the last (what calls retain). RSS under
tracing is inflated, so those runs are kept apart from the RSS figures. Allocations outside
Python's allocator (tiktoken's Rust core, onnxruntime, numpy's buffers) are not traced.

Run: `python bench/memory.py --out bench/results/memory.json [--rounds 2] [--calls 1000,10000]
[--no-tracemalloc]`
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import tracemalloc
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import anyio
from execute import server_argv
from harness import (
    EVERYTHING,
    child_env,
    child_running,
    load_average,
    median,
    rss_mib,
    write_config,
    write_result,
)
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

TARGETS = ("gateway", "transparent", "aggregate", "floor", "fastmcp")
TRACED = ("gateway", "transparent")  # --tracemalloc: the profiles that build cards
HOOK = Path(__file__).resolve().parent / "tracemalloc_hook"
IDLE_S = 1.0
TOP_LINES = 10
GOALS = {"idle_vs_fastmcp": 1.0, "after_calls_vs_idle": 1.2}


async def _tool(client: Client, target: str) -> tuple[str, Any]:
    """The tool to call for `target` and how its arguments are built from call number i."""
    if target == "gateway":
        # A slow start (tracemalloc on a loaded machine) may not have catalogued the upstream
        # one second after the first tools/list: its path is then unknown for a moment.
        with anyio.fail_after(60):
            while (
                found := await client.call_tool("tool_browse", {"path": "/everything"})
            ).is_error:
                await anyio.sleep(0.2)
        assert found.structured_content is not None, found
        tool_id = next(c["id"] for c in found.structured_content["cards"] if c["name"] == "echo")
    elif target == "transparent":
        with anyio.fail_after(60):  # as above: the upstream's cards may not be listed yet
            while not (
                names := [t.name for t in (await client.list_tools()).tools if "echo" in t.name]
            ):
                await anyio.sleep(0.2)
        tool_id = names[0]
    else:
        name = "everything__echo" if target == "aggregate" else "echo"
        return name, lambda i: {"message": f"hello {i}"}
    return "tool_execute", lambda i: {"tool_id": tool_id, "args": {"message": f"hello {i}"}}


async def _snapshot(folder: Path, n: int) -> tracemalloc.Snapshot:
    """Snapshot number n of the traced proxy (bench/tracemalloc_hook)."""
    (folder / f"take-{n}").touch()
    with anyio.fail_after(60):
        while not (folder / f"snap-{n}.pickle").exists():
            await anyio.sleep(0.05)
    return tracemalloc.Snapshot.load(str(folder / f"snap-{n}.pickle"))


async def _measure(
    argv: list[str],
    target: str,
    checkpoints: list[int],
    log: Any,
    traced: Path | None = None,
) -> list[float]:
    """[idle RSS, RSS after each checkpoint's number of calls] of one fresh proxy process.
    With `traced` (a folder), the proxy's allocations are traced and a snapshot is kept at
    idle and at each checkpoint (`traced`/snap-N.pickle)."""
    env = child_env()
    if traced is not None:
        path = os.pathsep.join(p for p in (str(HOOK), env.get("PYTHONPATH", "")) if p)
        env = {
            **env,
            "PYTHONPATH": path,
            "PYTHONTRACEMALLOC": "1",
            "GATESPEC_BENCH_SNAPSHOTS": str(traced),
        }
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env)
    with open(os.devnull, "w") as devnull:
        async with Client(stdio_client(params, errlog=devnull), mode="legacy", cache=None) as c:
            await c.list_tools()
            await anyio.sleep(IDLE_S)
            pid = child_running(os.getpid(), argv)
            memory = [rss_mib(pid)]
            if traced is not None:
                await _snapshot(traced, 0)
            name, args = await _tool(c, target)
            done = 0
            for goal in checkpoints:
                while done < goal:
                    result = await c.call_tool(name, args(done))
                    if result.is_error:
                        raise RuntimeError(f"{target}: {name} failed: {result.content}")
                    done += 1
                memory.append(rss_mib(pid))
                if traced is not None:
                    await _snapshot(traced, len(memory) - 1)
            print(f"{target}: {memory} MiB", file=log, flush=True)
            return memory


def _grown(after: tracemalloc.Snapshot, before: tracemalloc.Snapshot) -> list[dict[str, Any]]:
    """The lines whose live allocations grew most from `before` to `after`."""
    out = []
    grown = [stat for stat in after.compare_to(before, "lineno") if stat.size_diff > 0]
    for stat in grown[:TOP_LINES]:
        frame = stat.traceback[0]
        out.append(
            {
                "where": f"{_short(frame.filename)}:{frame.lineno}",
                "kib": round(stat.size_diff / 1024, 1),
                "blocks": stat.count_diff,
            }
        )
    return out


def _short(filename: str) -> str:
    """A traced file's name from its package on (the standard library's from its own root)."""
    for marker in ("site-packages/", "/src/", "/generated/"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    if "/lib/python3" in filename:  # .../lib/python3.11/asyncio/events.py -> asyncio/events.py
        return filename.split("/lib/python3", 1)[1].split("/", 1)[-1]
    return filename


async def traced_run(
    target: str, argv: list[str], checkpoints: list[int], log: Any
) -> dict[str, Any]:
    """One run of `target` with its allocations traced: what Python holds and what grew."""
    with tempfile.TemporaryDirectory() as tmp:
        await _measure(argv, target, checkpoints, log, traced=Path(tmp))
        snaps = [
            tracemalloc.Snapshot.load(str(Path(tmp) / f"snap-{n}.pickle"))
            for n in range(len(checkpoints) + 1)
        ]
    labels = ["idle", *(f"after_{n}_calls" for n in checkpoints)]
    held = {
        label: round(sum(s.size for s in snap.statistics("filename")) / 2**20, 1)
        for label, snap in zip(labels, snaps, strict=True)
    }
    return {
        "traced_mib": held,
        "grown_idle_to_last": _grown(snaps[-1], snaps[0]),
        "grown_first_to_last_checkpoint": _grown(snaps[-1], snaps[1]) if len(snaps) > 2 else [],
    }


def _argv(target: str, config: Path) -> list[str]:
    if target == "aggregate":
        return [*server_argv("gateway", config, None)[:-1], "aggregate"]
    return server_argv(target, config, None)


async def run(
    rounds: int, checkpoints: list[int], log: Any, traced: bool = False
) -> dict[str, Any]:
    load = [load_average()]
    measured: dict[str, list[list[float]]] = {t: [] for t in TARGETS}
    with tempfile.TemporaryDirectory() as tmp, ExitStack():
        config = write_config(Path(tmp) / "proxy.json", {"everything": [EVERYTHING, "stdio"]})
        for r in range(rounds):
            order = TARGETS[r % len(TARGETS) :] + TARGETS[: r % len(TARGETS)]
            for target in order:
                measured[target].append(
                    await _measure(_argv(target, config), target, checkpoints, log)
                )
            load.append(load_average())
        snapshots = {
            t: await traced_run(t, _argv(t, config), checkpoints, log) for t in TRACED if traced
        }
    labels = ["idle", *(f"after_{n}_calls" for n in checkpoints)]
    out: dict[str, Any] = {}
    for target, runs in measured.items():
        figures = {label: round(median([m[i] for m in runs]), 1) for i, label in enumerate(labels)}
        figures["rounds"] = runs
        figures["growth_vs_idle"] = round(figures[labels[-1]] / figures["idle"], 2)
        out[target] = figures
    fastmcp_idle = out["fastmcp"]["idle"]
    return {
        "upstream": "npm @modelcontextprotocol/server-everything, tool echo, over stdio",
        "rounds": rounds,
        "checkpoints": checkpoints,
        "load_average": load,
        "rss_mib": out,
        "idle_vs_fastmcp": {t: round(out[t]["idle"] / fastmcp_idle, 2) for t in TARGETS},
        "goals": GOALS,
        **({"tracemalloc": snapshots} if snapshots else {}),
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--calls", default="1000,10000", help="comma-separated checkpoints")
    parser.add_argument("--out", type=Path, default=Path("bench/results/memory.json"))
    parser.add_argument(
        "--tracemalloc",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also one traced run per gatespec profile (default: on)",
    )
    args = parser.parse_args()
    checkpoints = sorted(int(n) for n in args.calls.split(","))
    result = anyio.run(run, args.rounds, checkpoints, sys.stderr, args.tracemalloc)
    write_result(args.out, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
