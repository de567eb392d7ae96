"""`gatespec install`: the snippet each client's documented format expects, a --write that keeps
the user's file (and a backup), and an entry a real MCP client can start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

pytestmark = pytest.mark.timeout(120)


def install(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gatespec", "install", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )


@pytest.fixture
def config(tmp_path: Path) -> Path:
    catalog = [{"name": "read_file", "description": "Read.", "inputSchema": {"type": "object"}}]
    (tmp_path / "catalog.json").write_text(json.dumps(catalog))
    path = tmp_path / "gateway.json"
    path.write_text(json.dumps({"mcpServers": {"fs": {"type": "stub", "catalog": "catalog.json"}}}))
    return path


# The documented formats: Claude Desktop and Cursor map names under "mcpServers"; VS Code's
# .vscode/mcp.json under "servers" with "type": "stdio"; Claude Code's .mcp.json under
# "mcpServers" with "type": "stdio".
FORMATS = {
    "claude-desktop": ("mcpServers", None),
    "cursor": ("mcpServers", None),
    "vscode": ("servers", "stdio"),
    "claude-code": ("mcpServers", "stdio"),
}


@pytest.mark.parametrize("client", sorted(FORMATS))
def test_the_snippet_is_printed_not_written(client: str, config: Path) -> None:
    done = install("--client", client, "--config", str(config))
    assert done.returncode == 0, done.stderr
    key, kind = FORMATS[client]
    snippet = json.loads(done.stdout)
    entry = snippet[key]["gatespec"]
    assert entry.get("type") == kind
    assert Path(entry["command"]).is_absolute()
    assert entry["args"][-3:] == ["serve", "--config", str(config)]
    assert "--write" in done.stderr


def test_write_adds_the_entry_keeps_the_rest_and_a_backup(config: Path, tmp_path: Path) -> None:
    target = tmp_path / "client" / "mcp.json"
    target.parent.mkdir()
    original = {"theme": "dark", "mcpServers": {"other": {"command": "other-server"}}}
    target.write_text(json.dumps(original))
    args = ["--client", "cursor", "--config", str(config), "--client-config", str(target)]
    done = install(*args, "--write", "--command", "uvx gatespec")
    assert done.returncode == 0, done.stderr
    written = json.loads(target.read_text())
    assert written["theme"] == "dark" and written["mcpServers"]["other"] == {
        "command": "other-server"
    }
    assert written["mcpServers"]["gatespec"] == {
        "command": "uvx",
        "args": ["gatespec", "serve", "--config", str(config)],
    }
    assert json.loads((tmp_path / "client" / "mcp.json.bak").read_text()) == original
    again = install(*args, "--write", "--command", "uvx gatespec")
    assert again.returncode == 0 and "nothing written" in again.stderr
    assert not (tmp_path / "client" / "mcp.json.bak.1").exists()


def test_write_refuses_a_file_that_is_not_plain_json(config: Path, tmp_path: Path) -> None:
    target = tmp_path / "mcp.json"
    text = '{\n  // my servers\n  "servers": {}\n}\n'
    target.write_text(text)
    done = install(
        "--client", "vscode", "--config", str(config), "--client-config", str(target), "--write"
    )
    assert done.returncode == 2
    assert "is not plain JSON" in done.stderr and "add the snippet by hand" in done.stderr
    assert target.read_text() == text and not (tmp_path / "mcp.json.bak").exists()


def test_a_missing_gateway_config_is_a_usage_error(tmp_path: Path) -> None:
    done = install("--client", "cursor", "--config", str(tmp_path / "nope.json"))
    assert done.returncode == 2 and "no such file" in done.stderr and done.stdout == ""


def _needs_root(tmp_path: Path) -> Path:
    """`make run`'s kind of config: its servers' commands under ${GATESPEC_ROOT}."""
    path = tmp_path / "run.json"
    server = {"command": "${GATESPEC_ROOT}/.venv/bin/mcp-server-time"}
    path.write_text(json.dumps({"mcpServers": {"time": server}}))
    return path


def test_a_config_that_cannot_start_is_refused(tmp_path: Path) -> None:
    """Unset outside make, the variable leaves a config the gateway cannot start from: the
    error says which and nothing is written (issue 24)."""
    client_file = tmp_path / "client.json"
    env = {k: v for k, v in os.environ.items() if k != "GATESPEC_ROOT"}
    done = install(
        "--client", "cursor", "--config", str(_needs_root(tmp_path)),
        "--write", "--client-config", str(client_file), env=env,
    )  # fmt: skip
    assert done.returncode == 2 and not client_file.exists()
    assert "cannot start with this config" in done.stderr
    assert "GATESPEC_ROOT is not set" in done.stderr


def test_a_config_that_needs_this_shells_variable_is_warned_about(tmp_path: Path) -> None:
    """Set in this shell, the variable is not what a client passes: a warning names it."""
    env = {**os.environ, "GATESPEC_ROOT": str(tmp_path)}
    done = install("--client", "cursor", "--config", str(_needs_root(tmp_path)), env=env)
    assert done.returncode == 0 and json.loads(done.stdout)["mcpServers"]["gatespec"]
    assert "warning: this config loads here but not with only" in done.stderr
    assert "GATESPEC_ROOT is not set" in done.stderr


def test_a_real_client_starts_the_gateway_from_the_entry(config: Path) -> None:
    entry: dict[str, Any] = json.loads(
        install("--client", "claude-desktop", "--config", str(config)).stdout
    )["mcpServers"]["gatespec"]

    async def tools() -> list[str]:
        params = StdioServerParameters(command=entry["command"], args=entry["args"])
        async with Client(params) as client:
            return sorted(t.name for t in (await client.list_tools()).tools)

    # Seed 000 §4.2: the gateway profile's tools.
    assert anyio.run(tools) == ["tool_browse", "tool_execute", "tool_view"]


def test_the_readme_snippets_are_the_entries_install_prints(config: Path) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    blocks = [json.loads(b.split("```")[0]) for b in readme.split("```json\n")[1:]]
    snippets = [b for b in blocks if "gatespec" in b.get("mcpServers", b.get("servers", {}))]
    assert len(snippets) == 2
    for snippet in snippets:
        key = "servers" if "servers" in snippet else "mcpServers"
        client = "vscode" if key == "servers" else "cursor"
        printed = json.loads(
            install("--client", client, "--config", str(config), "--command", "uvx gatespec").stdout
        )[key]["gatespec"]
        shown = snippet[key]["gatespec"]
        assert shown["args"][:-1] == printed["args"][:-1]  # all but the config's path
        assert {k: v for k, v in shown.items() if k != "args"} == {
            k: v for k, v in printed.items() if k != "args"
        }
