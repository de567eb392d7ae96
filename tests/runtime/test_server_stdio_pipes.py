"""The stdio transport reads pipes without a thread per line, and falls back to the SDK's own
streams when stdin is not a pipe (here: a regular file)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gatespec.server.stdio import _is_pipe_or_socket

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _check(answers: list[dict]) -> None:
    by_id = {a.get("id"): a for a in answers}
    assert by_id[1]["result"]["serverInfo"]
    tools = [t["name"] for t in by_id[2]["result"]["tools"]]
    assert tools == ["tool_browse", "tool_execute", "tool_view"]


LINES = "".join(json.dumps(m) + "\n" for m in (INIT, INITIALIZED, LIST))


@pytest.mark.timeout(90)
def test_stdio_over_pipes() -> None:
    # A client keeps stdin open until it has its answers, then closes it to stop the server.
    proc = subprocess.Popen(
        [sys.executable, "-m", "gatespec.cli", "serve", "--demo"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    assert _is_pipe_or_socket(proc.stdin.fileno())
    proc.stdin.write(LINES.encode())
    proc.stdin.flush()
    answers = [json.loads(proc.stdout.readline()) for _ in range(2)]
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0
    _check(answers)


@pytest.mark.timeout(90)
def test_stdio_from_a_regular_file_uses_the_sdk_streams(tmp_path: Path) -> None:
    source = tmp_path / "requests.jsonl"
    source.write_text(LINES)
    with source.open("rb") as handle:
        assert not _is_pipe_or_socket(handle.fileno())
        done = subprocess.run(
            [sys.executable, "-m", "gatespec.cli", "serve", "--demo"],
            stdin=handle,
            capture_output=True,
            timeout=60,
        )
    # stdin ends right after the requests, so only the first answer is certain to be sent.
    answers = [json.loads(line) for line in done.stdout.decode().splitlines() if line.strip()]
    assert done.returncode == 0
    assert answers and answers[0]["id"] == 1 and answers[0]["result"]["serverInfo"]
