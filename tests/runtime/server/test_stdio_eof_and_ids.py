"""Issue 22 #12 and #14 over stdio, against a real `gatespec serve --demo` process.

#12: requests read before stdin's EOF are answered before the gateway exits (a slow one
included: the first ranked query loads the embedding model).
#14: a request whose id is neither a string nor an integer (1.5, {}, [1], true) is answered
with JSON-RPC's Invalid Request error, id null, instead of being taken for a notification and
dropped.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gatespec_conformance.live.access import INITIALIZE as INIT

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _serve(messages: list[object]) -> tuple[int, list[dict]]:
    text = "".join(json.dumps(m) + "\n" for m in messages)
    done = subprocess.run(
        [sys.executable, "-m", "gatespec.cli", "serve", "--demo"],
        input=text.encode(),
        capture_output=True,
        timeout=90,
    )
    answers = [json.loads(line) for line in done.stdout.decode().splitlines() if line.strip()]
    return done.returncode, answers


@pytest.mark.timeout(120)
def test_requests_read_before_stdin_closes_are_all_answered() -> None:
    browse = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "tool_browse", "arguments": {"query": "read a file"}},
    }
    ping = {"jsonrpc": "2.0", "id": 8, "method": "ping"}
    status, answers = _serve([INIT, INITIALIZED, browse, ping])
    assert status == 0
    by_id = {a["id"]: a for a in answers}
    assert sorted(by_id) == [1, 7, 8]
    assert by_id[8]["result"] == {}
    assert by_id[7]["result"]["content"]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("rid", [1.5, {}, [1], True, False, {"a": 1}])
def test_a_request_with_an_id_of_the_wrong_type_gets_invalid_request(rid: object) -> None:
    bad = {"jsonrpc": "2.0", "id": rid, "method": "ping"}
    after = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
    status, answers = _serve([INIT, INITIALIZED, bad, after])
    assert status == 0
    errors = [a for a in answers if "error" in a]
    assert len(errors) == 1, answers
    assert errors[0]["id"] is None
    assert errors[0]["error"]["code"] == -32600
    assert "id" in errors[0]["error"]["message"]
    assert any(a.get("id") == 9 and a.get("result") == {} for a in answers)


@pytest.mark.timeout(120)
def test_a_line_nested_100000_deep_gets_a_parse_error_saying_so() -> None:
    deep = '{"jsonrpc": "2.0", "id": 5, "method": "ping", "params": {"x": '
    deep += "[" * 100_000 + "]" * 100_000 + "}}"
    text = "".join(json.dumps(m) + "\n" for m in (INIT, INITIALIZED)) + deep + "\n"
    done = subprocess.run(
        [sys.executable, "-m", "gatespec.cli", "serve", "--demo"],
        input=text.encode(),
        capture_output=True,
        timeout=90,
    )
    answers = [json.loads(line) for line in done.stdout.decode().splitlines() if line.strip()]
    errors = [a for a in answers if "error" in a]
    assert done.returncode == 0
    assert [(e["id"], e["error"]["code"]) for e in errors] == [(None, -32700)]
    assert "nested too deeply" in errors[0]["error"]["message"]
    assert b"Traceback" not in done.stderr
