"""Start-up and scale, side by side: how long until a proxy answers its first tools/list, next
to how long its slowest upstream alone takes, and what the proxy holds in memory once idle.

1. Three real upstreams (npm server-everything, PyPI mcp-server-time and mcp-server-git):
   each upstream's own start (spawn -> its first tools/list answered, direct client), then
   gatespec (gateway profile) and FastMCP's proxy with all three: spawn -> first tools/list, and
   the proxy process's RSS after a second idle; for gatespec also its RSS once a query browse
   has loaded the embedding model (which nothing loads before a query). The gateway profile's
   first tools/list holds its meta-tools only: time to the whole catalog is measured on the
   aggregate profile, whose tools/list is the namespaced union of the upstreams' (as
   FastMCP's proxy's is), polled until it holds every upstream tool; the bench reports how
   many the first list held. The floor beside them: the three upstreams spawned at once, no
   proxy, until each has listed (their start-ups contend for the same cores); and the same with
   an empty server on gatespec's SDK spawned beside them (bench/floor_proxy.py with no
   upstream, also measured alone): the start-up no proxy on this SDK can go below.
2. A 10,000-tool upstream (bench/many_tools_server.py, a real MCP server process): its own
   start; gatespec's spawn -> first tools/list, idle RSS, then tool_browse(query) over MCP (the
   first browse admits the cards and builds the index: reported apart) and RSS after browsing,
   ranked lexically (GATESPEC_SEMANTIC=off: see LEXICAL_ENV); and,
   in this process on the same tools, the catalog, cards, ranking index and browse tree build
   times (wall clock and CPU: the machine is shared, CPU time moves less with others' load).
   The first query browse builds the cards' admission and the index; the first path browse
   builds the tree; a card is fitted (its tokens counted) when a browse first shows it.

Every client is the official mcp client over stdio in the handshake era (what the upstreams
speak). Rounds are interleaved; medians and the spread between rounds are reported.

Run: `python bench/startup.py --out bench/results/startup.json`.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from harness import (
    BENCH,
    EVERYTHING,
    GATESPEC,
    PYTHON,
    child_env,
    child_running,
    cpu_seconds,
    load_average,
    median,
    percentile,
    rss_mib,
    write_config,
    write_result,
)
from many_tools_server import DATA, synthetic_tools
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

VENV_BIN = Path(sys.executable).parent
SCALE_TOOLS = 10_000
IDLE_S = 1.0
GOALS = {
    "three_vs_slowest": 1.3,
    "scale_vs_upstream": 1.5,
    "first_browse_vs_upstream": 1.2,
    "cards_index_tree_s": 1.0,
}
SDK_FLOOR = "sdk_server_no_upstream"  # bench/floor_proxy.py with no upstream: see three_upstreams
MODEL_QUERY = "what time is it in Tokyo"
WHOLE_POLL_S = 0.02  # tools/list polling until a proxy's list holds every upstream's tools
WHOLE_LIMIT_S = 60.0
MODEL_SETTLE_S = 4.0  # the model loads (~0.4 s) and encodes 29 tools (~1 s; cached after)
# The 10,000-tool runs rank lexically: a first query would start encoding 10,000 tools in the
# background (minutes of CPU) under the timings; bench/retrieval.py measures the semantic half.
LEXICAL_ENV = child_env(GATESPEC_SEMANTIC="off")


async def _first_list(
    argv: list[str],
    *,
    rss: bool = False,
    browse: list[str] | None = None,
    settle: float = 0.0,
    env: dict[str, str] | None = None,
) -> tuple[float, list[float], list[float]]:
    """(seconds from spawn to the first tools/list answer, [RSS MiB after IDLE_S, and after
    browsing] when asked, tool_browse(query) latencies in ms). With `settle`, the RSS after
    browsing is taken `settle` seconds later, after one more browse: time for the embedding
    model the first query started loading."""
    params = StdioServerParameters(
        command=argv[0], args=argv[1:], env=env if env is not None else child_env()
    )
    latencies: list[float] = []
    memory: list[float] = []
    with open(os.devnull, "w") as devnull:
        started = time.perf_counter()
        async with Client(stdio_client(params, errlog=devnull), mode="legacy", cache=None) as c:
            await c.list_tools()
            elapsed = time.perf_counter() - started
            if rss:
                await anyio.sleep(IDLE_S)
                memory.append(_server_rss(argv))
            for query in browse or ():
                t0 = time.perf_counter()
                result = await c.call_tool("tool_browse", {"query": query})
                latencies.append((time.perf_counter() - t0) * 1000)
                if result.is_error:
                    raise RuntimeError(f"tool_browse failed: {result.content}")
            if settle and browse:
                await anyio.sleep(settle)
                await c.call_tool("tool_browse", {"query": browse[0]})
            if rss and browse:
                memory.append(_server_rss(argv))
    return elapsed, memory, latencies


def _upstream_tools(listed: list[Any], expected: set[tuple[str, str]]) -> int:
    """How many of the upstream tools `expected` ((upstream key, tool name) pairs) a proxy's
    tools/list holds: a listed name starting with the key and ending with the tool's name
    (each proxy spells the namespace its own way; other entries, meta-tools, do not count)."""
    names = [t.name for t in listed]
    return sum(any(n.startswith(k) and n.endswith(t) for n in names) for k, t in expected)


async def _whole_catalog(
    argv: list[str], expected: set[tuple[str, str]]
) -> tuple[float, int, float]:
    """(seconds from spawn to the first tools/list, how many upstream tools that list held,
    seconds from spawn until a tools/list holds all of `expected`: the whole catalog). Polled every
    WHOLE_POLL_S after the first list (a proxy that lists only the upstreams ready so far
    fills in as the others connect)."""
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=child_env())
    with open(os.devnull, "w") as devnull:
        started = time.perf_counter()
        async with Client(stdio_client(params, errlog=devnull), mode="legacy", cache=None) as c:
            held = _upstream_tools((await c.list_tools()).tools, expected)
            first = time.perf_counter() - started
            count = held
            while count < len(expected):
                if time.perf_counter() - started > WHOLE_LIMIT_S:
                    raise RuntimeError(f"{argv[0]}: {count} of {len(expected)} tools listed")
                await anyio.sleep(WHOLE_POLL_S)
                count = _upstream_tools((await c.list_tools()).tools, expected)
            whole = time.perf_counter() - started
    return first, held, whole


async def _together(upstreams: dict[str, list[str]]) -> float:
    """Seconds from spawning every upstream at once (no proxy) until each has answered its
    first tools/list: what starting them together costs on this machine's cores."""
    started = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for argv in upstreams.values():
            tg.start_soon(_first_list, argv)
    return time.perf_counter() - started


