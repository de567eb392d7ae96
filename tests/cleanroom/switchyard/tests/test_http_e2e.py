"""End-to-end over HTTP: bearer-token access control (seed 003 Decision 5),
Streamable HTTP at /mcp and the HTTP+SSE endpoints of seed 001."""

from __future__ import annotations

import re

import anyio
import httpx2
import mcp.types as types
import pytest
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from conftest import http_gateway, upstream, write_config

pytestmark = pytest.mark.anyio

IDENTITIES = {
    "admin": {"token": "admin-token"},
    "reader": {"token": "reader-token", "allow": ["/fixture/echo", "/fixture/add", "/alt/*"]},
}
UUID_RE = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def _search_config(tmp_path):
    return write_config(tmp_path, {"fixture": upstream("main"), "alt": upstream("alt")},
                        defaultTimeout=5, identities=IDENTITIES)


def _auth(token):
    return {"Authorization": f"Bearer {token}"}


async def _first_sse_event(client, url, headers):
    """Open GET /sse and return (response, event name, data) of the first event."""
    request = client.build_request("GET", url, headers=headers)
    response = await client.send(request, stream=True)
    event = data = None
    lines = response.aiter_lines()  # not a `for` loop: leaving it early would close the stream
    while True:
        line = await lines.__anext__()
        if line.startswith("event:"):
            event = line.split(":", 1)[1].strip()
        elif line.startswith("data:"):
            data = line.split(":", 1)[1].strip()
        elif line == "" and event:
            break
    response._switchyard_lines = lines  # keep the generator alive with the response
    return response, event, data


async def test_requests_without_valid_token_get_401(tmp_path):
    with http_gateway("search", _search_config(tmp_path)) as base:
        async with httpx2.AsyncClient(timeout=10) as h:
            init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                               "clientInfo": {"name": "t", "version": "0"}}}
            hdrs = {"Accept": "application/json, text/event-stream"}
            r = await h.post(base + "/mcp", json=init, headers=hdrs)
            assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer")
            r = await h.post(base + "/mcp", json=init, headers={**hdrs, **_auth("wrong")})
            assert r.status_code == 401
            r = await h.get(base + "/sse")
            assert r.status_code == 401
            r = await h.post(base + "/messages?sessionId=00000000-0000-0000-0000-000000000000", json={})
            assert r.status_code == 401
            r = await h.post(base + "/mcp", json=init, headers={**hdrs, **_auth("admin-token")})
            assert r.status_code == 200
            # the Streamable HTTP session is bound to the identity that created it
            sid = r.headers["mcp-session-id"]
            ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
            r = await h.post(base + "/mcp", json=ping,
                             headers={**hdrs, **_auth("reader-token"), "mcp-session-id": sid,
                                      "mcp-protocol-version": "2025-11-25"})
            assert r.status_code == 404


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_access_control_over_streamable_http(tmp_path, mode):
    with http_gateway("search", _search_config(tmp_path)) as base:
        async with create_mcp_http_client(headers=_auth("reader-token")) as hc:
            async with Client(streamable_http_client(base + "/mcp", http_client=hc), mode=mode) as c:
                r = await c.call_tool("search", {})
                names = [o["name"] for o in r.structured_content["operations"]]
                # only what the caller may call
                assert "/fixture/write_note" not in names and "/fixture/boom" not in names
                assert {"/fixture/echo", "/fixture/add", "/alt/echo"} <= set(names)
                assert all(n.startswith("/alt/") or n in ("/fixture/echo", "/fixture/add") for n in names)

                r = await c.call_tool("call", {"operation": "/fixture/add", "input": {"a": 2, "b": 2}})
                assert r.structured_content == {"sum": 4}
                # unauthorized -> FORBIDDEN, as an MCP error result
                r = await c.call_tool("call", {"operation": "/fixture/write_note", "input": {"key": "a", "value": "b"}})
                assert r.is_error and r.structured_content["code"] == "FORBIDDEN"
                # no leak: an operation that does not exist answers exactly like one that does
                r2 = await c.call_tool("call", {"operation": "/fixture/does_not_exist"})
                assert r2.is_error and r2.structured_content["code"] == "FORBIDDEN"
                r3 = await c.call_tool("schema", {"operation": "/fixture/write_note"})
                assert r3.is_error and r3.structured_content["code"] == "FORBIDDEN"
                assert "inputSchema" not in r3.structured_content
                r = await c.call_tool("batch", {"calls": [
                    {"operation": "/fixture/echo", "input": {"text": "a"}},
                    {"operation": "/fixture/boom"},
                ]})
                assert [x["ok"] for x in r.structured_content["results"]] == [True, False]
                assert r.structured_content["results"][1]["error"]["code"] == "FORBIDDEN"

        async with create_mcp_http_client(headers=_auth("admin-token")) as hc:
            async with Client(streamable_http_client(base + "/mcp", http_client=hc), mode=mode) as c:
                r = await c.call_tool("search", {"namespace": "fixture"})
                assert "/fixture/write_note" in [o["name"] for o in r.structured_content["operations"]]
                r = await c.call_tool("call", {"operation": "/fixture/does_not_exist"})
                assert r.structured_content["code"] == "NOT_FOUND"


