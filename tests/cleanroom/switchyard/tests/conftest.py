"""Shared helpers for the switchyard test-suite.

End-to-end tests start the real gateway (`python -m switchyard serve ...`) as
a subprocess in front of `upstream_fixture.py` and talk to it through the
official MCP SDK client.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = str(ROOT / "tests" / "upstream_fixture.py")
PY = sys.executable


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def upstream(variant: str = "main", *extra: str, **overrides: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"command": PY, "args": [FIXTURE, "--variant", variant, *extra]}
    spec.update(overrides)
    return spec


def write_config(tmp_path: Path, servers: dict[str, Any], **extra: Any) -> str:
    path = tmp_path / "switchyard.json"
    path.write_text(json.dumps({"mcpServers": servers, **extra}))
    return str(path)


def gateway_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def stdio_gateway(profile: str, config_path: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=PY,
        args=["-m", "switchyard", "serve", "--profile", profile, "--config", config_path, "--log-level", "WARNING"],
        env={"PYTHONPATH": str(ROOT)},
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"process exited early with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"port {port} never opened")


@contextmanager
def running(args: list[str], port: int):
    """Run a subprocess listening on `port`; stop exactly that process afterwards."""
    proc = subprocess.Popen(args, env=gateway_env(), stdout=subprocess.DEVNULL)
    try:
        _wait_for_port(port, proc)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


@contextmanager
def http_gateway(profile: str, config_path: str):
    port = free_port()
    args = [PY, "-m", "switchyard", "serve", "--profile", profile, "--config", config_path,
            "--http", f"127.0.0.1:{port}", "--log-level", "WARNING"]
    with running(args, port):
        yield f"http://127.0.0.1:{port}"


@contextmanager
def http_upstream(variant: str = "main"):
    port = free_port()
    with running([PY, FIXTURE, "--variant", variant, "--http", f"127.0.0.1:{port}"], port):
        yield f"http://127.0.0.1:{port}/mcp"
