"""Load and fault figures (issue 12), so regressions show.

Load: a gatespec serving Streamable HTTP in front of one stdio upstream (the fault suite's
fixture, tests/faults/upstream.py); SESSIONS handshake-era clients at once, each making CALLS
tool_execute calls of the echo tool with a text of its own. Reported: errors, wrong answers
(an answer that is not the caller's own text), latency p50/p99, the gateway's RSS before and
after.

Faults, in-process over real fixture processes, with one upstream whose handshake hangs
throughout: how long from start until the first answer; until the typed answer when an
upstream crashes mid-call, and for the next call to it (SERVER_UNAVAILABLE); until the crashed
upstream answers again (polled every 50 ms: the answers meanwhile are counted); and for an
answer over MAX_UPSTREAM_RESULT_BYTES.

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

from harness import GATESPEC, PYTHON, Background, free_port, percentile, rss_mib, write_result  # noqa: E402
from mcp import Client  # noqa: E402

from gatespec.config import parse_config  # noqa: E402
from gatespec.runtime import ProxyRuntime  # noqa: E402
from gatespec_surface.budgets import MAX_UPSTREAM_RESULT_BYTES  # noqa: E402
from gatespec_surface.errors import GatewayError  # noqa: E402

UPSTREAM = str(Path(__file__).resolve().parents[1] / "tests" / "faults" / "upstream.py")
SESSIONS = 50
CALLS = 50


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
        ids = {f"{i.metadata['server']}:{i.name}": i.id for i in runtime.catalog.items()}
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


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gatespec-faults-") as tmp:
        folder = Path(tmp)
        result = {
            "load": {"sessions": SESSIONS, "calls_per_session": CALLS, **run_load(folder)},
            "faults": anyio.run(faults, folder),
        }
    write_result(args.out, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