def _server_rss(argv: list[str]) -> float:
    """RSS of the server process this benchmark spawned for `argv` (not its upstreams)."""
    return rss_mib(child_running(os.getpid(), argv))


def _spread(values: list[float], digits: int = 3) -> dict[str, Any]:
    return {
        "median": round(median(values), digits),
        "spread": [round(min(values), digits), round(max(values), digits)],
        "rounds": [round(v, digits) for v in values],
    }


async def three_upstreams(rounds: int, tmp: Path, log: Any) -> dict[str, Any]:
    repo = tmp / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    upstreams = {
        "everything": [EVERYTHING, "stdio"],
        "time": [str(VENV_BIN / "mcp-server-time")],
        "git": [str(VENV_BIN / "mcp-server-git"), "--repository", str(repo)],
    }
    config = write_config(tmp / "three.json", upstreams)
    serve = [GATESPEC, "serve", "--config", str(config), "--profile"]
    proxies = {
        "gatespec": [*serve, "gateway"],
        "fastmcp": [PYTHON, str(BENCH / "fastmcp_proxy.py"), "--config", str(config)],
        # The floor of any server on gatespec's SDK: no upstream, an empty tools/list. Its start
        # is the interpreter and the SDK's imports, which no proxy on this SDK can skip.
        SDK_FLOOR: [PYTHON, str(BENCH / "floor_proxy.py")],
    }
    # The profile whose tools/list is the whole namespaced catalog (FastMCP's proxy lists the
    # same): time to the whole catalog, and what the first tools/list holds.
    whole_lists = {"gatespec_aggregate": [*serve, "aggregate"], "fastmcp": proxies["fastmcp"]}
    expected = {(k, t.name) for k, argv in upstreams.items() for t in await _tools(argv)}
    counts = {k: sum(key == k for key, _ in expected) for k in upstreams}
    starts: dict[str, list[float]] = {}
    memory: dict[str, list[float]] = {}
    with_model: list[float] = []
    whole: dict[str, dict[str, list[float]]] = {
        k: {"first_list_s": [], "first_list_tools": [], "whole_catalog_s": []} for k in whole_lists
    }
    runs: list[tuple[str, str, list[str]]] = [
        ("own", name, argv) for name, argv in upstreams.items()
    ]
    runs += [("together", "together", []), ("together", "together_sdk", [])]
    runs += [("proxy", name, argv) for name, argv in proxies.items()]
    runs += [("whole", name, argv) for name, argv in whole_lists.items()]
    for r in range(rounds):
        for kind, name, argv in runs[r % len(runs) :] + runs[: r % len(runs)]:
            if kind == "whole":
                first, held, complete = await _whole_catalog(argv, expected)
                for key, value in zip(whole[name], (first, held, complete), strict=True):
                    whole[name][key].append(value)
                print(
                    f"round {r + 1}/{rounds} {name}: first list {first:.2f} s holding "
                    f"{held}/{len(expected)}, whole {complete:.2f} s",
                    file=log,
                    flush=True,
                )
                continue
            if kind == "together":
                # together_sdk: the three plus an empty server on gatespec's SDK, all at once.
                floor = {SDK_FLOOR: proxies[SDK_FLOOR]} if name == "together_sdk" else {}
                elapsed = await _together({**upstreams, **floor})
                starts.setdefault(name, []).append(elapsed)
                print(f"round {r + 1}/{rounds} {name}: {elapsed:.2f} s", file=log, flush=True)
                continue
            # gatespec, once idle is measured: one query browse, which loads the model.
            query = [MODEL_QUERY] if name == "gatespec" else None
            elapsed, rss, _ = await _first_list(
                argv, rss=kind == "proxy", browse=query, settle=MODEL_SETTLE_S if query else 0.0
            )
            starts.setdefault(name, []).append(elapsed)
            if rss:
                memory.setdefault(name, []).append(rss[0])
            if query:
                with_model.append(rss[1])
            print(f"round {r + 1}/{rounds} {name}: {elapsed:.2f} s", file=log, flush=True)
    slowest = [max(starts[k][r] for k in upstreams) for r in range(rounds)]

    def vs_slowest(times: list[float]) -> dict[str, Any]:
        return _spread([s / w for s, w in zip(times, slowest, strict=True)], 2)

    return {
        "upstreams": {k: _spread(starts[k]) for k in upstreams},
        "upstream_tools": counts,
        "slowest_upstream_s": _spread(slowest),
        # No proxy: the three spawned at once, until all three have listed. On 2 cores their
        # start-ups contend: no proxy can bring the whole catalog in before this.
        "together_no_proxy_s": _spread(starts["together"]),
        "together_vs_slowest": vs_slowest(starts["together"]),
        # ... and with an empty server on gatespec's SDK starting beside them: the floor of
        # any proxy on this SDK that starts its upstreams as it starts itself.
        "together_sdk_s": _spread(starts["together_sdk"]),
        "together_sdk_vs_slowest": vs_slowest(starts["together_sdk"]),
        "proxies": {
            name: {
                "first_list_s": _spread(starts[name]),
                "vs_slowest": vs_slowest(starts[name]),
                "idle_rss_mib": _spread(memory[name], 1),
            }
            for name in proxies
        },
        "whole_catalog": {
            name: {
                "first_list_s": _spread(w["first_list_s"]),
                "first_list_tools": [int(n) for n in w["first_list_tools"]],
                "catalog_tools": len(expected),
                "whole_catalog_s": _spread(w["whole_catalog_s"]),
                "vs_slowest": vs_slowest(w["whole_catalog_s"]),
                "vs_together": _spread(
                    [a / b for a, b in zip(w["whole_catalog_s"], starts["together"], strict=True)],
                    2,
                ),
                "vs_together_sdk": _spread(
                    [
                        a / b
                        for a, b in zip(w["whole_catalog_s"], starts["together_sdk"], strict=True)
                    ],
                    2,
                ),
            }
            for name, w in whole.items()
        },
        "gatespec_rss_with_model_mib": _spread(with_model, 1),
    }


