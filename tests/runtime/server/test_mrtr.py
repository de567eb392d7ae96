"""Client input for 2026-07-28 clients (server.mrtr): an upstream that asks for elicitation and
sampling mid-call reaches a client of protocol 2026-07-28 as input_required results, and the
client's retries carry its answers back, in every profile, over stdio and Streamable HTTP.

The upstreams are real processes: tests/fixtures/interview_server.py (an mcp SDK server that
asks twice in one call, reached in the 2026-07-28 era) and server-everything (handshake era).
The client is the official SDK's, in mode "2026-07-28", answering through its callbacks.
Expected answers come from the fixtures' own words (interview_server's docstring) and from the
MRTR rules of the module under test: a handle names one suspended call of one caller and one
request, is replaced every round, and lives SUSPEND_SECONDS.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from gatespec.config import parse_config
from gatespec.runtime import ProxyRuntime
from gatespec.server import build_server, mrtr
from gatespec.server.relay import RequestRelay
from tests.runtime.server.test_relay import ClientSide, _fixture

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

INTERVIEW = Path(__file__).resolve().parents[2] / "fixtures" / "interview_server.py"
# What interview() answers when the client says "Ada" and samples "forty-two" (ClientSide).
INTERVIEWED = "interviewed Ada: forty-two"
# How each profile calls the interview server's one tool.
CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "gateway": ("tool_execute", {"tool_id": "interview:interview", "args": {}}),
    "transparent": ("tool_execute", {"tool_id": "interview:interview", "args": {}}),
    "search": ("call", {"operation": "/interview/interview", "input": {}}),
    "aggregate": ("interview__interview", {}),
}


def _servers(*names: str) -> dict[str, Any]:
    entry = {"command": sys.executable, "args": [str(INTERVIEW)]}
    return {name: dict(entry) for name in names or ("interview",)}


def _text(result: types.CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, types.TextContent))


def _serve_http(servers: Any, config: Path) -> str:
    """`gatespec serve --transport http` on `config` (stopped after the test): its /mcp URL."""
    port = servers.free_port()
    argv = [sys.executable, "-m", "gatespec.cli", "serve", "--config", str(config)]
    servers.spawn([*argv, "--transport", "http", "--port", str(port)], port)
    return f"http://127.0.0.1:{port}/mcp"


def _write_config(folder: Path, profile: str, **gateway: Any) -> Path:
    path = folder / f"gatespec-{profile}.json"
    body = {"mcpServers": _servers(), "gateway": {"profile": profile, **gateway}}
    path.write_text(json.dumps(body))
    return path


@pytest.mark.parametrize(
    ("profile", "transport"),
    [
        ("gateway", "stdio"),
        ("aggregate", "http"),
        pytest.param("search", "stdio", marks=pytest.mark.slow),
        pytest.param("transparent", "http", marks=pytest.mark.slow),
    ],
)
async def test_an_upstream_that_asks_twice_is_answered_by_a_2026_client(
    anyio_backend: str, tmp_path: Path, servers: Any, profile: str, transport: str
) -> None:
    config = _write_config(tmp_path, profile)
    if transport == "stdio":
        argv = ["-m", "gatespec.cli", "serve", "--config", str(config)]
        # The SDK passes on only a few variables: this checkout's PYTHONPATH must go too.
        target: Any = StdioServerParameters(command=sys.executable, args=argv, env=dict(os.environ))
    else:
        target = _serve_http(servers, config)
    side = ClientSide()
    name, args = CALLS[profile]
    async with Client(target, mode="2026-07-28", **side.callbacks()) as client:
        result = await client.call_tool(name, args)
    assert side.asked == ["elicitation", "sampling"]
    assert not result.is_error, result
    assert INTERVIEWED in _text(result) + json.dumps(result.structured_content)


@pytest.mark.slow
@pytest.mark.real_upstream
async def test_a_handshake_era_upstream_samples_and_elicits_through_the_aggregate_over_http(
    anyio_backend: str, tmp_path: Path, servers: Any
) -> None:
    """server-everything (2025-11-25) sends its requests on the upstream connection while the
    call is in flight; the 2026-07-28 client gets them as input_required results."""
    everything = servers.binary(servers.node_bin / "mcp-server-everything")
    config = tmp_path / "gatespec.json"
    body = {"mcpServers": {"everything": {"command": everything, "args": ["stdio"]}},
            "gateway": {"profile": "aggregate"}}  # fmt: skip
    config.write_text(json.dumps(body))
    side = ClientSide()
    async with Client(
        _serve_http(servers, config), mode="2026-07-28", **side.callbacks()
    ) as client:
        sampled = await client.call_tool(
            "everything__trigger-sampling-request", {"prompt": "the answer", "maxTokens": 5}
        )
        elicited = await client.call_tool("everything__trigger-elicitation-request", {})
    assert "sampling" in side.asked and "elicitation" in side.asked
    assert not sampled.is_error and "forty-two" in _text(sampled)
    assert not elicited.is_error and "Ada" in _text(elicited)


@asynccontextmanager
async def _in_process(profile: str = "gateway", *names: str) -> AsyncIterator[tuple[Any, Any]]:
    """gatespec in this process (so the test reaches its middleware), real upstreams."""
    body = {"mcpServers": _servers(*names), "gateway": {"profile": profile}}
    config = parse_config(body, environ={})
    runtime = ProxyRuntime.from_config(config)
    try:
        await runtime.start()
        server = build_server(runtime, fallback_session="test")
        relay = next(m for m in server.middleware if isinstance(m, mrtr.InputRequiredRelay))
        yield server, relay
    finally:
        await runtime.aclose()


async def _first(client: Client, **kw: Any) -> Any:
    name, args = CALLS["gateway"]
    return await client.session.call_tool(name, args, allow_input_required=True, **kw)


ADA = {"who": types.ElicitResult(action="accept", content={"name": "Ada"})}


def _keys(result: Any) -> list[str]:
    assert isinstance(result, types.InputRequiredResult), result
    return [request.method for request in (result.input_requests or {}).values()]


def _answers(result: Any, answers: dict[str, Any]) -> dict[str, Any]:
    """The answers to the requests of `result`, by its own keys (gatespec names them)."""
    out = {}
    for key, request in (result.input_requests or {}).items():
        out[key] = answers[request.method]
    return out


def _error(result: Any) -> dict[str, Any]:
    assert isinstance(result, types.CallToolResult) and result.is_error, result
    return json.loads(_text(result))


async def test_a_handle_is_the_callers_own_for_one_round_and_one_request(
    anyio_backend: str,
) -> None:
    sample = types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text="hi Ada"), model="m"
    )
    replies = {"elicitation/create": ADA["who"], "sampling/createMessage": sample}
    async with _in_process() as (server, relay):
        async with Client(server, mode="2026-07-28", **ClientSide().callbacks()) as client:
            first = await _first(client)
            assert _keys(first) == ["elicitation/create"]
            name, args = CALLS["gateway"]
            # A guessed handle, or the right one on other arguments: the same answer.
            for state, other in (
                ("v1.guess", args),
                (first.request_state, {**args, "args": {"x": 1}}),
            ):
                wrong = await client.session.call_tool(
                    name, other, request_state=state, input_responses=_answers(first, replies),
                    allow_input_required=True,
                )  # fmt: skip
                error = _error(wrong)
                assert error["error"] == "ARGS_INVALID"
                assert "names no call suspended" in error["message"]
            second = await client.session.call_tool(
                name, args, request_state=first.request_state,
                input_responses=_answers(first, replies), allow_input_required=True,
            )  # fmt: skip
            assert _keys(second) == ["sampling/createMessage"]
            assert second.request_state != first.request_state
            stale = await client.session.call_tool(
                name, args, request_state=first.request_state,
                input_responses=_answers(first, replies), allow_input_required=True,
            )  # fmt: skip
            assert "already answered" in _error(stale)["message"]
            done = await client.session.call_tool(
                name, args, request_state=second.request_state,
                input_responses=_answers(second, replies), allow_input_required=True,
            )  # fmt: skip
    assert isinstance(done, types.CallToolResult) and not done.is_error
    assert "interviewed Ada: hi Ada" in json.dumps(done.structured_content)
    assert relay._suspended == {}


async def test_a_call_left_waiting_expires_and_frees_its_upstream_request(
    anyio_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mrtr, "SUSPEND_SECONDS", 0.5)
    async with _in_process() as (server, relay):
        async with Client(server, mode="2026-07-28", **ClientSide().callbacks()) as client:
            first = await _first(client)
            assert _keys(first) == ["elicitation/create"]
            with anyio.fail_after(10):  # the upstream got an error, and its call ended
                while relay._suspended or relay._running:
                    await anyio.sleep(0.05)
            name, args = CALLS["gateway"]
            late = await client.session.call_tool(
                name, args, request_state=first.request_state,
                input_responses=_answers(first, {"elicitation/create": ADA["who"]}),
                allow_input_required=True,
            )  # fmt: skip
    error = _error(late)
    assert error["error"] == "TIMEOUT" and "did not retry within 0.5 s" in error["message"]


async def test_past_the_cap_the_upstreams_request_is_refused_with_the_reason(
    anyio_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two upstreams (one upstream connection carries the questions of one waiting call at a
    time: see test_a_second_call_that_asks_on_a_busy_connection_is_refused)."""
    monkeypatch.setattr(mrtr, "MAX_SUSPENDED_PER_CALLER", 1)
    async with _in_process("gateway", "one", "two") as (server, relay):
        async with Client(server, mode="2026-07-28", **ClientSide().callbacks()) as client:
            first = await client.session.call_tool(
                "tool_execute", {"tool_id": "one:interview", "args": {}}, allow_input_required=True
            )
            assert _keys(first) == ["elicitation/create"]
            second = await client.call_tool(
                "tool_execute", {"tool_id": "two:interview", "args": {}}
            )
    assert second.is_error
    assert "1 calls waiting for its input already" in _text(second)
    assert len(relay._suspended) == 1


