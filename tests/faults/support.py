"""The fault-and-fuzz suite (issue 12): real upstream processes (tests/faults/upstream.py, or
gatespec itself), real transports, and the gateway's own command line where it matters."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from gatespec.config import GatewayConfig, parse_config

UPSTREAM = str(Path(__file__).with_name("upstream.py"))
GATESPEC = str(Path(sys.executable).with_name("gatespec"))


def upstream(*args: str, **extra: Any) -> dict[str, Any]:
    """An mcpServers entry running the fault fixture with `args`."""
    return {"command": sys.executable, "args": [UPSTREAM, *args], **extra}


def config(
    servers: dict[str, Any], environ: dict[str, str] | None = None, **gateway: Any
) -> GatewayConfig:
    return parse_config({"mcpServers": servers, "gateway": gateway}, environ=environ or {})
