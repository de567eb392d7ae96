"""Issue 22 #13 and #14 over handshake-era Streamable HTTP, against a real gateway process.

#13: a body of JSON nested 100,000 deep was answered 500 with a traceback (RecursionError);
now it gets a JSON-RPC error (no traceback), and the session goes on serving.
#14: `{"id": {"a": 1}}` was taken for a notification (202, nothing else); an id that is
neither a string nor an integer gets Invalid Request (-32600) with id null.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests.faults.support import GATESPEC, upstream
from tests.faults.test_http_sessions import HEADERS, INITIALIZE, free_port

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """(/mcp URL, the gateway's stderr) of one gateway for the module: each test opens its own
    session and checks that the gateway goes on serving it."""
    tmp_path = tmp_path_factory.mktemp("malformed")
    path, port = tmp_path / "gateway.json", free_port()
    path.write_text(json.dumps({"mcpServers": {"up": upstream()}, "gateway": {}}))
    log = tmp_path / "stderr.txt"
    argv = [GATESPEC, "serve", "--config", str(path), "--transport", "http", "--port", str(port)]
    with log.open("wb") as err:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None and time.monotonic() < deadline, "gateway did not listen"
            try:
                httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=0.5)
                break
            except httpx2.HTTPError:
                time.sleep(0.1)
        yield url, log
    finally:
        proc.terminate()
        proc.wait(15)


async def _session(http: httpx2.AsyncClient, url: str) -> dict[str, str]:
    answer = await http.post(url, json=INITIALIZE, headers=HEADERS)
    assert answer.status_code == 200
    headers = {**HEADERS, "mcp-session-id": answer.headers["mcp-session-id"]}
    headers["mcp-protocol-version"] = INITIALIZE["params"]["protocolVersion"]  # type: ignore[index]
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post(url, json=note, headers=headers)).status_code == 202
    return headers


def _error(answer: httpx2.Response) -> dict:
    """The JSON-RPC error in a JSON or one-event SSE answer."""
    text = answer.text
    if answer.headers.get("content-type", "").startswith("text/event-stream"):
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
    doc = json.loads(text)
    assert "error" in doc, doc
    return doc


async def _still_serves(http: httpx2.AsyncClient, url: str, headers: dict[str, str]) -> None:
    ping = {"jsonrpc": "2.0", "id": 99, "method": "ping"}
    answer = await http.post(url, json=ping, headers=headers)
    assert answer.status_code == 200
    assert '"id":99' in answer.text.replace(" ", "")


async def test_json_nested_100000_deep_gets_a_json_rpc_error(served: tuple[str, Path]) -> None:
    url, log = served
    async with httpx2.AsyncClient(timeout=30) as http:
        headers = await _session(http, url)
        body = '{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":' + "[" * 100_000
        body += "]" * 100_000 + "}}"
        answer = await http.post(url, content=body.encode(), headers=headers)
        assert answer.status_code == 400, answer.text[:500]
        doc = _error(answer)
        assert doc["id"] is None
        assert doc["error"]["code"] in (-32700, -32600)
        assert "deep" in doc["error"]["message"]
        await _still_serves(http, url, headers)
    assert "Traceback" not in log.read_text()


@pytest.mark.parametrize("rid", [{"a": 1}, 1.5, [1], True])
async def test_an_id_of_the_wrong_type_gets_invalid_request(
    served: tuple[str, Path], rid: object
) -> None:
    url, log = served
    async with httpx2.AsyncClient(timeout=30) as http:
        headers = await _session(http, url)
        answer = await http.post(
            url, json={"jsonrpc": "2.0", "id": rid, "method": "ping"}, headers=headers
        )
        assert answer.status_code == 400, (answer.status_code, answer.text[:300])
        doc = _error(answer)
        assert doc["id"] is None
        assert doc["error"]["code"] == -32600
        assert "id" in doc["error"]["message"]
        await _still_serves(http, url, headers)