async def test_a_second_call_that_asks_on_a_busy_connection_is_refused(
    anyio_backend: str,
) -> None:
    """While a call waits for its client, the upstream connection it runs on has it in flight:
    a question that arrives there could be either call's, and is refused, never guessed."""
    async with _in_process() as (server, relay):
        async with Client(server, mode="2026-07-28", **ClientSide().callbacks()) as client:
            first = await _first(client)
            assert _keys(first) == ["elicitation/create"]
            second = await _first(client)
    assert second.is_error
    assert "requests of 2 client sessions are in flight" in _text(second)
    assert len(relay._suspended) == 1


async def test_a_2026_client_that_declared_nothing_is_told_what_is_missing(
    anyio_backend: str,
) -> None:
    async with _in_process() as (server, _):
        async with Client(server, mode="2026-07-28") as client:
            result = await client.call_tool(*CALLS["gateway"])
    assert result.is_error
    assert "did not declare the elicitation capability" in _text(result)


async def test_log_levels_under_2026_are_per_request_and_set_level_names_the_working_mode(
    anyio_backend: str, tmp_path: Path
) -> None:
    body = {"mcpServers": {"fixture": _fixture(tmp_path / "calls.jsonl")}}
    runtime = ProxyRuntime.from_config(parse_config(body, environ={}))
    side = ClientSide()
    try:
        await runtime.start()
        server = build_server(runtime, fallback_session="test")
        async with Client(
            server, mode="2026-07-28", log_level="warning", logging_callback=side.on_log
        ) as client:
            with pytest.raises(MCPError) as refused:
                await client.session.send_request(
                    types.SetLevelRequest(params=types.SetLevelRequestParams(level="error")),
                    types.EmptyResult,
                )
            for level in ("info", "error"):
                await client.call_tool(
                    "tool_execute",
                    {"tool_id": "fixture:log", "args": {"level": level, "text": level}},
                )
    finally:
        await runtime.aclose()
    assert refused.value.error.code == types.METHOD_NOT_FOUND
    assert "io.modelcontextprotocol/logLevel" in refused.value.error.message
    assert "mode='legacy'" in refused.value.error.message
    assert [(m.level, m.data) for m in side.logs] == [("error", "error")]


