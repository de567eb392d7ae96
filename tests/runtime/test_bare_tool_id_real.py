"""An agent's natural guesses at a tool id, over stdio in front of the real PyPI
mcp-server-time: the bare `time:get_current_time` runs the one tool it names
(AM-BARE-TOOL-ID), a wrong hash8 or the aggregate-style `time__get_current_time` is
TOOL_NOT_FOUND naming the real id."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

pytestmark = [pytest.mark.anyio, pytest.mark.real_upstream]


def _params(tmp_path: Path, servers: Any) -> StdioServerParameters:
    config = tmp_path / "gateway.json"
    time_bin = servers.binary(servers.venv_bin / "mcp-server-time")
    config.write_text(json.dumps({"mcpServers": {"time": {"command": time_bin}}}))
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": f"{root / 'src'}{os.pathsep}{root / 'generated'}"}
    return StdioServerParameters(
        command=sys.executable, args=["-m", "gatespec", "serve", "--config", str(config)], env=env
    )


@pytest.mark.timeout(120)
async def test_bare_ids_resolve_and_near_misses_suggest(tmp_path: Path, servers: Any) -> None:
    async with Client(_params(tmp_path, servers), mode="legacy", cache=None) as client:
        browsed = await client.call_tool("tool_browse", {"path": "/time"})
        ids = [c["id"] for c in browsed.structured_content["cards"]]
        (real,) = [i for i in ids if i.startswith("time:get_current_time#")]

        ran = await client.call_tool(
            "tool_execute",
            {"tool_id": "time:get_current_time", "args": {"timezone": "UTC"}},
        )
        assert not ran.is_error, ran.content
        assert "UTC" in json.dumps(ran.structured_content)

        for guess in ("time:get_current_time#00000000", "time__get_current_time"):
            miss = await client.call_tool("tool_execute", {"tool_id": guess, "args": {}})
            assert miss.is_error
            error = miss.structured_content
            assert error["error"] == "TOOL_NOT_FOUND", error
            assert f"did you mean {real!r}" in json.dumps(error)
