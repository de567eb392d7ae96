"""Shared fixtures for the runtime tests: anyio backend, fixture servers, real server binaries.

Helpers are handed out through the `servers` fixture (not imported from this module), so
test modules never depend on which conftest a module-name lookup would find.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from gatespec.config import ServerConfig, parse_config
from tests.fixtures.replica_cluster import Cluster
from tests.fixtures.valkey_server import valkey  # noqa: F401  (a fixture of the Valkey tests)

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
RAW_SERVER = FIXTURES / "raw_mcp_server.py"
SDK_SERVER = FIXTURES / "sdk_mcp_server.py"
NODE_BIN = ROOT / "node_modules" / ".bin"
VENV_BIN = Path(sys.executable).parent
PYTHON = sys.executable


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    """Two gatespec replicas over HTTP sharing a real Valkey (tests/fixtures/replica_cluster)."""
    cluster = Cluster(tmp_path, drain_timeout=5)
    try:
        yield cluster.start(2)
    finally:
        cluster.stop()


def server_config(key: str, entry: Mapping[str, Any]) -> ServerConfig:
    """One ServerConfig built through the real config parser."""
    return parse_config({"mcpServers": {key: dict(entry)}}, environ={}).servers[key]


def raw_server(key: str = "raw", *args: str, **extra: Any) -> ServerConfig:
    return server_config(key, {"command": PYTHON, "args": [str(RAW_SERVER), *args], **extra})


def sdk_server(key: str = "sdk", *args: str) -> ServerConfig:
    return server_config(key, {"command": PYTHON, "args": [str(SDK_SERVER), *args]})


def binary(path: Path) -> str:
    """The path of a server binary, or skip the test saying which one is missing."""
    if not path.exists():
        pytest.skip(f"{path.name} is not installed at {path} (run `make install`)")
    return str(path)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(
    port: int, proc: subprocess.Popen[bytes], timeout: float = 15.0, host: str = "127.0.0.1"
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with status {proc.returncode} before listening")
        try:
            with socket.create_connection((host, port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on port {port} after {timeout}s")


class ServerProcess:
    """A background HTTP server process the test can kill and restart on the same port."""

    def __init__(
        self,
        argv: Sequence[str],
        port: int,
        env: Mapping[str, str] | None = None,
        host: str = "127.0.0.1",
    ):
        self.argv = list(argv)
        self.port = port
        self.host = host
        self.env = {**os.environ, **(env or {})}
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> ServerProcess:
        self.proc = subprocess.Popen(
            self.argv, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        wait_for_port(self.port, self.proc, host=self.host)
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.proc = None


class Servers:
    """What tests need to build upstream configs and run server processes."""

    root = ROOT
    fixtures = FIXTURES
    python = PYTHON
    node_bin = NODE_BIN
    venv_bin = VENV_BIN
    config = staticmethod(server_config)
    raw = staticmethod(raw_server)
    sdk = staticmethod(sdk_server)
    binary = staticmethod(binary)
    free_port = staticmethod(free_port)

    def __init__(self) -> None:
        self.started: list[ServerProcess] = []

    def spawn(
        self,
        argv: Sequence[str],
        port: int,
        env: Mapping[str, str] | None = None,
        host: str = "127.0.0.1",
    ) -> ServerProcess:
        """Start an HTTP server process (killed after the test) and wait until it listens
        (on `host`)."""
        proc = ServerProcess(argv, port, env, host)
        self.started.append(proc)
        return proc.start()

    def stop(self) -> None:
        for proc in self.started:
            proc.stop()


@pytest.fixture
def servers() -> Iterator[Servers]:
    helper = Servers()
    yield helper
    helper.stop()


@pytest.fixture(scope="module")
def module_servers() -> Iterator[Servers]:
    """`servers` for a module-scoped fixture: one server process serves the module's tests
    that do not need a fresh one (it is killed after the module's last test)."""
    helper = Servers()
    yield helper
    helper.stop()


@pytest.fixture(scope="session")
def fake_gateway() -> Any:
    """tests/fixtures/fake_gateway.py as a module (FakeRuntime, sample_tools, ...)."""
    spec = importlib.util.spec_from_file_location("fake_gateway", FIXTURES / "fake_gateway.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("fake_gateway", module)
    spec.loader.exec_module(module)
    return module


# A real tool catalog shipped with the tests (644 tools of 71 MCP servers; see its README).
REAL_CATALOG = ROOT / "tests" / "fixtures" / "catalogs" / "mcp_catalog.json"


@pytest.fixture(scope="session")
def real_tools() -> dict[str, list[dict[str, Any]]]:
    """{server: [tool dicts in MCP wire form]} of the real catalog."""
    by_server: dict[str, list[dict[str, Any]]] = {}
    for entry in json.loads(REAL_CATALOG.read_text(encoding="utf-8")):
        by_server.setdefault(entry["server"], []).append(
            {k: entry[k] for k in ("name", "description", "inputSchema")}
        )
    return by_server
