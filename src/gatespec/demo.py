"""The embedded default catalog (real tool lists captured from the MCP reference servers, see
tools/capture_default_catalog.py) and a scripted session against it: `gatespec demo`.

The demo needs no configuration and no network: every upstream is a stub serving its captured
tools and echoing calls. It walks the agent's path through the gateway surface: browse by
query, browse by path, execute with bad arguments (refused before any upstream call), execute,
view an artifact, and shows the context cost next to passing every tool through.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from gatespec.config import GatewayConfig, parse_config

DEFAULT_CATALOG = "default_catalog.json"


def default_catalog_path() -> Path:
    return Path(str(resources.files("gatespec.data").joinpath(DEFAULT_CATALOG)))


def default_catalog() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(default_catalog_path().read_text(encoding="utf-8"))
    return data


def default_config(mode: str = "gateway", **options: Any) -> GatewayConfig:
    """A config serving the embedded catalog through one stub upstream per captured server."""
    path = default_catalog_path()
    servers = {
        key: {"type": "stub", "catalog": str(path), "server": key}
        for key in default_catalog()["sources"]
    }
    return parse_config({"mcpServers": servers, "gateway": {"mode": mode, **options}})
