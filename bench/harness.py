"""What the side-by-side benchmarks share: where things are, servers in the background, RSS,
percentiles. Nothing here asserts a timing."""

from __future__ import annotations

import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
PYTHON = sys.executable
GATESPEC = str(Path(sys.executable).parent / "gatespec")
NODE_BIN = ROOT / "node_modules" / ".bin"
EVERYTHING = str(NODE_BIN / "mcp-server-everything")
ERAS = ("legacy", "2026-07-28")  # the client's protocol era: handshake, or sessionless


def child_env(**extra: str) -> dict[str, str]:
    """The environment for a stdio server the benchmarks spawn: the SDK's default (which
    drops PYTHONPATH), plus PYTHONPATH and the GATESPEC_* settings of this run, so a gateway
    run from a checkout other than the installed one (a git worktree) measures that checkout."""
    from mcp.client.stdio import get_default_environment

    keep = {k: v for k, v in os.environ.items() if k == "PYTHONPATH" or k.startswith("GATESPEC_")}
    return {**get_default_environment(), **keep, **extra}


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def summary(
    samples: Sequence[float], per_round: Sequence[float], digits: int = 3
) -> dict[str, Any]:
    """p50/p99 over every sample; the per-round figures give the spread between rounds and
    their median (robust to a round that other work on the machine slowed down)."""
    return {
        "n": len(samples),
        "p50": round(percentile(samples, 0.5), digits),
        "round_median": round(statistics.median(per_round), digits),
        "p99": round(percentile(samples, 0.99), digits),
        "rounds": [round(v, digits) for v in per_round],
        "spread": [round(min(per_round), digits), round(max(per_round), digits)],
    }


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def write_result(path: Path, result: Any, shown: Any = None) -> None:
    """Write a benchmark's JSON result and print it (or the part worth showing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(result if shown is None else shown, indent=2, ensure_ascii=False))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_config(path: Path, servers: Mapping[str, Sequence[str]], **gateway: Any) -> Path:
    """An mcpServers config (key -> argv); `gateway` options go in its gateway block."""
    config: dict[str, Any] = {
        "mcpServers": {
            k: {"command": argv[0], "args": list(argv[1:])} for k, argv in servers.items()
        }
    }
    if gateway:
        config["gateway"] = gateway
    path.write_text(json.dumps(config, indent=1), encoding="utf-8")
    return path


class Background:
    """A server process in its own process group, stopped (with its children) on exit."""

    def __init__(self, argv: Sequence[str], port: int, env: Mapping[str, str] | None = None):
        self.port = port
        self.proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )

    def wait_listening(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.proc.args} exited with {self.proc.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"{self.proc.args}: nothing listens on {self.port}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def rss_mib(pid: int) -> float:
    """Resident set size of one process (not its children), MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError(f"no VmRSS for {pid}")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time one process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def child_running(parent: int, argv: Sequence[str]) -> int:
    """The pid of the child of `parent` whose command line ends with `argv` (an interpreter
    may come first)."""
    for pid in child_pids(parent):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]
        except OSError:
            continue
        if cmdline[-len(argv) :] == list(argv):
            return pid
    raise RuntimeError(f"no child process of {parent} runs {argv}")


def child_pids(parent: int) -> list[int]:
    """Direct children of `parent` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # the command name is in parentheses and may hold spaces: ppid follows the last ")"
        if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
            found.append(int(entry.name))
    return found


def load_average() -> float:
    return round(os.getloadavg()[0], 2)
