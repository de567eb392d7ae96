"""Helpers of the layer-2 tests: configs fronting the fixture, gatespec (or a mutant) as the
IUT, and the kit run in-process with a JSON report."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gatespec_conformance import cli
from gatespec_conformance.fixture_upstream import ENV_TOOLS, ENV_WELL_FORMED_ONLY, fixture_argv

PYTHON = sys.executable
MUTANT = Path(__file__).resolve().parent / "serve_mutant.py"
# Checks in the tests draw few cases: the families are what is being proved, not volume.
MAX_EXAMPLES = "3"


def write_config(
    directory: Path,
    profile: str,
    *,
    cache_stable: bool = False,
    call_log: Path | None = None,
) -> Path:
    """A gatespec config fronting the fixture; the call log is the kit's (${GATESPEC_CALL_LOG})
    unless given."""
    argv = fixture_argv(call_log if call_log is not None else "${GATESPEC_CALL_LOG}")
    # The fixture's size for the kit's --sizes runs reaches it through the environment.
    env = {key: "${" + key + ":-}" for key in (ENV_TOOLS, ENV_WELL_FORMED_ONLY)}
    config = {
        "mcpServers": {"fixture": {"command": argv[0], "args": argv[1:], "env": env}},
        "gateway": {
            "profile": profile,
            "call_timeout": 1,
            "refresh_interval": 0,
            "cache_stable": cache_stable,
        },
    }
    path = directory / f"gatespec-{profile}{'-stable' if cache_stable else ''}.json"
    path.write_text(json.dumps(config))
    return path


def aggregate_argv(mutant: str | None = None) -> list[str]:
    """gatespec (or a mutant) serving the aggregate profile from the kit's own {mcp_config}
    (two rich fixtures), which the kit then also rewrites for its registry-change check."""
    head = [PYTHON, "-m", "gatespec.cli"] if mutant is None else [PYTHON, str(MUTANT), mutant]
    return [*head, "serve", "--config", "{mcp_config}", "--profile", "aggregate"]


def serve_argv(config: Path, mutant: str | None = None) -> list[str]:
    if mutant is None:
        return [PYTHON, "-m", "gatespec.cli", "serve", "--config", str(config)]
    return [PYTHON, str(MUTANT), mutant, "serve", "--config", str(config)]


def run_kit(
    directory: Path,
    profile: str,
    *,
    command: Sequence[str] = (),
    options: Sequence[str] = (),
    select: Sequence[str] = (),
    expected_failures: str | None = None,
    sizes: str = "",
) -> tuple[int, dict[str, Any]]:
    """`gatespec-conformance server` in this process: (exit status, JSON report). Other
    fixture sizes are left out unless `sizes` names them (each costs an IUT start)."""
    report = directory / f"report-{profile}-{time.monotonic_ns()}.json"
    argv = ["server", "--profile", profile, "--max-examples", MAX_EXAMPLES, "--sizes", sizes]
    argv += ["-q", "--format", "json", "-o", str(report), *options]
    for pattern in select:
        argv += ["--select", pattern]
    if expected_failures is not None:
        listed = directory / "expected-failures.txt"
        listed.write_text(expected_failures)
        argv += ["--expected-failures", str(listed)]
    if command:
        argv += ["--", *command]
    status = cli.main(argv)
    return status, json.loads(report.read_text())


def outcomes(report: dict[str, Any], outcome: str) -> list[dict[str, Any]]:
    return [c for c in report["checks"] if c["outcome"] == outcome]


def families(report: dict[str, Any]) -> set[str]:
    return {"/".join(c["name"].split("/")[2:4]) for c in report["checks"]}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def http_gatespec(directory: Path, profile: str) -> Iterator[tuple[str, Path]]:
    """gatespec serving `profile` over Streamable HTTP: (its /mcp URL, the fixture's log)."""
    call_log = directory / f"http-{profile}-calls.jsonl"
    config = write_config(directory, profile, call_log=call_log)
    port = free_port()
    argv = [*serve_argv(config), "--transport", "http", "--port", str(port)]
    errors = (directory / f"http-{profile}.err").open("w")
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=errors, env=dict(os.environ))
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"gatespec exited with {proc.returncode} before listening")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"nothing listens on port {port}") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp", call_log
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        errors.close()
