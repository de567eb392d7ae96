"""The status page (gatespec.observe): /status and /status.json of a real gateway.

`gatespec serve --transport http`, in each of the four profiles, fronts two real upstreams:
the PyPI mcp-server-time ("time") and the conformance kit's fixture server ("fixture", which
lists a few malformed tools the catalog leaves out). Two identities hold static tokens:
- ops: no rules, sees everything;
- alice: allowed the tools "time:*" only, so the status she gets names the time upstream
  alone, with no exclusions, and only her own calls.
Expected answers come from that config, written before the gateway runs. The last test (slow)
drives the page in Debian's Chromium through Playwright and saves docs/status.png.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, TextContent

from gatespec import secrets
from gatespec.access import Identity
from gatespec.observe.calls import RECENT_CALLS, CallLog, _outcome
from gatespec_conformance.fixtures.upstream import fixture_argv
from tests.fixtures.polling import until

pytestmark = pytest.mark.anyio

TOKENS = {"ops": "ops-secret-000001", "alice": "alice-secret-0001"}
ROOT = Path(__file__).resolve().parents[3]
CHROMIUM = Path("/usr/bin/chromium")


# -- the call log alone ----------------------------------------------------------------------


def _ctx(name: str, arguments: dict[str, Any], who: str) -> Any:
    return SimpleNamespace(
        method="tools/call",
        request_id=1,
        params={"name": name, "arguments": arguments},
        who=Identity(who),
    )


def test_an_outcome_reads_the_same_from_a_result_object_or_its_wire_form() -> None:
    """How a call ended, from the §3.4 payload a tool_* error carries (structured, or as the
    text of its first content block), from an upstream tool's own isError, or ok."""
    payload = {"code": "TIMEOUT", "message": "no answer in 5 s", "path": "t:x:00000000"}
    results = [
        (CallToolResult(content=[TextContent(type="text", text="fine")]), ("ok", None)),
        (
            CallToolResult(content=[], structured_content=payload, is_error=True),
            ("TIMEOUT", "no answer in 5 s"),
        ),
        (
            CallToolResult(
                content=[TextContent(type="text", text=json.dumps(payload))], is_error=True
            ),
            ("TIMEOUT", "no answer in 5 s"),
        ),
        (
            CallToolResult(content=[TextContent(type="text", text="disk full")], is_error=True),
            ("upstream", "disk full"),
        ),
    ]
    for result, expected in results:
        assert _outcome(result) == expected
        wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        assert _outcome(wire) == expected


async def test_each_identity_reads_only_its_own_calls_redacted_and_bounded() -> None:
    log = CallLog(lambda ctx: ctx.who)
    secrets.remember("hunter2-very-secret", "API_KEY")
    try:

        async def ok(ctx: Any) -> Any:
            return {"content": [], "isError": False}

        async def refused(ctx: Any) -> Any:
            payload = {"code": "FORBIDDEN", "message": "no access to hunter2-very-secret"}
            return {"content": [{"type": "text", "text": json.dumps(payload)}], "isError": True}

        args = {"tool_id": "time:get_current_time#0", "args": {"key": "hunter2-very-secret"}}
        await log(_ctx("tool_execute", args, "alice"), ok)
        await log(_ctx("tool_browse", {"query": "x"}, "bob"), refused)
        alice, bob = log.recent(Identity("alice")), log.recent(Identity("bob"))
        assert [c.name for c in alice] == ["tool_execute"]
        assert alice[0].target == "time:get_current_time#0"
        assert alice[0].outcome == "ok"
        assert "hunter2" not in alice[0].arguments and "${API_KEY}" in alice[0].arguments
        assert [c.outcome for c in bob] == ["FORBIDDEN"]
        assert bob[0].message is not None and "hunter2" not in bob[0].message
        assert log.recent(Identity("carol")) == []
        for _ in range(RECENT_CALLS + 5):
            await log(_ctx("tool_browse", {}, "alice"), ok)
        assert len(log.recent(Identity("alice"))) == RECENT_CALLS
    finally:
        secrets.forget_all()


# -- a real gateway in every profile ---------------------------------------------------------


def _digest(token: str) -> str:
    return "sha256:" + hashlib.sha256(token.encode()).hexdigest()


@dataclass
class Gateway:
    url: str
    profile: str
    time_pid: Path

    def kill_time(self) -> None:
        """Kill the time server for good: the gateway's restarts of it then fail."""
        (self.time_pid.parent / "time.dead").touch()
        os.kill(int(self.time_pid.read_text()), signal.SIGKILL)


