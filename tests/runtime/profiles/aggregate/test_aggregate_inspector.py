"""A real client of another SDK against the aggregate profile: the MCP Inspector CLI
(TypeScript SDK) over stdio and Streamable HTTP, in front of server-everything and the kit's
fixture upstream: prompts/list, prompts/get, resources/list, resources/read, tools/call.

Slow (each Inspector run starts node, gatespec and its upstreams): `make test-slow`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gatespec_conformance.fixtures.upstream import fixture_argv

pytestmark = [pytest.mark.slow, pytest.mark.real_upstream, pytest.mark.timeout(180)]

ROOT = Path(__file__).resolve().parents[4]
INSPECTOR = ROOT / "node_modules" / ".bin" / "mcp-inspector"


def write_config(tmp_path: Path, servers: Any) -> Path:
    fixture = fixture_argv(tmp_path / "calls.jsonl", rich=True)
    everything = servers.binary(servers.node_bin / "mcp-server-everything")
    body = {
        "mcpServers": {
            "everything": {"command": everything, "args": ["stdio"]},
            "fixture": {"command": fixture[0], "args": fixture[1:]},
        },
        "gateway": {"profile": "aggregate"},
    }
    path = tmp_path / "gatespec.json"
    path.write_text(json.dumps(body))
    return path


def inspector(servers: Any, target: list[str], *method: str) -> Any:
    """One Inspector CLI run; its stdout is one JSON document."""
    argv = [servers.binary(INSPECTOR), "--cli", *method, *target]
    done = subprocess.run(argv, capture_output=True, timeout=90)
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
    return json.loads(done.stdout)


def check_methods(servers: Any, target: list[str]) -> None:
    prompts = inspector(servers, target, "--method", "prompts/list")
    names = [p["name"] for p in prompts["prompts"]]
    assert {"everything__args-prompt", "fixture__greet"} <= set(names)
    # Variadic options (--prompt-args, --tool-arg) come first: they take what follows them.
    got = inspector(
        servers, target, "--prompt-args", "name=Inspector", "--method", "prompts/get",
        "--prompt-name", "fixture__greet",
    )  # fmt: skip
    assert got["messages"][0]["content"]["text"] == "Hello, Inspector!"
    resources = inspector(servers, target, "--method", "resources/list")
    uris = [r["uri"] for r in resources["resources"]]
    assert "fixture+fixture://doc/readme" in uris
    assert any(u.startswith("everything+demo://") for u in uris)
    read = inspector(
        servers, target, "--method", "resources/read", "--uri", "fixture+fixture://doc/readme"
    )
    assert read["contents"] == [
        {
            "uri": "fixture+fixture://doc/readme",
            "mimeType": "text/plain",
            "text": "the fixture readme",
        }
    ]
    called = inspector(
        servers, target, "--tool-arg", "message=from the inspector", "--method", "tools/call",
        "--tool-name", "everything__echo",
    )  # fmt: skip
    assert called["content"][0]["text"] == "Echo: from the inspector"
    refused = inspector(servers, target, "--method", "tools/call", "--tool-name", "echo")
    assert refused["isError"] is True
    assert json.loads(refused["content"][0]["text"])["error"] == "NOT_NAMESPACED"


def test_the_inspector_over_stdio(servers: Any, tmp_path: Path) -> None:
    config = write_config(tmp_path, servers)
    check_methods(
        servers, ["--", sys.executable, "-m", "gatespec.cli", "serve", "--config", str(config)]
    )


def test_the_inspector_over_streamable_http(servers: Any, tmp_path: Path) -> None:
    config = write_config(tmp_path, servers)
    port = servers.free_port()
    argv = [sys.executable, "-m", "gatespec.cli", "serve", "--config", str(config)]
    servers.spawn([*argv, "--transport", "http", "--port", str(port)], port)
    check_methods(servers, ["--transport", "http", "--", f"http://127.0.0.1:{port}/mcp"])