async def _tools(argv: list[str]) -> list[Any]:
    """One upstream's own tools/list."""
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=child_env())
    with open(os.devnull, "w") as devnull:
        async with Client(stdio_client(params, errlog=devnull), mode="legacy", cache=None) as c:
            return list((await c.list_tools()).tools)


def _queries() -> list[str]:
    tasks = json.loads((DATA / "mcp_queries_dev.json").read_text(encoding="utf-8"))
    return [t["query"][:512] for t in tasks[:40]]


async def scale(rounds: int, tmp: Path, log: Any) -> dict[str, Any]:
    upstream = [PYTHON, str(BENCH / "many_tools_server.py"), "--tools", str(SCALE_TOOLS)]
    config = write_config(tmp / "scale.json", {"many": upstream})
    gateway = [GATESPEC, "serve", "--config", str(config), "--profile", "gateway"]
    own: list[float] = []
    ready: list[float] = []
    ratio: list[float] = []
    browse_ratio: list[float] = []
    idle: list[float] = []
    browsed: list[float] = []
    first: list[float] = []
    browse: list[float] = []
    queries = _queries()
    for r in range(rounds):
        pair = [("upstream", upstream), ("gatespec", gateway)]
        for name, argv in pair if r % 2 == 0 else pair[::-1]:
            elapsed, rss, lat = await _first_list(
                argv,
                rss=name == "gatespec",
                browse=queries if name == "gatespec" else None,
                env=LEXICAL_ENV if name == "gatespec" else None,
            )
            (own if name == "upstream" else ready).append(elapsed)
            if rss:
                idle.append(rss[0])
                browsed.append(rss[1])
                first.append(lat[0])
                browse.extend(lat[1:])
            print(f"round {r + 1}/{rounds} {name}: {elapsed:.2f} s", file=log, flush=True)
        ratio.append(ready[-1] / own[-1])
        # spawn -> first tools/list, plus the first query browse's own time (the idle second
        # between them, for the RSS, left out): against the upstream's own first list.
        browse_ratio.append((ready[-1] + first[-1] / 1000) / own[-1])
    return {
        "tools": SCALE_TOOLS,
        "upstream_first_list_s": _spread(own),
        "gatespec_first_list_s": _spread(ready),
        "vs_upstream": _spread(ratio, 2),
        "idle_rss_mib": _spread(idle, 1),
        "rss_after_browsing_mib": _spread(browsed, 1),
        "first_browse_ms": _spread(first, 1),
        "first_browse_vs_upstream": _spread(browse_ratio, 2),
        "browse_query_ms": {
            "n": len(browse),
            "p50": round(percentile(browse, 0.5), 3),
            "p99": round(percentile(browse, 0.99), 3),
        },
        "build_s": build_phases(rounds),
    }