@contextmanager
def gateway(tmp_path: Path, servers: Any, profile: str) -> Iterator[Gateway]:
    time_pid = tmp_path / "time.pid"
    time_bin = servers.binary(servers.venv_bin / "mcp-server-time")
    fixture = fixture_argv(tmp_path / "fixture-calls.jsonl")
    config = {
        "mcpServers": {
            "time": {
                "command": "sh",
                "args": [
                    "-c",
                    f"test -e {tmp_path / 'time.dead'} && exit 3; echo $$ > {time_pid}; exec {time_bin}",
                ],
            },
            "fixture": {"command": fixture[0], "args": fixture[1:]},
        },
        "gateway": {
            "profile": profile,
            "refresh_interval": 600,
            "access": {
                "identities": {
                    "ops": {"tokens": [_digest(TOKENS["ops"])]},
                    "alice": {
                        "tokens": [_digest(TOKENS["alice"])],
                        "allow": [{"tools": ["time:*"]}],
                    },
                }
            },
        },
    }
    path = tmp_path / "gateway.json"
    path.write_text(json.dumps(config))
    port = servers.free_port()
    env = {"PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT / 'generated'}"}
    argv = [sys.executable, "-m", "gatespec", "serve", "--config", str(path)]
    servers.spawn([*argv, "--transport", "http", "--port", str(port)], port, env)
    yield Gateway(f"http://127.0.0.1:{port}", profile, time_pid)


async def status(gw: Gateway, who: str | None) -> httpx2.Response:
    headers = {"Authorization": f"Bearer {TOKENS[who]}"} if who else {}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as web:
        return await web.get(f"{gw.url}/status.json")


async def listed_and_called(gw: Gateway) -> None:
    """Both upstreams connected (as ops sees them), then one time call by each identity."""

    async def both_listed() -> bool:
        body = (await status(gw, "ops")).json()
        return [u["state"] for u in body["upstreams"]] == ["connected", "connected"]

    assert await until(both_listed, timeout=20)
    await call_time_tool(gw, "alice")
    await call_time_tool(gw, "ops")


async def call_time_tool(gw: Gateway, who: str) -> None:
    """One successful call of mcp-server-time's get_current_time, the profile's way."""
    headers = {"Authorization": f"Bearer {TOKENS[who]}"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        transport = streamable_http_client(f"{gw.url}/mcp", http_client=http)
        async with Client(transport, mode="legacy", cache=None) as client:
            arguments = {"timezone": "UTC"}
            if gw.profile == "aggregate":
                done = await client.call_tool("time__get_current_time", arguments)
            elif gw.profile == "search":
                found = await client.call_tool("search", {"query": "current time timezone"})
                hits = found.structured_content["hits"]
                operation = next(h["operation"] for h in hits if "current" in h["operation"])
                done = await client.call_tool("call", {"operation": operation, "input": arguments})
            elif gw.profile == "transparent":  # tools/list names the tools (wire names)
                listed = await client.list_tools()
                wire = next(t.name for t in listed.tools if "get_current_time" in t.name)
                done = await client.call_tool("tool_execute", {"tool_id": wire, "args": arguments})
            else:
                found = await client.call_tool("tool_browse", {"path": "/time"})
                cards = found.structured_content["cards"]
                tool_id = next(c["id"] for c in cards if "get_current_time" in c["id"])
                done = await client.call_tool(
                    "tool_execute", {"tool_id": tool_id, "args": arguments}
                )
            assert not done.is_error, done


@pytest.mark.real_upstream
@pytest.mark.timeout(180)
@pytest.mark.parametrize(
    "profile",
    # transparent and search read the status as the gateway profile does (one catalog source)
    [
        "gateway",
        "aggregate",
        *(pytest.param(p, marks=pytest.mark.slow) for p in ("transparent", "search")),
    ],
)
async def test_status_per_identity_in_every_profile(
    tmp_path: Path, servers: Any, profile: str
) -> None:
    with gateway(tmp_path, servers, profile) as gw:
        assert (await status(gw, None)).status_code == 401  # tokens are required here
        await listed_and_called(gw)

        ops = (await status(gw, "ops")).json()
        assert ops["gateway"]["profile"] == profile and ops["gateway"]["viewer"] == "ops"
        assert [u["name"] for u in ops["upstreams"]] == ["time", "fixture"]
        time_row = ops["upstreams"][0]
        assert time_row["calls"] == 2 and time_row["errors"] == 0  # both identities' calls
        assert time_row["last_ms"] > 0 and time_row["mean_ms"] > 0
        assert ops["excluded"] and all(e["upstream"] == "fixture" for e in ops["excluded"])
        # gateway and search find the tool with a call of their own (tool_browse, search)
        assert len(ops["calls"]) == (2 if profile in ("gateway", "search") else 1)

        alice = (await status(gw, "alice")).json()
        assert alice["gateway"]["restricted"] is True
        assert [u["name"] for u in alice["upstreams"]] == ["time"]
        assert alice["catalog"]["tools"] == alice["upstreams"][0]["tools"] > 0
        assert alice["excluded"] == []
        assert {c["at"] for c in alice["calls"]}.isdisjoint({c["at"] for c in ops["calls"]})
        assert len(alice["calls"]) == len(ops["calls"])

        gw.kill_time()

        async def time_down() -> Any:
            body = (await status(gw, "alice")).json()
            row = body["upstreams"][0]
            return row if row["state"] == "failed" else None

        down = await until(time_down, timeout=20)
        assert down, "the killed upstream never showed as failed"
        assert down["last_error"]

        page = await _get(f"{gw.url}/status")
        assert page.status_code == 200
        assert "default-src 'none'" in page.headers["content-security-policy"]


async def _get(url: str) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=30) as web:
        return await web.get(url)


