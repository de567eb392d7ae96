"""Load and fault figures (issue 12), so regressions show.

Load: a gatespec serving Streamable HTTP in front of one stdio upstream (the test suite's
hand-written server, tests/fixtures/raw_mcp_server.py); SESSIONS handshake-era clients at once,
each making CALLS tool_execute calls of the echo tool with a text of its own. Reported: errors,
wrong answers (an answer that is not the caller's own text), latency p50/p99, the gateway's RSS
before and after.

Faults, in-process over real fixture processes, with one upstream whose handshake hangs
throughout: how long from start until the first answer; until the typed answer when an
upstream crashes mid-call, and for the next call to it (SERVER_UNAVAILABLE); until the crashed
upstream answers again (polled every 50 ms: the answers meanwhile are counted); and for an
answer over MAX_UPSTREAM_RESULT_BYTES.

Fault matrix per upstream transport (issue 22): a stdio, a Streamable HTTP and a legacy SSE
upstream (tests/fixtures/raw_mcp_server.py and web_upstream.py, the same tools), each beside a
well-behaved stdio one, through the gateway's upstream pool (call_timeout MATRIX_TIMEOUT s):
the answer and seconds for a crash mid-call, a call never answered, garbage (invalid UTF-8,
nested 100,000 deep, not JSON) and an oversized answer.

Aggregate load (issue 22): `gatespec serve --profile aggregate --transport http` in front of a
stdio upstream that logs each call it executes; AGG_SESSIONS handshake-era sessions at once,
AGG_CALLS calls each, one session in ten with roots (so with upstream connections of its
own). Reported: errors, wrong answers, calls lost or duplicated upstream, p50/p99, RSS.

Run: `python bench/faults.py --out bench/results/faults.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("GATESPEC_SEMANTIC", "off")

from harness import (  # noqa: E402
    GATESPEC,
    PYTHON,
    Background,
    free_port,
    load_average,
    percentile,
    rss_mib,
    write_result,
)
from mcp import Client  # noqa: E402

from gatespec.config import parse_config  # noqa: E402
from gatespec.runtime import ProxyRuntime  # noqa: E402
from gatespec.upstream import UpstreamError, UpstreamPool  # noqa: E402
from gatespec_surface.budgets import MAX_UPSTREAM_RESULT_BYTES  # noqa: E402
from gatespec_surface.errors import GatewayError  # noqa: E402
from tests.faults.support import faulty  # noqa: E402
from tests.runtime import load_support  # noqa: E402

UPSTREAM = str(Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "raw_mcp_server.py")
SESSIONS = 50
CALLS = 50
MATRIX_TIMEOUT = 5.0
AGG_SESSIONS = 200
AGG_CALLS = 5


async def load(url: str) -> dict[str, Any]:
    latencies: list[float] = []
    errors = wrong = 0
    async with Client(url, mode="legacy", cache=None) as first:
        browse = await first.call_tool("tool_browse", {"query": "echo the text back"})
        echo = next(c["id"] for c in browse.structured_content["cards"] if ":echo" in c["id"])

    async def session(n: int) -> None:
        nonlocal errors, wrong
        async with Client(url, mode="legacy", cache=None) as client:
            for i in range(CALLS):
                text = f"s{n}-c{i}"
                started = time.perf_counter()
                result = await client.call_tool(
                    "tool_execute", {"tool_id": echo, "args": {"text": text}}
                )
                latencies.append(time.perf_counter() - started)
                if result.is_error:
                    errors += 1
                elif result.structured_content["summary"] != text:
                    wrong += 1

    async with anyio.create_task_group() as tg:
        for n in range(SESSIONS):
            tg.start_soon(session, n)
    return {
        "calls": len(latencies),
        "errors": errors,
        "wrong_answers": wrong,
        "p50_ms": round(percentile(latencies, 0.5) * 1000, 1),
        "p99_ms": round(percentile(latencies, 0.99) * 1000, 1),
    }


def run_load(folder: Path) -> dict[str, Any]:
    config = folder / "load.json"
    config.write_text(json.dumps({"mcpServers": {"up": {"command": PYTHON, "args": [UPSTREAM]}}}))
    port = free_port()
    server = Background(
        [GATESPEC, "serve", "--config", str(config), "--transport", "http", "--port", str(port)],
        port,
    )
    try:
        server.wait_listening()
        time.sleep(1.0)  # settled: upstream connected, catalog built
        before = rss_mib(server.proc.pid)
        figures = anyio.run(load, f"http://127.0.0.1:{port}/mcp")
        figures["rss_before_mib"] = round(before, 1)
        figures["rss_after_mib"] = round(rss_mib(server.proc.pid), 1)
        return figures
    finally:
        server.stop()


async def typed_after(work: Any) -> tuple[float, str]:
    started = time.perf_counter()
    try:
        await work
        return time.perf_counter() - started, "success"
    except GatewayError as exc:
        return time.perf_counter() - started, exc.code.value


async def faults(folder: Path) -> dict[str, Any]:
    servers = {
        "crashy": {"command": PYTHON, "args": [UPSTREAM]},
        "big": {"command": PYTHON, "args": [UPSTREAM]},
        "hang": {"command": PYTHON, "args": [UPSTREAM, "--hang"]},
    }
    config = parse_config(
        {
            "mcpServers": servers,
            "gateway": {"refresh_interval": 30, "call_timeout": 60, "connect_timeout": 60},
        },
        environ={},
    )
    runtime = ProxyRuntime.from_config(config)
    out: dict[str, Any] = {}
    try:
        started = time.perf_counter()
        await runtime.start(first_ready=True)  # hang never answers its handshake
        # The first ready upstream may be "big": the others join as they connect.
        ids: dict[str, str] = {}
        with anyio.fail_after(60):
            while "crashy:echo" not in ids:
                ids = {f"{i.metadata['server']}:{i.name}": i.id for i in runtime.catalog.items()}
                await anyio.sleep(0.01)
        seconds, code = await typed_after(runtime.execute("b", ids["crashy:echo"], {"text": "x"}))
        out["first_answer_while_a_handshake_hangs"] = {
            "seconds": round(time.perf_counter() - started, 3),
            "answer": code,
        }
        async with anyio.create_task_group() as serving:
            serving.start_soon(runtime.keep_upstreams)
            seconds, code = await typed_after(runtime.execute("b", ids["crashy:crash"], {}))
            out["crash_mid_call"] = {"seconds": round(seconds, 3), "answer": code}
            crashed = time.perf_counter()
            seconds, code = await typed_after(
                runtime.execute("b", ids["crashy:echo"], {"text": "x"})
            )
            out["next_call_to_crashed"] = {"seconds": round(seconds, 3), "answer": code}
            answers: dict[str, int] = {}
            while code != "success":
                await anyio.sleep(0.05)
                seconds, code = await typed_after(
                    runtime.execute("b", ids["crashy:echo"], {"text": "x"})
                )
                answers[code] = answers.get(code, 0) + 1
            out["crashed_upstream_back"] = {
                "seconds": round(time.perf_counter() - crashed, 3),
                "answer": ", ".join(f"{k} {v}" for k, v in answers.items()),
            }
            while runtime.pool.status("big").state != "connected":
                await anyio.sleep(0.05)
            ids = {f"{i.metadata['server']}:{i.name}": i.id for i in runtime.catalog.items()}
            hold = folder / "hold"
            hold.write_text("go")
            big = {"bytes": MAX_UPSTREAM_RESULT_BYTES + 1, "hold_file": str(hold)}
            seconds, code = await typed_after(runtime.execute("b", ids["big:big"], big))
            out["oversized_answer"] = {"seconds": round(seconds, 3), "answer": code}
            serving.cancel_scope.cancel()
    finally:
        await runtime.aclose()
    return out


async def fault_matrix(folder: Path) -> dict[str, Any]:
    hold = folder / "hold"
    hold.write_text("go")
    cases: list[tuple[str, str, dict[str, Any]]] = [
        ("crash mid-call", "crash", {}),
        ("call never answered", "hang", {}),
        *[(f"garbage: {how}", "garbage", {"how": how}) for how in ("utf8", "deep", "junk")],
        (
            "oversized answer",
            "big",
            {"bytes": MAX_UPSTREAM_RESULT_BYTES + 1024, "hold_file": str(hold)},
        ),
    ]
    rows: dict[str, dict[str, Any]] = {}
    for transport in ("stdio", "http", "sse"):
        for label, tool, args in cases:
            with faulty(transport) as bad:
                servers = {"bad": bad, "good": {"command": PYTHON, "args": [UPSTREAM]}}
                options = {"call_timeout": MATRIX_TIMEOUT, "connect_timeout": 30}
                config = parse_config({"mcpServers": servers, "gateway": options}, environ={})
                async with UpstreamPool.from_config(config) as pool:
                    await pool.start()
                    started = time.perf_counter()
                    try:
                        await pool.call("bad", tool, args)
                        answer = "success"
                    except UpstreamError as exc:
                        answer = exc.code.value
                    seconds = round(time.perf_counter() - started, 3)
                    good = await pool.call("good", "echo", {"text": "ok"})
                    other = "answers" if good["content"][0]["text"] == "ok" else "wrong"
            rows.setdefault(label, {})[transport] = {
                "answer": answer,
                "seconds": seconds,
                "other_upstream": other,
            }
    return {"call_timeout": MATRIX_TIMEOUT, "rows": rows}


def run_aggregate_load(folder: Path) -> dict[str, Any]:
    log = folder / "aggregate-calls.log"
    config = folder / "aggregate.json"
    load_support.write_config(config, {"up": load_support.echo_server(log)}, profile="aggregate")
    port = free_port()
    argv = [GATESPEC, "serve", "--config", str(config), "--transport", "http"]
    server = Background([*argv, "--port", str(port)], port)
    try:
        server.wait_listening()
        time.sleep(1.0)  # settled: upstream connected
        before = rss_mib(server.proc.pid)
        url = f"http://127.0.0.1:{port}/mcp"
        outcome = anyio.run(
            lambda: load_support.run_load(
                url, "aggregate", "up__echo", AGG_SESSIONS, AGG_CALLS, roots_every=10
            )
        )
        after = rss_mib(server.proc.pid)
    finally:
        server.stop()
    executed = outcome.upstream_counts(log)
    expected = load_support.expected_texts(AGG_SESSIONS, AGG_CALLS)
    return {
        "sessions": AGG_SESSIONS,
        "calls_per_session": AGG_CALLS,
        "calls": outcome.calls,
        "errors": len(outcome.errors),
        "wrong_answers": len(outcome.wrong),
        "lost_upstream": sum(1 for text in expected if text not in executed),
        "duplicated_upstream": sum(1 for count in executed.values() if count > 1),
        "p50_ms": round(percentile(outcome.latencies, 0.5) * 1000, 1),
        "p99_ms": round(percentile(outcome.latencies, 0.99) * 1000, 1),
        "rss_before_mib": round(before, 1),
        "rss_after_mib": round(after, 1),
        "load_average": load_average(),
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gatespec-faults-") as tmp:
        folder = Path(tmp)
        result = {
            "load": {"sessions": SESSIONS, "calls_per_session": CALLS, **run_load(folder)},
            "faults": anyio.run(faults, folder),
            "matrix": anyio.run(fault_matrix, folder),
            "aggregate_load": run_aggregate_load(folder),
        }
    write_result(args.out, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