async def semantic_browse(rounds: int, tmp: Path, log: Any) -> dict[str, Any]:
    """tool_browse(query) over MCP at SCALE_TOOLS tools with the semantic model warm, queries
    encoded by the shipped model ("shipped") and in int8 arithmetic ("int8",
    GATESPEC_QUERY_INT8=on), in interleaved rounds: the first query loads the model and the
    index (from the user's vector cache: the first run ever encodes the catalog, minutes of
    CPU; the first int8 run also builds the int8 model), then, once the gateway's CPU has
    gone quiet, every query is timed, with the server's CPU per query (steadier than wall
    time under load) and its RSS after browsing."""
    upstream = [PYTHON, str(BENCH / "many_tools_server.py"), "--tools", str(SCALE_TOOLS)]
    config = write_config(tmp / "semantic.json", {"many": upstream})
    argv = [GATESPEC, "serve", "--config", str(config), "--profile", "gateway"]
    env = {
        k: v
        for k, v in child_env().items()
        if k not in ("GATESPEC_SEMANTIC", "GATESPEC_QUERY_INT8")
    }
    modes = {"shipped": env, "int8": {**env, "GATESPEC_QUERY_INT8": "on"}}
    queries = _queries()
    times: dict[str, list[float]] = {m: [] for m in modes}
    cpu: dict[str, list[float]] = {m: [] for m in modes}
    rss: dict[str, list[float]] = {m: [] for m in modes}
    for r in range(rounds):
        for mode in list(modes) if r % 2 == 0 else list(modes)[::-1]:
            params = StdioServerParameters(command=argv[0], args=argv[1:], env=modes[mode])
            with open(os.devnull, "w") as devnull:
                async with Client(
                    stdio_client(params, errlog=devnull), mode="legacy", cache=None
                ) as c:
                    await c.list_tools()
                    pid = child_running(os.getpid(), argv)
                    await c.call_tool("tool_browse", {"query": queries[0]})  # starts the model
                    await _quiet(pid)
                    for query in queries:  # warm-up: the index is in place
                        await c.call_tool("tool_browse", {"query": query})
                    before = cpu_seconds(pid)
                    for query in queries * 2:
                        t0 = time.perf_counter()
                        await c.call_tool("tool_browse", {"query": query})
                        times[mode].append((time.perf_counter() - t0) * 1000)
                    cpu[mode].append((cpu_seconds(pid) - before) * 1000 / (2 * len(queries)))
                    rss[mode].append(rss_mib(pid))
            print(
                f"round {r + 1}/{rounds} semantic browse ({mode}): {median(times[mode]):.1f} ms",
                file=log,
            )
    return {
        mode: {
            "n": len(times[mode]),
            "p50": round(percentile(times[mode], 0.5), 3),
            "p99": round(percentile(times[mode], 0.99), 3),
            "server_cpu_ms_per_query": _spread(cpu[mode], 2),
            "rss_after_browsing_mib": _spread(rss[mode], 1),
        }
        for mode in modes
    }