@pytest.mark.real_upstream
@pytest.mark.timeout(120)
@pytest.mark.parametrize("tokens", [False, True], ids=["no-access-control", "tokens"])
def test_stdio_gateway_serves_the_status_page_on_its_opt_in_port(
    tmp_path: Path, servers: Any, tokens: bool
) -> None:
    """Without access control the viewer is the stdio client's identity (local); with tokens
    the status wants one, like /mcp would over HTTP."""
    port = servers.free_port()
    time_bin = servers.binary(servers.venv_bin / "mcp-server-time")
    gateway: dict[str, Any] = {"metrics_port": port}
    if tokens:
        gateway["access"] = {"identities": {"ops": {"tokens": [_digest(TOKENS["ops"])]}}}
    config = {"mcpServers": {"time": {"command": time_bin}}, "gateway": gateway}
    headers = {"Authorization": f"Bearer {TOKENS['ops']}"} if tokens else {}
    path = tmp_path / "gateway.json"
    path.write_text(json.dumps(config))
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT / 'generated'}"}
    argv = [sys.executable, "-m", "gatespec", "serve", "--config", str(path)]
    proc = subprocess.Popen(
        argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 30
        body: dict[str, Any] = {}
        while time.monotonic() < deadline:
            try:
                body = httpx2.get(f"http://127.0.0.1:{port}/status.json", headers=headers).json()
                if body["upstreams"] and body["upstreams"][0]["state"] == "connected":
                    break
            except (httpx2.HTTPError, ValueError, KeyError):
                pass
            time.sleep(0.2)
        assert body["gateway"]["viewer"] == ("ops" if tokens else "local")
        if tokens:
            assert httpx2.get(f"http://127.0.0.1:{port}/status.json").status_code == 401
        assert [(u["name"], u["state"]) for u in body["upstreams"]] == [("time", "connected")]
        assert httpx2.get(f"http://127.0.0.1:{port}/status").status_code == 200
        assert "gatespec_upstream_up" in httpx2.get(f"http://127.0.0.1:{port}/metrics").text
    finally:
        proc.kill()
        proc.communicate(timeout=10)


# -- the page in a real browser --------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.real_upstream
@pytest.mark.timeout(240)
async def test_the_page_in_chromium(tmp_path: Path, servers: Any) -> None:
    """Playwright drives Debian's Chromium (its own browser download cannot work here): the
    page loads with nothing from elsewhere, a killed upstream turns red, and a restricted
    identity sees only its own upstream and calls. Saves docs/status.png for the README."""
    if not CHROMIUM.exists():
        pytest.skip(
            "Debian's chromium is not installed (apt-get install -y chromium; .ci/run does)"
        )
    from playwright.async_api import async_playwright

    with gateway(tmp_path, servers, "gateway") as gw:
        await listed_and_called(gw)
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=str(CHROMIUM))
            try:
                ops = await browser.new_page(viewport={"width": 1280, "height": 900})
                elsewhere: list[str] = []
                ops.on(
                    "request",
                    lambda r: None if r.url.startswith(gw.url) else elsewhere.append(r.url),
                )
                await ops.goto(f"{gw.url}/status#token={TOKENS['ops']}")
                time_row = ops.locator('#upstreams tr[data-upstream="time"]')
                await time_row.and_(ops.locator('[data-state="connected"]')).wait_for()
                assert "token" not in ops.url  # the token left the address bar
                assert await ops.locator("#upstreams tbody tr").count() == 2
                assert await ops.locator("#calls tbody tr[data-outcome]").count() == 2

                gw.kill_time()
                red = ops.locator('#upstreams tr[data-upstream="time"][data-state="failed"]')
                await red.wait_for(timeout=20_000)  # the page refreshes itself
                color = await red.locator(".state").evaluate(
                    "e => getComputedStyle(e).backgroundColor"
                )
                assert color == "rgb(198, 40, 40)"  # --down in status.html
                assert elsewhere == []
                await ops.screenshot(path=str(ROOT / "docs" / "status.png"), full_page=True)

                alice = await browser.new_page()  # a fresh context: its own sessionStorage
                await alice.goto(f"{gw.url}/status#token={TOKENS['alice']}")
                await alice.locator('#upstreams tr[data-upstream="time"]').wait_for()
                await alice.locator("#calls tbody tr[data-outcome]").first.wait_for()
                text = await alice.locator("body").inner_text()
                assert "fixture" not in text
                assert await alice.locator("#upstreams tbody tr").count() == 1
                assert await alice.locator("#calls tbody tr[data-outcome]").count() == 2
                assert "(restricted)" in await alice.locator("#meta").inner_text()

                nobody = await browser.new_page()
                await nobody.goto(f"{gw.url}/status")
                problem = nobody.locator("#problem", has_text="bearer token")
                await problem.wait_for()
            finally:
                await browser.close()
