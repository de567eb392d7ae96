"""The server over real transports, in a subprocess: the `gatespec` CLI serving the fake runtime
(tests/fixtures/fake_gateway.py) in front of a stub upstream.

Clients: the official mcp Client (stdio; Streamable HTTP in both protocol eras; legacy SSE) and
the MCP Inspector CLI (TypeScript SDK) over stdio, Streamable HTTP and SSE. Also checked:
session keys per transport, list_changed delivery, DNS-rebinding protection and the
``sessionId`` spelling of the SSE message endpoint.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters
from mcp.server.subscriptions import ToolsListChanged

from gatespec.server.transports import loopback_security
from gatespec_conformance.live.access import INITIALIZE as INIT
from gatespec_surface.descriptors import tools_for_profile
from gatespec_surface.schemas import MODEL_SCHEMAS

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

ROOT = Path(__file__).resolve().parents[3]
FAKE = ROOT / "tests" / "fixtures" / "fake_gateway.py"
INSPECTOR = ROOT / "node_modules" / ".bin" / "mcp-inspector"
ACCEPT = {"Accept": "application/json, text/event-stream"}


def write_config(tmp_path: Path, mode: str = "transparent", broken: bool = False) -> Path:
    catalog = {
        "tools": [
            {"name": "read_file", "description": "Read a file.",
             "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}},
            {"name": "touch", "description": "Add a tool.", "inputSchema": {"type": "object"}},
        ]
    }  # fmt: skip
    (tmp_path / "catalog.json").write_text(json.dumps(catalog))
    servers: dict[str, Any] = {"fs": {"type": "stub", "catalog": "catalog.json"}}
    if broken:
        servers["broken"] = {"command": str(tmp_path / "no-such-server")}
    config = {"mcpServers": servers, "gateway": {"profile": mode}}
    path = tmp_path / "gateway.json"
    path.write_text(json.dumps(config))
    return path


def gateway_argv(python: str, config: Path, *extra: str) -> list[str]:
    return [python, str(FAKE), "serve", "--config", str(config), *extra]


async def wire_names(client: Client) -> dict[str, str]:
    """upstream tool name -> its wire name in the stripped tools/list."""
    tools = (await client.list_tools()).tools
    return {t.name.split("-n", 1)[1].rsplit("-h", 1)[0]: t.name for t in tools[3:]}


def session_of(result: types.CallToolResult) -> str:
    assert result.is_error is False, result.content
    assert result.structured_content is not None
    return str(result.structured_content["provenance"]["session"])


class Changes:
    """A message_handler that records notifications/tools/list_changed."""

    def __init__(self) -> None:
        self.event = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.event.set()

    async def wait(self) -> None:
        with anyio.fail_after(10):
            await self.event.wait()


async def legacy_round(client: Client, changes: Changes) -> str:
    """List, call, touch the catalog and see the change announced; returns the session key."""
    names = await wire_names(client)
    session = session_of(
        await client.call_tool("tool_execute", {"tool_id": names["read_file"], "args": {}})
    )
    await client.call_tool("tool_execute", {"tool_id": names["touch"]})
    await changes.wait()
    assert len((await client.list_tools()).tools) == 3 + len(names) + 1
    return session


async def modern_round(client: Client) -> str:
    assert client.protocol_version == "2026-07-28"
    names = await wire_names(client)
    session = session_of(
        await client.call_tool("tool_execute", {"tool_id": names["read_file"], "args": {}})
    )
    async with client.listen(tools_list_changed=True) as subscription:
        await client.call_tool("tool_execute", {"tool_id": names["touch"]})
        with anyio.fail_after(10):
            assert await subscription.__anext__() == ToolsListChanged()
    return session


# -- stdio -------------------------------------------------------------------------------


def stdio_params(servers: Any, config: Path) -> StdioServerParameters:
    return StdioServerParameters(command=servers.python, args=gateway_argv("", config)[1:])


async def test_stdio_handshake_client(servers: Any, tmp_path: Path) -> None:
    changes = Changes()
    params = stdio_params(servers, write_config(tmp_path))
    async with Client(params, mode="legacy", message_handler=changes, cache=None) as client:
        assert await legacy_round(client, changes) == "stdio"


async def test_stdio_2026_client(servers: Any, tmp_path: Path) -> None:
    async with Client(stdio_params(servers, write_config(tmp_path)), cache=None) as client:
        assert await modern_round(client) == "stdio"


def test_stdio_progress_goes_to_stderr_and_stdout_stays_clean(servers: Any, tmp_path: Path) -> None:
    argv = gateway_argv(servers.python, write_config(tmp_path, broken=True))
    done = subprocess.run(argv, input=b"", capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == b""  # stdout is the MCP channel
    err = done.stderr.decode()
    assert "gatespec: [" in err and "fs: connected" in err
    assert "broken: failed: command not found" in err
    assert "1 of 2 upstreams connected (1 failed" in err
    assert "Traceback" not in err


# -- Streamable HTTP and SSE --------------------------------------------------------------


@pytest.fixture(scope="module")
def http_gateway(module_servers: Any, tmp_path_factory: Any) -> Iterator[str]:
    """Base URL of a gateway served over HTTP (transparent mode), one for the module's tests:
    none depends on the catalog's size (each `touch` adds a tool; the rounds count from what
    they list) and every client opens its own session."""
    port = module_servers.free_port()
    config = write_config(tmp_path_factory.mktemp("http_gateway"))
    argv = gateway_argv(module_servers.python, config, "--transport", "http", "--port", str(port))
    module_servers.spawn(argv, port)
    yield f"http://127.0.0.1:{port}"


async def test_streamable_http_2026_client_is_sessionless(http_gateway: str) -> None:
    async with Client(f"{http_gateway}/mcp", cache=None) as client:
        assert await modern_round(client) == "http:sessionless"


async def test_streamable_http_handshake_client_has_a_session(http_gateway: str) -> None:
    changes = Changes()
    url = f"{http_gateway}/mcp"
    async with Client(url, mode="legacy", message_handler=changes, cache=None) as client:
        session = await legacy_round(client, changes)
    assert session.startswith("http:") and len(session) == len("http:") + 32


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_legacy_sse_client(http_gateway: str, mode: str) -> None:
    changes = Changes()
    transport = sse_client(f"{http_gateway}/sse")
    async with Client(transport, mode=mode, message_handler=changes, cache=None) as client:
        if mode == "legacy":
            session = await legacy_round(client, changes)
        else:  # a 2026-07-28 client over the SSE pipe: list_changed via subscriptions/listen
            session = await modern_round(client)
    assert session.startswith("sse:") and len(session) == len("sse:") + 32


async def test_sse_messages_accept_the_session_id_spelling_of_seed_001(
    http_gateway: str,
) -> None:
    async with httpx2.AsyncClient(base_url=http_gateway, timeout=10) as http:
        async with http.stream("GET", "/sse") as stream:
            lines = stream.aiter_lines()
            endpoint = ""
            async for line in lines:
                if line.startswith("data: "):
                    endpoint = line[len("data: ") :]
                    break
            assert urlsplit(endpoint).path == "/messages"
            session = parse_qs(urlsplit(endpoint).query)["session_id"][0]
            posted = await http.post(f"/messages?sessionId={session}", json=INIT)
            assert posted.status_code == 202
            async for line in lines:
                if line.startswith("data: "):
                    answer = json.loads(line[len("data: ") :])
                    break
            assert answer["id"] == 1
            assert answer["result"]["serverInfo"]["name"] == "gatespec"
            unknown = await http.post(f"/messages?sessionId={'0' * 32}", json=INIT)
            assert unknown.status_code == 404


async def test_dns_rebinding_protection_accepts_loopback_and_rejects_others(
    http_gateway: str,
) -> None:
    port = urlsplit(http_gateway).port
    async with httpx2.AsyncClient(base_url=http_gateway, timeout=10) as http:
        for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
            ok = await http.post("/mcp", json=INIT, headers={**ACCEPT, "Host": host})
            assert ok.status_code == 200, (host, ok.text)
        origin = {"Origin": f"http://127.0.0.1:{port}"}
        assert (await http.post("/mcp", json=INIT, headers={**ACCEPT, **origin})).status_code == 200
        evil_host = {"Host": "evil.example"}
        assert (
            await http.post("/mcp", json=INIT, headers={**ACCEPT, **evil_host})
        ).status_code == 421
        evil_origin = {"Origin": "http://evil.example"}
        assert (
            await http.post("/mcp", json=INIT, headers={**ACCEPT, **evil_origin})
        ).status_code == 403
        modern = {**ACCEPT, **evil_host, "MCP-Protocol-Version": "2026-07-28"}
        assert (await http.post("/mcp", json=INIT, headers=modern)).status_code == 421
        assert (await http.get("/sse", headers=evil_host)).status_code == 421
        posted = await http.post(f"/messages?session_id={'0' * 32}", json=INIT, headers=evil_host)
        assert posted.status_code == 421
        async with http.stream("GET", "/sse", headers={"Host": f"127.0.0.1:{port}"}) as stream:
            assert stream.status_code == 200


@pytest.mark.parametrize("bind", ["127.0.0.2", "127.1.2.3", "::1", "localhost"])
def test_every_loopback_address_gets_the_host_and_origin_checks(bind: str) -> None:
    """Which binds are loopback ones (all of 127.0.0.0/8): the settings the served test below
    exercises for one such bind."""
    security = loopback_security(bind)
    assert security is not None and security.enable_dns_rebinding_protection
    bound = f"[{bind}]" if ":" in bind else bind
    assert {bound, f"{bound}:*", "127.0.0.1:*", "localhost:*"} <= set(security.allowed_hosts)
    assert f"http://{bound}:*" in security.allowed_origins
    assert "evil.example" not in security.allowed_hosts
    assert loopback_security("10.1.2.3") is None  # no loopback bind, no host named: no check


async def test_every_loopback_bind_checks_host_and_origin(servers: Any, tmp_path: Path) -> None:
    """Issue 22 item 7: Host/Origin checks were on only for 127.0.0.1, localhost and ::1; a
    gateway bound to 127.0.0.2 answered `Host: evil.example` with 200 (DNS rebinding). Served
    on one such bind (127.1.2.3 takes the same `is_loopback` branch: the test above)."""
    bind = "127.0.0.2"
    port = servers.free_port()
    argv = gateway_argv(servers.python, write_config(tmp_path), "--transport", "http",
                        "--host", bind, "--port", str(port))  # fmt: skip
    servers.spawn(argv, port, host=bind)
    async with httpx2.AsyncClient(base_url=f"http://{bind}:{port}", timeout=10) as http:
        ok = await http.post("/mcp", json=INIT, headers=ACCEPT)  # Host: the bind itself
        assert ok.status_code == 200, ok.text
        local = {**ACCEPT, "Host": f"localhost:{port}", "Origin": f"http://{bind}:{port}"}
        assert (await http.post("/mcp", json=INIT, headers=local)).status_code == 200
        evil_host = {**ACCEPT, "Host": "evil.example"}
        assert (await http.post("/mcp", json=INIT, headers=evil_host)).status_code == 421
        evil_origin = {**ACCEPT, "Origin": "http://evil.example"}
        assert (await http.post("/mcp", json=INIT, headers=evil_origin)).status_code == 403
        assert (await http.get("/sse", headers={"Host": "evil.example"})).status_code == 421


async def test_gateway_mode_over_http_lists_only_the_meta_tools(
    servers: Any, tmp_path: Path
) -> None:
    port = servers.free_port()
    config = write_config(tmp_path, mode="gateway")
    servers.spawn(
        gateway_argv(servers.python, config, "--transport", "http", "--port", str(port)), port
    )
    async with Client(f"http://127.0.0.1:{port}/mcp", cache=None) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        result = await client.call_tool("tool_browse", {"query": "read"})
    assert names == ["tool_browse", "tool_execute", "tool_view"]
    assert result.structured_content is not None
    assert [c["name"] for c in result.structured_content["cards"]] == ["read_file"]


# -- MCP Inspector CLI (TypeScript SDK) ----------------------------------------------------
# A node process per call, 5 s or more each: `make test-slow` (as test_aggregate_inspector).
# The same transports and answers are checked with the Python SDK's client above.


def inspector(servers: Any, *args: str) -> Any:
    """Run the Inspector CLI; its stdout is one JSON document."""
    argv = [servers.binary(INSPECTOR), "--cli", *args]
    done = subprocess.run(argv, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
    return json.loads(done.stdout)


def call_args(tool: str, *pairs: str) -> list[str]:
    # --tool-arg is variadic, so it goes first and the method options after it.
    return ["--tool-arg", *pairs, "--method", "tools/call", "--tool-name", tool]


@pytest.mark.slow
def test_inspector_over_stdio(servers: Any, tmp_path: Path) -> None:
    config = write_config(tmp_path)
    command = ["--", *gateway_argv(servers.python, config)]
    listed = inspector(servers, "--method", "tools/list", *command)
    names = [t["name"] for t in listed["tools"]]
    assert names[:3] == ["tool_hydrate", "tool_execute", "tool_view"] and len(names) == 5
    read = next(n for n in names if "nread_file" in n)
    called = inspector(
        servers, *call_args("tool_execute", f"tool_id={read}", 'args={"path":"/x"}'), *command,
    )  # fmt: skip
    assert called["isError"] is False
    assert called["structuredContent"]["provenance"]["session"] == "stdio"
    assert 'stub fs/read_file called with {"path": "/x"}' in called["content"][0]["text"]


@pytest.mark.slow
def test_inspector_over_stdio_gateway_mode_errors(servers: Any, tmp_path: Path) -> None:
    command = ["--", *gateway_argv(servers.python, write_config(tmp_path), "--profile", "gateway")]
    both = inspector(servers, *call_args("tool_browse", "query=read", "path=/fs"), *command)
    assert both["isError"] is True
    payload = json.loads(both["content"][0]["text"])
    assert payload == both["structuredContent"]
    assert payload["error"] == "ARGS_INVALID"
    assert payload["message"] == "tool_browse takes exactly one of query or path; got both"
    found = inspector(servers, *call_args("tool_browse", "query=read"), *command)
    assert found["isError"] is False
    assert found["content"][0]["text"].startswith("1 of 2 tools match")


@pytest.mark.slow
def test_inspector_over_streamable_http_and_sse(servers: Any, http_gateway: str) -> None:
    listed = inspector(
        servers, f"{http_gateway}/mcp", "--transport", "http", "--method", "tools/list"
    )
    read = next(t["name"] for t in listed["tools"] if "nread_file" in t["name"])
    called = inspector(
        servers, *call_args("tool_execute", f"tool_id={read}"),
        "--transport", "http", "--", f"{http_gateway}/mcp",
    )  # fmt: skip
    assert called["structuredContent"]["provenance"]["session"].startswith("http:")
    over_sse = inspector(
        servers, f"{http_gateway}/sse", "--transport", "sse", "--method", "tools/list"
    )
    assert [t["name"] for t in over_sse["tools"]] == [t["name"] for t in listed["tools"]]
    called = inspector(
        servers, *call_args("tool_execute", f"tool_id={read}"),
        "--transport", "sse", "--", f"{http_gateway}/sse",
    )  # fmt: skip
    assert called["structuredContent"]["provenance"]["session"].startswith("sse:")


def test_advertised_patterns_compile_as_javascript_unicode_regexes(servers: Any) -> None:
    """A client that compiles our schemas with ajv (TypeScript SDK) must accept every pattern."""
    patterns: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            patterns.update(v for k, v in node.items() if k == "pattern" and isinstance(v, str))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for profile in ("gateway", "transparent"):
        for tool in tools_for_profile(profile):
            walk(tool.model_dump(by_alias=True, exclude_none=True))
    for model in MODEL_SCHEMAS.values():  # shipped for clients that want them
        walk(model)
    script = (
        "const bad = JSON.parse(process.argv[1]).filter(p => "
        "{ try { new RegExp(p, 'u'); return false } catch (e) { return true } });"
        "console.log(JSON.stringify(bad))"
    )
    done = subprocess.run(
        ["node", "-e", script, json.dumps(sorted(patterns))], capture_output=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


# -- the real runtime (ProxyRuntime over the embedded default catalog) ----------------------


async def agent_round(client: Client) -> None:
    """browse -> execute (large result) -> view its artifact -> a refused execute."""
    found = await client.call_tool("tool_browse", {"query": "echo"})
    assert found.structured_content is not None
    echo = next(c["id"] for c in found.structured_content["cards"] if ":echo#" in c["id"])
    done = await client.call_tool(
        "tool_execute", {"tool_id": echo, "args": {"message": "hi " * 3000}}
    )
    assert done.is_error is False and done.structured_content is not None
    handle = done.structured_content["artifacts"][0]["handle"]
    viewed = await client.call_tool("tool_view", {"handle": handle, "selector": "bytes:0-3"})
    assert viewed.is_error is False
    assert [c.text for c in viewed.content if isinstance(c, types.TextContent)] == ["stub"]
    refused = await client.call_tool("tool_execute", {"tool_id": echo, "args": {}})
    assert refused.is_error is True
    assert refused.structured_content is not None
    assert refused.structured_content["error"] == "ARGS_INVALID"


async def test_real_runtime_over_every_transport(servers: Any) -> None:
    port = servers.free_port()
    argv = [servers.python, "-m", "gatespec.cli", "serve", "--demo", "--transport", "http"]
    servers.spawn([*argv, "--port", str(port)], port)
    base = f"http://127.0.0.1:{port}"
    async with Client(f"{base}/mcp", cache=None) as client:
        assert client.protocol_version == "2026-07-28"
        await agent_round(client)
    async with Client(f"{base}/mcp", mode="legacy", cache=None) as client:
        await agent_round(client)
    async with Client(sse_client(f"{base}/sse"), mode="legacy", cache=None) as client:
        await agent_round(client)
    listed = inspector(servers, f"{base}/mcp", "--transport", "http", "--method", "tools/list")
    assert [t["name"] for t in listed["tools"]] == ["tool_browse", "tool_execute", "tool_view"]
    root = inspector(
        servers, *call_args("tool_browse", "path=/"), "--transport", "sse", "--", f"{base}/sse"
    )
    assert [c["id"] for c in root["structuredContent"]["cards"]] == [
        "/everything", "/filesystem", "/git", "/memory", "/time"
    ]  # fmt: skip


async def test_real_runtime_transparent_over_stdio(servers: Any) -> None:
    argv = [
        "-m",
        "gatespec.cli",
        "serve",
        "--demo",
        "--mode",
        "transparent",
    ]  # the old option name still works
    params = StdioServerParameters(command=servers.python, args=argv)
    async with Client(params, mode="legacy", cache=None) as client:
        assert client.server_capabilities.tools is not None
        assert client.server_capabilities.tools.list_changed is True
        tools = (await client.list_tools()).tools
        assert [t.name for t in tools[:2]] == ["tool_hydrate", "tool_execute"]
        stripped = tools[3:]
        assert len(stripped) > 20 and all(t.input_schema == {"type": "object"} for t in stripped)
        hydrated = await client.call_tool("tool_hydrate", {"tool_id": stripped[0].name})
        assert hydrated.is_error is False and hydrated.structured_content is not None
        direct = await client.call_tool(stripped[0].name, {})
        assert direct.is_error is True and direct.structured_content is not None
        assert direct.structured_content["error"] == "TOOL_NOT_FOUND"


# -- the answer's form (AM-HTTP-ANSWER-FORM) ------------------------------------------------


async def _session(http: Any, capabilities: dict[str, Any]) -> dict[str, str]:
    """Open a handshake-era session declaring `capabilities`: the headers of its requests."""
    init = {**INIT, "params": {**INIT["params"], "capabilities": capabilities}}  # type: ignore[dict-item]
    opened = await http.post("/mcp", json=init, headers=ACCEPT)
    assert opened.status_code == 200, opened.text
    headers = {
        **ACCEPT,
        "Mcp-Session-Id": opened.headers["mcp-session-id"],
        "MCP-Protocol-Version": "2025-06-18",
    }
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post("/mcp", json=note, headers=headers)).status_code == 202
    return headers


def _call(name: str, arguments: dict[str, Any], token: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    return {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}


async def test_streamable_http_answers_json_unless_the_request_may_relay(
    http_gateway: str,
) -> None:
    execute = ("tool_execute", {"tool_id": "fs:read_file", "args": {}})
    async with httpx2.AsyncClient(base_url=http_gateway, timeout=10) as http:
        plain = await _session(http, {})
        for body, form in [
            ({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, "application/json"),
            (_call("tool_hydrate", {"tool_id": "fs:read_file"}), "application/json"),
            (_call(*execute), "application/json"),  # nothing could reach this client
            (_call(*execute, token="t1"), "text/event-stream"),  # progress could
            (_call("tool_hydrate", {"tool_id": "x"}, token="t2"), "application/json"),
        ]:
            answer = await http.post("/mcp", json=body, headers=plain)
            assert answer.status_code == 200, answer.text
            assert answer.headers["content-type"].startswith(form), body
        asking = await _session(http, {"sampling": {}})  # an upstream could ask this client
        answer = await http.post("/mcp", json=_call(*execute), headers=asking)
        assert answer.headers["content-type"].startswith("text/event-stream")
        answer = await http.post(
            "/mcp", json=_call("tool_hydrate", {"tool_id": "x"}), headers=asking
        )
        assert answer.headers["content-type"].startswith("application/json")