async def _quiet(pid: int, limit_s: float = 600.0) -> None:
    """Wait until `pid` uses under 5% of a core over a second (its model loaded and index
    built), at most `limit_s`."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        before = cpu_seconds(pid)
        await anyio.sleep(1.0)
        if cpu_seconds(pid) - before < 0.05:
            return


def build_phases(rounds: int) -> dict[str, Any]:
    """The snapshot gatespec builds from a listing, phase by phase, in this process: the
    catalog (built when the upstream lists), the cards (which tools are admitted: each card is
    fitted when a browse first shows it) and the lexical index (both built by the first query
    browse), the browse tree (built by the first path browse)."""
    from gatespec.browse import BrowseTree, build_ranker
    from gatespec.cards import admit_cards
    from gatespec.catalog import Catalog
    from gatespec.tokens import encoder

    encoder()  # loaded once per process; its load is part of start-up, not of a build
    names = ("catalog", "cards", "index", "tree")
    wall: dict[str, list[float]] = {k: [] for k in names}
    cpu: dict[str, list[float]] = {k: [] for k in names}
    for _ in range(rounds):
        tools = {"many": synthetic_tools(SCALE_TOOLS)}
        gc.collect()
        marks = [(time.perf_counter(), time.process_time())]
        catalog = Catalog.build(tools)
        marks.append((time.perf_counter(), time.process_time()))
        catalog, cards = admit_cards(catalog)  # admitted; each card is fitted when shown
        marks.append((time.perf_counter(), time.process_time()))
        index = build_ranker(catalog, semantic=False, background=False).lexical  # BM25F
        assert len(index) == len(catalog)
        marks.append((time.perf_counter(), time.process_time()))
        BrowseTree(catalog, cards)
        marks.append((time.perf_counter(), time.process_time()))
        for key, before, after in zip(names, marks, marks[1:], strict=False):
            wall[key].append(after[0] - before[0])
            cpu[key].append(after[1] - before[1])
    out: dict[str, Any] = {}
    for label, times in (("wall", wall), ("cpu", cpu)):
        total = [sum(v) for v in zip(times["cards"], times["index"], times["tree"], strict=True)]
        out[label] = {
            **{k: _spread(v) for k, v in times.items()},
            "cards_index_tree": _spread(total),
        }
    return out


async def run(rounds: int, log: Any) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        load = [load_average()]
        three = await three_upstreams(rounds, Path(tmp), log)
        load.append(load_average())
        big = await scale(rounds, Path(tmp), log)
        load.append(load_average())
        semantic = await semantic_browse(rounds, Path(tmp), log)
        big["browse_query_semantic_ms"] = semantic["shipped"]
        big["browse_query_semantic_int8_ms"] = semantic["int8"]
        load.append(load_average())
    return {"rounds": rounds, "load_average": load, "three": three, "scale": big, "goals": GOALS}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=BENCH / "results" / "startup.json")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--semantic-only", action="store_true", help="only the semantic browse at scale"
    )
    parser.add_argument("--three-only", action="store_true", help="only the three upstreams")
    parser.add_argument(
        "--scale-only", action="store_true", help="only the 10,000-tool rows (semantic included)"
    )
    args = parser.parse_args()
    if args.scale_only:
        with tempfile.TemporaryDirectory() as tmp:
            load = [load_average()]
            big = anyio.run(scale, args.rounds, Path(tmp), sys.stderr)
            load.append(load_average())
            semantic = anyio.run(semantic_browse, args.rounds, Path(tmp), sys.stderr)
            load.append(load_average())
        big["browse_query_semantic_ms"] = semantic["shipped"]
        big["browse_query_semantic_int8_ms"] = semantic["int8"]
        write_result(args.out, {"load_average": load, "scale": big})
        return 0
    if args.three_only:
        with tempfile.TemporaryDirectory() as tmp:
            load = [load_average()]
            three = anyio.run(three_upstreams, args.rounds, Path(tmp), sys.stderr)
            load.append(load_average())
        write_result(args.out, {"load_average": load, "three": three})
        return 0
    if args.semantic_only:
        with tempfile.TemporaryDirectory() as tmp:
            load = [load_average()]
            semantic = anyio.run(semantic_browse, args.rounds, Path(tmp), sys.stderr)
            load.append(load_average())
        write_result(
            args.out,
            {
                "load_average": load,
                "browse_query_semantic_ms": semantic["shipped"],
                "browse_query_semantic_int8_ms": semantic["int8"],
            },
        )
        return 0
    if not Path(EVERYTHING).exists() or shutil.which("git") is None:
        print("node_modules or git is missing: run `make install`", file=sys.stderr)
        return 1
    result = anyio.run(run, args.rounds, sys.stderr)
    write_result(args.out, result, {"three": result["three"]["proxies"], "scale": result["scale"]})
    return 0


if __name__ == "__main__":
    sys.exit(main())