def _digest(token: str) -> str:
    return "sha256:" + hashlib.sha256(token.encode()).hexdigest()


@pytest.mark.slow
async def test_another_identity_cannot_resume_a_call_over_http(
    anyio_backend: str, tmp_path: Path, servers: Any
) -> None:
    tokens = {"alice": "alice-secret-0001", "bob": "bob-secret-0002"}
    access = {"identities": {who: {"tokens": [_digest(t)]} for who, t in tokens.items()}}
    url = _serve_http(servers, _write_config(tmp_path, "aggregate", access=access))

    @asynccontextmanager
    async def as_(who: str) -> AsyncIterator[Client]:
        headers = {"Authorization": f"Bearer {tokens[who]}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            transport = streamable_http_client(url, http_client=http)
            async with Client(transport, mode="2026-07-28", **ClientSide().callbacks()) as c:
                yield c

    name = CALLS["aggregate"][0]
    async with as_("alice") as alice, as_("bob") as bob:
        first = await alice.session.call_tool(name, {}, allow_input_required=True)
        assert _keys(first) == ["elicitation/create"]
        answers = _answers(first, {"elicitation/create": ADA["who"]})
        stolen = await bob.session.call_tool(
            name, {}, request_state=first.request_state, input_responses=answers,
            allow_input_required=True,
        )  # fmt: skip
        assert "names no call suspended" in _error(stolen)["message"]
        own = await alice.session.call_tool(
            name, {}, request_state=first.request_state, input_responses=answers,
            allow_input_required=True,
        )  # fmt: skip
    assert _keys(own) == ["sampling/createMessage"]


def test_where_input_required_is_not_offered_the_refusal_names_the_working_mode() -> None:
    """A 2026-07-28 request outside a call that can carry input_required (a list, a completion
    in the aggregate profile): the upstream's request is refused, naming the client mode that
    works. A unit check: no upstream asks there on cue."""
    declared = types.ClientCapabilities(sampling=types.SamplingCapability())
    session = SimpleNamespace(client_capabilities=declared, can_send_request=False)
    ctx = SimpleNamespace(
        protocol_version="2026-07-28", meta=None, params={}, request_id=1, session=session
    )
    why = RequestRelay(ctx, "local").refusal("sampling/createMessage")  # type: ignore[arg-type]
    assert why is not None and mrtr.WORKING_MODE in why
    assert "Client(mode='legacy')" in mrtr.WORKING_MODE
