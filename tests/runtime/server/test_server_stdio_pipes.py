"""The stdio transport reads pipes without a thread per line, and falls back to the SDK's own
streams when stdin is not a pipe (here: a regular file)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gatespec.server.stdio import _is_pipe_or_socket
from gatespec_conformance.live.access import INITIALIZE as INIT

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


# Lines the SDK would drop without a word, each with the JSON-RPC error it must get instead
# (JSON-RPC 2.0 §5.1: -32700 parse error, -32600 invalid request; the id when readable).
BAD_LINES: list[tuple[str, object, int]] = [
    ("{not json", None, -32700),
    ('[{"jsonrpc": "2.0", "id": 10, "method": "ping"}]', None, -32600),  # a batch
    ('{"jsonrpc": "2.0", "id": 11, "method": "tools/list", "params": "x"}', 11, -32600),
    ('{"jsonrpc": "1.0", "id": 12, "method": "ping"}', 12, -32600),
    (
        '{"jsonrpc": "2.0", "id": 13, "method": "tools/call", "params": {"name": "\\ud800"}}',
        13,
        -32600,
    ),
    (
        '{"jsonrpc": "2.0", "id": 14, "method": "ping", "params": {"x": '
        + "[" * 300
        + "]" * 300
        + "}}",
        14,
        -32600,
    ),
    ('"just a string"', None, -32600),
]


@pytest.mark.timeout(120)
def test_every_malformed_line_gets_its_error_and_serving_goes_on() -> None:
    """Issue 12: unparseable requests on stdio were dropped without a reply, and a line over
    64 MiB killed the gateway. Now each gets the JSON-RPC error and the next request works; a
    line starting with a byte-order mark is served."""
    from gatespec.server.stdio import LINE_LIMIT

    proc = subprocess.Popen(
        [sys.executable, "-m", "gatespec.cli", "serve", "--demo"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    send = proc.stdin
    send.write(LINES.encode())
    for line, _, _ in BAD_LINES:
        send.write(line.encode("utf-8", "surrogatepass") + b"\n")
    send.write(b'{"jsonrpc": "2.0", "id": 20, "method": "ping", "params": {"x": "')
    send.write(b"y" * (LINE_LIMIT + 10) + b'"}}\n')
    send.write("\ufeff".encode() + json.dumps({**LIST, "id": 21}).encode() + b"\n")
    send.flush()
    answers = [json.loads(proc.stdout.readline()) for _ in range(2 + len(BAD_LINES) + 2)]
    send.close()
    assert proc.wait(timeout=30) == 0
    # errors are written as lines are read, answers as requests finish: compare as sets
    results = [a for a in answers if "result" in a]
    errors = [a for a in answers if "error" in a]
    _check(results)
    assert sorted((str(a["id"]), a["error"]["code"]) for a in errors) == sorted(
        [(str(i), c) for _, i, c in BAD_LINES] + [("None", -32600)]
    )
    assert any("bytes" in a["error"]["message"] for a in errors)  # the oversized line
    after = next(a for a in results if a["id"] == 21)
    assert [t["name"] for t in after["result"]["tools"]][0] == "tool_browse"
