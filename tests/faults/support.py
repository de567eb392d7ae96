"""The fault-and-fuzz suite (issue 12): real upstream processes (tests/fixtures/raw_mcp_server.py,
or gatespec itself), real transports, and the gateway's own command line where it matters."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gatespec.config import GatewayConfig, parse_config

UPSTREAM = str(Path(__file__).parents[1] / "fixtures" / "raw_mcp_server.py")
WEB_UPSTREAM = str(Path(__file__).with_name("web_upstream.py"))
GATESPEC = str(Path(sys.executable).with_name("gatespec"))


def upstream(*args: str, **extra: Any) -> dict[str, Any]:
    """An mcpServers entry running the fault fixture with `args`."""
    return {"command": sys.executable, "args": [UPSTREAM, *args], **extra}


def config(
    servers: dict[str, Any], environ: dict[str, str] | None = None, **gateway: Any
) -> GatewayConfig:
    return parse_config({"mcpServers": servers, "gateway": gateway}, environ=environ or {})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def faulty(transport: str) -> Iterator[dict[str, Any]]:
    """The mcpServers entry of a misbehaving upstream over `transport` (stdio: raw_mcp_server.py,
    started by the gateway; http or sse: web_upstream.py, started here)."""
    if transport == "stdio":
        yield upstream()
        return
    port = free_port()
    argv = [sys.executable, WEB_UPSTREAM, str(port), f"--{transport}"]
    server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{WEB_UPSTREAM} did not listen") from None
                time.sleep(0.05)
        path = "/mcp" if transport == "http" else "/sse"
        yield {"type": transport, "url": f"http://127.0.0.1:{port}{path}"}
    finally:
        server.kill()
        server.wait(10)