async def test_sse_transport_endpoints_and_session_binding(tmp_path):
    with http_gateway("search", _search_config(tmp_path)) as base:
        async with httpx2.AsyncClient(timeout=10) as h:
            response, event, data = await _first_sse_event(h, base + "/sse", _auth("reader-token"))
            try:
                # 001 "SSE Connection": endpoint event pointing to /messages?sessionId={uuid}
                assert event == "endpoint"
                assert re.fullmatch(r"/messages\?sessionId=" + UUID_RE, data), data
                ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
                r = await h.post(base + data, json=ping, headers=_auth("admin-token"))
                assert r.status_code == 404  # session belongs to another identity
                r = await h.post(base + data, json=ping, headers=_auth("reader-token"))
                assert r.status_code == 202
                r = await h.post(base + "/messages", json=ping, headers=_auth("reader-token"))
                assert r.status_code == 400
            finally:
                await response.aclose()
            # 001 "Destroy session": once the stream is gone the session is gone
            with anyio.fail_after(10):
                while True:
                    r = await h.post(base + data, json={"jsonrpc": "2.0", "id": 2, "method": "ping"},
                                     headers=_auth("reader-token"))
                    if r.status_code == 404:
                        break
                    await anyio.sleep(0.1)

        async with Client(sse_client(base + "/sse", headers=_auth("reader-token")), mode="legacy") as c:
            assert [t.name for t in (await c.list_tools()).tools] == ["search", "schema", "call", "batch"]
            r = await c.call_tool("call", {"operation": "/fixture/write_note", "input": {"key": "a", "value": "b"}})
            assert r.structured_content["code"] == "FORBIDDEN"
            r = await c.call_tool("call", {"operation": "/alt/echo", "input": {"text": "sse"}})
            assert r.structured_content["server"] == "alt"


async def test_aggregate_over_http_and_sse_with_list_changed(tmp_path):
    cfg = write_config(tmp_path, {"fixture": upstream("main"), "alt": upstream("alt")}, defaultTimeout=5)
    with http_gateway("aggregate", cfg) as base:
        # no identities configured -> the aggregate profile needs no token
        async with Client(base + "/mcp", mode="legacy") as c:
            r = await c.call_tool("alt__echo", {"text": "http"})
            assert r.structured_content == {"text": "http", "server": "alt"}

        changed = anyio.Event()

        async def on_message(msg):
            if isinstance(msg, types.ToolListChangedNotification):
                changed.set()

        async with Client(sse_client(base + "/sse"), mode="legacy", message_handler=on_message) as c:
            names = {t.name for t in (await c.list_tools()).tools}
            assert "fixture__echo" in names and "alt__echo" in names
            r = await c.call_tool("fixture__add", {"a": 20, "b": 22})
            assert r.structured_content == {"sum": 42}
            rr = await c.read_resource("alt__note://hello")
            assert rr.contents[0].text == "Hello from alt"
            await c.call_tool("fixture__toggle_extra", {})
            with anyio.fail_after(10):
                await changed.wait()
            assert "fixture__extra" in {t.name for t in (await c.list_tools()).tools}


async def test_aggregate_requires_token_when_identities_configured(tmp_path):
    cfg = write_config(tmp_path, {"fixture": upstream("main")}, identities={"ops": {"token": "ops-token"}})
    with http_gateway("aggregate", cfg) as base:
        async with httpx2.AsyncClient(timeout=10) as h:
            assert (await h.get(base + "/sse")).status_code == 401
        async with Client(sse_client(base + "/sse", headers=_auth("ops-token")), mode="legacy") as c:
            r = await c.call_tool("fixture__echo", {"text": "x"})
            assert r.structured_content["text"] == "x"
