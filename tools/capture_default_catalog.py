"""Capture the embedded default catalog: the real tools/list of the MCP servers the project
installs (npm: server-everything, server-filesystem, server-memory; PyPI: mcp-server-time,
mcp-server-git), written to src/gatespec/data/default_catalog.json. `gatespec demo` and
`gatespec serve --demo` serve it through stub upstreams, so they need no configuration.

Run after `make install`: `.venv/bin/python tools/capture_default_catalog.py`.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from gatespec.config import parse_config
from gatespec.upstream import UpstreamPool

ROOT = Path(__file__).resolve().parents[1]
BIN = ROOT / "node_modules" / ".bin"
OUT = ROOT / "src" / "gatespec" / "data" / "default_catalog.json"


async def capture() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        servers = {
            "everything": {"command": str(BIN / "mcp-server-everything"), "args": ["stdio"]},
            "filesystem": {"command": str(BIN / "mcp-server-filesystem"), "args": [tmp]},
            "memory": {
                "command": str(BIN / "mcp-server-memory"),
                "env": {"MEMORY_FILE_PATH": f"{tmp}/m.json"},
            },
            "time": {"command": str(Path(sys.executable).parent / "mcp-server-time")},
            "git": {
                "command": str(Path(sys.executable).parent / "mcp-server-git"),
                "args": ["--repository", str(repo)],
            },
        }
        config = parse_config({"mcpServers": servers})
        async with UpstreamPool.from_config(config) as pool:
            statuses = await pool.start()
            failed = [s for s in statuses if s.state != "connected"]
            if failed:
                raise SystemExit(f"could not capture: {failed}")
            tools = pool.tools()
    packages = {
        "everything": "npm @modelcontextprotocol/server-everything",
        "filesystem": "npm @modelcontextprotocol/server-filesystem",
        "memory": "npm @modelcontextprotocol/server-memory",
        "time": "PyPI mcp-server-time",
        "git": "PyPI mcp-server-git",
    }
    return {
        "$comment": "Real tools/list results captured by tools/capture_default_catalog.py; "
        "the servers are the Model Context Protocol reference servers (MIT licence).",
        "sources": {key: packages[key] for key in servers},
        "tools": [{"server": key, **tool} for key in servers for tool in tools[key]],
    }


def main() -> int:
    data = asyncio.run(capture())
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    counts = {k: sum(t["server"] == k for t in data["tools"]) for k in data["sources"]}
    print(f"wrote {OUT.relative_to(ROOT)}: {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
