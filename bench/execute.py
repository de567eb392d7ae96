"""tool_execute side by side: the same upstream call, direct and through four proxies, over stdio
and Streamable HTTP, with handshake-era and 2026-07-28 clients (the official mcp client).

Upstream: npm @modelcontextprotocol/server-everything, tool `echo` (every proxy reaches it over
stdio). Targets:
- direct:      the client talks to the upstream itself (handshake era only: it speaks no other);
- gateway:     `gatespec serve --profile gateway`, tool_execute(tool_id, args);
- transparent: `gatespec serve --profile transparent`, tool_execute(wire name, args);
- floor:       bench/floor_proxy.py, a pass-through proxy on the same SDK (one persistent
               client, low-level server): what any second Python hop costs at least;
- fastmcp:     FastMCP's proxy, bench/fastmcp_proxy.py (create_proxy(config, mode="auto")).
- mcp-proxy:   PyPI mcp-proxy (bench/peers.txt pins it), the stdio-to-HTTP bridge users run in
               front of one server, over Streamable HTTP only (it serves no stdio). It needs
               mcp<2, so `make bench` installs it in a venv of its own ($(VENV)/peers/mcp-proxy;
               GATESPEC_MCP_PROXY names another binary). It speaks no 2026-07-28: a sessionless
               client's first request is refused ("Unsupported protocol version"), so it is
               measured with handshake-era clients only.

Each round visits every (transport, era, target) case in a rotated order, so machine-load drift
falls on all of them alike: a fresh client session (stdio: a fresh server process; HTTP: one
server per target for the whole run), warm-up calls, sequential calls timed one by one, then
8 calls in flight at a time for throughput. Latency p50/p99 pool every round; the spread is the
lowest and highest per-round p50 (and throughput). Ratios use the median of the per-round
figures, which one round slowed by other work on the machine cannot move much. Server CPU per call is the CPU time (user +
system) the server process itself (not its upstream) used over those calls: on a machine other
people load, it moves much less than wall-clock latency does.

Run: `python bench/execute.py --out bench/results/execute.json` (after `make bench`'s install);
`--transport http --rounds 2 --out /tmp/x.json` measures Streamable HTTP alone, quickly.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import Any

import anyio
from harness import (
    BENCH,
    ERAS,
    EVERYTHING,
    GATESPEC,
    PYTHON,
    ROOT,
    Background,
    child_env,
    child_running,
    cpu_seconds,
    free_port,
    load_average,
    percentile,
    summary,
    write_config,
    write_result,
)
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

TARGETS = ("direct", "gateway", "transparent", "floor", "fastmcp", "mcp-proxy")
MCP_PROXY = os.environ.get(
    "GATESPEC_MCP_PROXY", str(ROOT / ".venv" / "peers" / "mcp-proxy" / "bin" / "mcp-proxy")
)
TRANSPORTS = ("stdio", "http")
INFLIGHT = 8
# Goals, restated against the floor (issue 8): a Python second hop cannot get near a direct
# call (the floor itself is ~3x direct), so gatespec is measured against the floor and FastMCP.
GOALS = {
    "stdio": {"vs_floor": 1.1, "throughput_vs_fastmcp": 2.0},
    "http": {
        "vs_floor": 1.2,
        "vs_fastmcp": 1.0,
        "throughput_vs_fastmcp": 2.0,
        "vs_mcp_proxy": 1.0,
        "throughput_vs_mcp_proxy": 1.0,
    },
}


def server_argv(target: str, config: Path, port: int | None) -> list[str]:
    """The command that serves `target` over stdio (port None) or HTTP on `port`."""
    http = ["--transport", "http", "--port", str(port)] if port else []
    if target == "direct":
        return [EVERYTHING, "streamableHttp" if port else "stdio"]
    if target in ("gateway", "transparent"):
        return [GATESPEC, "serve", "--config", str(config), "--profile", target, *http]
    if target == "floor":
        via = ["--http", str(port)] if port else []
        return [PYTHON, str(BENCH / "floor_proxy.py"), *via, "--", EVERYTHING, "stdio"]
    if target == "fastmcp":
        argv = [PYTHON, str(BENCH / "fastmcp_proxy.py"), "--config", str(config)]
        return argv + (["--http", str(port)] if port else [])
    if target == "mcp-proxy" and port:
        return [MCP_PROXY, "--host", "127.0.0.1", "--port", str(port), "--", EVERYTHING, "stdio"]
    raise ValueError(target)


Call = tuple[str, Callable[[int], dict[str, Any]]]


async def _resolve(client: Client, target: str) -> Call:
    """The tool to call and its arguments for call number i."""
    if target == "gateway":
        found = await client.call_tool("tool_browse", {"path": "/everything"})
        assert found.structured_content is not None, found
        tool_id = next(c["id"] for c in found.structured_content["cards"] if c["name"] == "echo")
    elif target == "transparent":
        listed = await client.list_tools()
        tool_id = next(t.name for t in listed.tools if "echo" in t.name)
    else:
        return "echo", lambda i: {"message": f"hello {i}"}
    return "tool_execute", lambda i: {"tool_id": tool_id, "args": {"message": f"hello {i}"}}


async def _session(
    transport: Any, era: str, target: str, calls: int, warmup: int, server_pid: Callable[[], int]
) -> tuple[list[float], float, float]:
    """(sequential latencies in ms, calls/s with INFLIGHT in flight, server CPU ms per call)
    over one session."""
    async with Client(transport, mode=era, cache=None) as client:
        name, args = await _resolve(client, target)
        for i in range(warmup):
            await client.call_tool(name, args(i))
        pid = server_pid()
        cpu_before = cpu_seconds(pid)
        times = []
        for i in range(calls):
            started = time.perf_counter()
            result = await client.call_tool(name, args(i))
            times.append((time.perf_counter() - started) * 1000)
            if result.is_error:
                raise RuntimeError(f"{target}: {name} failed: {result.content}")
        per_worker = max(1, calls // 4)

        async def worker(w: int) -> None:
            for i in range(per_worker):
                result = await client.call_tool(name, args(w * per_worker + i))
                if result.is_error:
                    raise RuntimeError(f"{target}: {name} failed: {result.content}")

        started = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for w in range(INFLIGHT):
                tg.start_soon(worker, w)
        throughput = INFLIGHT * per_worker / (time.perf_counter() - started)
        cpu_ms = (cpu_seconds(pid) - cpu_before) * 1000 / (calls + INFLIGHT * per_worker)
        return times, throughput, cpu_ms


def _cases(transports: tuple[str, ...], targets: tuple[str, ...]) -> list[tuple[str, str, str]]:
    """Every (transport, era, target) measured: direct and mcp-proxy speak the handshake era
    only, and mcp-proxy serves HTTP only."""
    return [
        (transport, era, target)
        for transport in transports
        for era in ERAS
        for target in targets
        if not (target in ("direct", "mcp-proxy") and era != "legacy")
        and not (target == "mcp-proxy" and transport != "http")
    ]


async def run(
    rounds: int,
    calls: int,
    warmup: int,
    log: Any,
    transports: tuple[str, ...] = TRANSPORTS,
    targets: tuple[str, ...] = TARGETS,
) -> dict[str, Any]:
    cases = _cases(transports, targets)
    samples: dict[str, list[float]] = {}
    round_p50: dict[str, list[float]] = {}
    round_tput: dict[str, list[float]] = {}
    round_cpu: dict[str, list[float]] = {}
    load = [load_average()]
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        config = write_config(Path(tmp) / "proxy.json", {"everything": [EVERYTHING, "stdio"]})
        devnull = stack.enter_context(open("/dev/null", "w"))  # noqa: SIM115
        servers: dict[str, Background] = {}
        for target in targets:
            if "http" not in transports:
                break
            port = free_port()
            argv = server_argv(target, config, port)
            env = {"PORT": str(port)} if target == "direct" else None
            servers[target] = Background(argv, port, env)
            stack.callback(servers[target].stop)
        for server in servers.values():
            server.wait_listening()
        for r in range(rounds):
            shift = r * len(cases) // rounds
            for transport, era, target in cases[shift:] + cases[:shift]:
                key = f"{transport}/{era}/{target}"
                if transport == "stdio":
                    argv = server_argv(target, config, None)
                    params = StdioServerParameters(command=argv[0], args=argv[1:], env=child_env())
                    via: Any = stdio_client(params, errlog=devnull)
                    pid = partial(child_running, os.getpid(), argv)
                else:
                    via = f"http://127.0.0.1:{servers[target].port}/mcp"
                    pid = partial(int, servers[target].proc.pid)
                times, tput, cpu = await _session(via, era, target, calls, warmup, pid)
                samples.setdefault(key, []).extend(times)
                round_p50.setdefault(key, []).append(percentile(times, 0.5))
                round_tput.setdefault(key, []).append(tput)
                round_cpu.setdefault(key, []).append(cpu)
                print(
                    f"round {r + 1}/{rounds} {key}: p50 {percentile(times, 0.5):.2f} ms, "
                    f"{tput:.0f} calls/s",
                    file=log,
                    flush=True,
                )
            load.append(load_average())
    results = {
        key: {
            "latency_ms": summary(samples[key], round_p50[key]),
            "throughput_per_s": summary(round_tput[key], round_tput[key], digits=0),
            "server_cpu_ms_per_call": summary(round_cpu[key], round_cpu[key]),
        }
        for key in samples
    }
    return {
        "upstream": "npm @modelcontextprotocol/server-everything, tool echo, over stdio",
        "client": "official mcp client (Client), one session per case and round",
        "rounds": rounds,
        "calls_per_round": calls,
        "inflight": INFLIGHT,
        "load_average": load,
        "cases": results,
        "ratios": ratios(results, transports, targets),
        "goals": GOALS,
    }


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 2) if b else None


def ratios(
    results: dict[str, Any],
    transports: tuple[str, ...] = TRANSPORTS,
    targets: tuple[str, ...] = TARGETS,
) -> dict[str, dict[str, float | None]]:
    """Per transport/era: gatespec against the floor, FastMCP and (HTTP, handshake era)
    mcp-proxy: p50, throughput and server CPU ratios."""
    out: dict[str, dict[str, float | None]] = {}
    for transport in transports:
        for era in ERAS:

            def p50(target: str, t: str = transport, e: str = era) -> float:
                return float(results[f"{t}/{e}/{target}"]["latency_ms"]["round_median"])

            def tput(target: str, t: str = transport, e: str = era) -> float:
                return float(results[f"{t}/{e}/{target}"]["throughput_per_s"]["p50"])

            def cpu(target: str, t: str = transport, e: str = era) -> float:
                return float(results[f"{t}/{e}/{target}"]["server_cpu_ms_per_call"]["p50"])

            row: dict[str, float | None] = {}
            for profile in ("gateway", "transparent"):
                row[f"{profile}_vs_floor"] = _ratio(p50(profile), p50("floor"))
                row[f"{profile}_vs_fastmcp"] = _ratio(p50(profile), p50("fastmcp"))
                row[f"{profile}_throughput_vs_fastmcp"] = _ratio(tput(profile), tput("fastmcp"))
                row[f"{profile}_cpu_vs_floor"] = _ratio(cpu(profile), cpu("floor"))
                row[f"{profile}_cpu_vs_fastmcp"] = _ratio(cpu(profile), cpu("fastmcp"))
                if f"{transport}/{era}/mcp-proxy" in results:
                    row[f"{profile}_vs_mcp_proxy"] = _ratio(p50(profile), p50("mcp-proxy"))
                    row[f"{profile}_throughput_vs_mcp_proxy"] = _ratio(
                        tput(profile), tput("mcp-proxy")
                    )
                    row[f"{profile}_cpu_vs_mcp_proxy"] = _ratio(cpu(profile), cpu("mcp-proxy"))
            if era == "legacy":
                row["floor_vs_direct"] = _ratio(p50("floor"), p50("direct"))
            out[f"{transport}/{era}"] = row
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=BENCH / "results" / "execute.json")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument(
        "--transport", choices=TRANSPORTS, action="append", help="only this one (repeatable)"
    )
    args = parser.parse_args()
    transports = tuple(args.transport) if args.transport else TRANSPORTS
    if not Path(EVERYTHING).exists():
        print("node_modules is missing: run `make install`", file=sys.stderr)
        return 1
    try:
        import fastmcp  # noqa: F401
    except ImportError:
        print("FastMCP is missing: `make bench` installs the bench extras", file=sys.stderr)
        return 1
    targets = TARGETS
    if "http" in transports and not Path(MCP_PROXY).exists():
        print(f"mcp-proxy is missing ({MCP_PROXY}): `make bench` installs it", file=sys.stderr)
        return 1
    if "http" not in transports:
        targets = tuple(t for t in TARGETS if t != "mcp-proxy")
    result = anyio.run(run, args.rounds, args.calls, args.warmup, sys.stderr, transports, targets)
    write_result(args.out, result, result["ratios"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
