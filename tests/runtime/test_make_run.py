"""`make run` fronts real MCP servers (tools/run.json) and writes nothing but MCP traffic on
stdout: a raw JSON-RPC client checks every line, and real tools do real work."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
NODE_BIN = ROOT / "node_modules" / ".bin"

pytestmark = [pytest.mark.real_upstream, pytest.mark.timeout(180)]


class RawClient:
    """One JSON-RPC message per line; every stdout line must be one (the MCP stdio rule)."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.next_id = 0

    def notify(self, method: str) -> None:
        self._send({"jsonrpc": "2.0", "method": method})

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        try:
            answer: dict[str, Any] = json.loads(line)
        except ValueError:
            pytest.fail(f"not MCP traffic on stdout: {line!r}")
        assert answer.get("id") == self.next_id, answer
        return answer["result"]

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.request("tools/call", {"name": tool, "arguments": arguments})

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()


def test_make_run_serves_real_servers_on_a_clean_stdout() -> None:
    if not (NODE_BIN / "mcp-server-everything").exists() or shutil.which("make") is None:
        pytest.skip("needs make and the npm servers of `make install`")
    proc = subprocess.Popen(
        ["make", "run"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    client = RawClient(proc)
    try:
        init = client.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        )
        assert init["serverInfo"]["name"] == "gatespec"
        client.notify("notifications/initialized")
        # The gateway answers once one upstream is ready; the others join as they connect
        # (AM-SERVE-FIRST-READY): browse until all five are there.
        namespaces = ("time", "everything", "memory", "filesystem", "git")
        deadline = time.monotonic() + 60  # a bound on the test, not a timing claim
        while True:
            root = client.call("tool_browse", {"path": "/"})["content"][0]["text"]
            if all(f"/{namespace}" in root for namespace in namespaces):
                break
            assert time.monotonic() < deadline, root
            time.sleep(0.2)

        def tool_id(path: str, name: str) -> str:
            cards = client.call("tool_browse", {"path": path})["structuredContent"]["cards"]
            return next(c["id"] for c in cards if c["id"].startswith(f"{name}#"))

        # A real clock: Tokyo is UTC+9 all year (no DST), whatever the machine's zone.
        now = client.call(
            "tool_execute",
            {
                "tool_id": tool_id("/time", "time:get_current_time"),
                "args": {"timezone": "Asia/Tokyo"},
            },
        )
        assert "+09:00" in now["content"][0]["text"] and not now.get("isError")
        # A real filesystem server on the run folder (the Makefile put hello.txt there).
        read = client.call(
            "tool_execute",
            {
                "tool_id": tool_id("/filesystem", "filesystem:read_text_file"),
                "args": {"path": str(ROOT / ".venv" / "run" / "hello.txt")},
            },
        )
        assert "Hello from the filesystem server" in read["content"][0]["text"], read
    finally:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdin.close()
        status = proc.wait(timeout=60)
        rest = proc.stdout.read()
        stderr = proc.stderr.read()
    assert status == 0, stderr
    assert rest == ""  # nothing after the last answer either (no make chatter)
    assert "stub" not in stderr, stderr
    # each of the five connected (some after serving began: AM-SERVE-FIRST-READY)
    assert all(f"] {namespace}: connected" in stderr for namespace in namespaces), stderr
