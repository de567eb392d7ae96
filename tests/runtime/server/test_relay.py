"""AM-UPSTREAM-RELAY in the gateway and transparent profiles: what an upstream sends while
running a tool_execute (progress, log messages, sampling / elicitation / roots requests) reaches
the client request behind it; a request the client did not declare is refused with the reason;
a client's cancel and a call timeout cancel the upstream request.

The upstream is the conformance kit's fixture in rich mode (an mcp SDK server, which gatespec
reaches in the 2026-07-28 era: its sampling comes as input_required results) and, for the
handshake era, the real server-everything."""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import anyio
import mcp_types as types
import pytest
from mcp import Client

from gatespec.config import parse_config
from gatespec.runtime import ProxyRuntime
from gatespec.server import build_server
from gatespec.upstream import McpUpstream, UpstreamPool
from gatespec_conformance.fixtures.rich import SAMPLE_REPLY_PREFIX
from gatespec_conformance.fixtures.upstream import fixture_argv

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

ROOT = Path(__file__).resolve().parents[3]


class ClientSide:
    """What the downstream client received, and how it answers requests."""

    def __init__(self) -> None:
        self.progress: list[tuple[float, float | None, str | None]] = []
        self.logs: list[types.LoggingMessageNotificationParams] = []
        self.asked: list[str] = []

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append((progress, total, message))

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    async def sampling(self, ctx: Any, params: types.CreateMessageRequestParams) -> Any:
        self.asked.append("sampling")
        text = types.TextContent(type="text", text="forty-two")
        return types.CreateMessageResult(role="assistant", content=text, model="test-model")

    async def elicitation(self, ctx: Any, params: Any) -> Any:
        self.asked.append("elicitation")
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def roots(self, ctx: Any) -> Any:
        self.asked.append("roots")
        return types.ListRootsResult(roots=[types.Root(uri="file:///work", name="work")])

    def callbacks(self, declare: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {"logging_callback": self.on_log}
        if declare:
            out.update(
                sampling_callback=self.sampling,
                elicitation_callback=self.elicitation,
                list_roots_callback=self.roots,
            )
        return out


def _config(servers: dict[str, Any], profile: str = "gateway", **gateway: Any) -> Any:
    body = {"mcpServers": servers, "gateway": {"profile": profile, **gateway}}
    return parse_config(body, environ={})


def _fixture(call_log: Path, **extra: Any) -> dict[str, Any]:
    argv = fixture_argv(call_log, rich=True)
    return {"command": argv[0], "args": argv[1:], **extra}


@asynccontextmanager
async def _gateway(config: Any) -> AsyncIterator[tuple[ProxyRuntime, Any]]:
    runtime = ProxyRuntime.from_config(config)
    try:
        await runtime.start()
        yield runtime, build_server(runtime, fallback_session="test")
    finally:
        await runtime.aclose()


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"  # module-wide, so that `shared` can be a module fixture


class Shared(NamedTuple):
    runtime: ProxyRuntime
    server: Any
    log: Path  # the fixture's call log


@pytest.fixture(scope="module")
async def shared(
    anyio_backend: str, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Shared]:
    """One gateway (gateway profile) over the rich fixture for the tests that only call its
    tools and keep no state in it: each opens its own client (each call is relayed to the client
    request behind it), none sets a log level or a timeout."""
    log = tmp_path_factory.mktemp("relay") / "calls.jsonl"
    async with _gateway(_config({"fixture": _fixture(log)})) as (runtime, server):
        yield Shared(runtime, server, log)


def _tool_id(runtime: ProxyRuntime, server: str, name: str) -> str:
    return next(
        i.id for i in runtime.catalog.items() if (i.metadata["server"], i.name) == (server, name)
    )


def _calls(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


async def _execute(client: Client, tool_id: str, args: dict[str, Any], **kw: Any) -> Any:
    return await client.call_tool("tool_execute", {"tool_id": tool_id, "args": args}, **kw)


@pytest.mark.parametrize("profile", ["gateway", "transparent"])
async def test_progress_and_logs_reach_the_request_that_caused_them(
    anyio_backend: str, tmp_path: Path, profile: str
) -> None:
    config = _config({"fixture": _fixture(tmp_path / "calls.jsonl")}, profile)
    side = ClientSide()
    async with _gateway(config) as (runtime, server):
        async with Client(server, mode="legacy", **side.callbacks()) as client:
            result = await _execute(
                client,
                _tool_id(runtime, "fixture", "progress"),
                {"steps": 3},
                progress_callback=side.on_progress,
            )
            assert not result.is_error, result
            # Under the client's own token (the SDK routes by it), with the upstream's values.
            assert side.progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]

            await _execute(
                client, _tool_id(runtime, "fixture", "log"), {"level": "warning", "text": "careful"}
            )
            assert [(m.level, m.data, m.logger) for m in side.logs] == [
                ("warning", "careful", "fixture/fixture")
            ]
            # logging/setLevel filters what this client gets.
            with warnings.catch_warnings():  # deprecated in 2026-07-28, not in this era
                warnings.simplefilter("ignore")
                await client.session.set_logging_level("error")
            await _execute(
                client, _tool_id(runtime, "fixture", "log"), {"level": "info", "text": "quiet"}
            )
            assert len(side.logs) == 1


async def test_a_log_level_reaches_handshake_era_upstreams(
    anyio_backend: str, tmp_path: Path
) -> None:
    log = tmp_path / "calls.jsonl"
    config = _config({"fixture": _fixture(log)})
    legacy = partial(McpUpstream, mode="legacy")  # the fixture in the handshake era
    async with UpstreamPool.from_config(config, upstream_factory=legacy) as pool:
        await pool.start()
        await pool.set_log_level("error")
    assert {"name": "logging/setLevel", "arguments": {"level": "error"}} in [
        {k: c[k] for k in ("name", "arguments")} for c in _calls(log)
    ]


async def test_no_progress_without_a_token(shared: Shared) -> None:
    runtime, server, _ = shared
    side = ClientSide()
    async with Client(server, mode="legacy", message_handler=_recorder(seen := [])) as client:
        await _execute(client, _tool_id(runtime, "fixture", "progress"), {"steps": 2})
    assert not [m for m in seen if isinstance(m, types.ProgressNotification)]
    assert side.progress == []


def _recorder(seen: list[Any]) -> Any:
    async def handler(message: Any) -> None:
        seen.append(message)

    return handler


@pytest.mark.parametrize(
    ("tool", "asked", "answer"),
    [
        ("sample", "sampling", f"{SAMPLE_REPLY_PREFIX}forty-two"),
        ("elicit", "elicitation", "the client answered accept: {'name': 'Ada'}"),
        ("roots", "roots", "roots: file:///work"),
    ],
)
async def test_requests_of_the_client_are_relayed_when_it_declared_them(
    shared: Shared, tool: str, asked: str, answer: str
) -> None:
    runtime, server, _ = shared
    side = ClientSide()
    async with Client(server, mode="legacy", **side.callbacks()) as client:
        result = await _execute(client, _tool_id(runtime, "fixture", tool), {})
    assert side.asked == [asked]
    envelope = result.structured_content
    assert envelope is not None and envelope["status"] == "ok", result
    assert envelope["summary"] == answer


@pytest.mark.parametrize(("tool", "capability"), [("sample", "sampling"), ("roots", "roots")])
async def test_requests_of_a_client_that_did_not_declare_them_are_refused(
    shared: Shared, tool: str, capability: str
) -> None:
    runtime, server, _ = shared
    async with Client(server, mode="legacy") as client:
        result = await _execute(client, _tool_id(runtime, "fixture", tool), {})
    # The fixture reaches gatespec in 2026-07-28: its request is an input_required result, and
    # the refusal ends the call (an upstream error naming the reason).
    assert result.is_error
    assert f"did not declare the {capability} capability" in result.content[0].text


async def test_a_2026_client_is_asked_through_input_required(
    shared: Shared,
) -> None:
    """A 2026-07-28 client cannot be sent a request: it gets the upstream's as an
    input_required result and retries with its answer (server.mrtr; tests/runtime/server/test_mrtr.py
    has the rest)."""
    runtime, server, _ = shared
    side = ClientSide()
    async with Client(server, mode="2026-07-28", **side.callbacks()) as client:
        result = await _execute(client, _tool_id(runtime, "fixture", "sample"), {})
    assert side.asked == ["sampling"] and not result.is_error, result
    assert result.structured_content["summary"] == f"{SAMPLE_REPLY_PREFIX}forty-two"


async def test_a_client_cancel_cancels_the_upstream_request(shared: Shared) -> None:
    runtime, server, log = shared
    async with Client(server, mode="legacy") as client:
        async with anyio.create_task_group() as calls:
            slow = _tool_id(runtime, "fixture", "slow")
            calls.start_soon(partial(_execute, client, slow, {"seconds": 60}))
            # the upstream logs a call as it starts it: cancel once it is in flight there
            await _wait_for(log, {"name": "slow", "arguments": {"seconds": 60}})
            calls.cancel_scope.cancel()
        await _wait_for(log, {"name": "slow", "arguments": {"cancelled": True}})


async def test_a_call_timeout_cancels_the_upstream_request(
    anyio_backend: str, tmp_path: Path
) -> None:
    log = tmp_path / "calls.jsonl"
    config = _config({"fixture": _fixture(log, timeout=1)}, call_timeout=30)
    async with _gateway(config) as (runtime, server):
        async with Client(server, mode="legacy") as client:
            result = await _execute(client, _tool_id(runtime, "fixture", "slow"), {"seconds": 60})
            assert result.is_error and result.structured_content["error"] == "TIMEOUT"
            await _wait_for(log, {"name": "slow", "arguments": {"cancelled": True}})


async def _wait_for(log: Path, entry: dict[str, Any], seconds: float = 10) -> None:
    with anyio.fail_after(seconds):
        while not any({k: c[k] for k in entry} == entry for c in _calls(log)):
            await anyio.sleep(0.05)


@pytest.mark.real_upstream
async def test_a_handshake_era_upstream_relays_progress_and_sampling(
    anyio_backend: str, servers: Any
) -> None:
    """server-everything speaks 2025-11-25: sampling arrives as a request on the upstream
    connection while the call is in flight."""
    everything = servers.binary(servers.node_bin / "mcp-server-everything")
    config = _config({"everything": {"command": everything, "args": ["stdio"]}})
    side = ClientSide()
    async with _gateway(config) as (runtime, server):
        async with Client(server, mode="legacy", **side.callbacks()) as client:
            long_op = _tool_id(runtime, "everything", "trigger-long-running-operation")
            await _execute(
                client, long_op, {"duration": 1, "steps": 2}, progress_callback=side.on_progress
            )
            assert [p for p, _, _ in side.progress] == [1, 2]
            sampling = _tool_id(runtime, "everything", "trigger-sampling-request")
            result = await _execute(client, sampling, {"prompt": "the answer", "maxTokens": 5})
    assert "sampling" in side.asked  # (it may ask for roots too while a call is in flight)
    assert "forty-two" in result.structured_content["summary"] + json.dumps(
        result.structured_content
    )


async def find_in(client: Client, query: str, name: str) -> str:
    """The fixture tool `name`'s id, found by tool_browse."""
    found = await client.call_tool("tool_browse", {"query": query})
    ids = [c["id"] for c in found.structured_content["cards"]]
    return next(i for i in ids if i.startswith(f"fixture:{name}#"))


async def test_progress_and_sampling_ride_the_request_stream_over_http(
    anyio_backend: str, tmp_path: Path, servers: Any
) -> None:
    """Over Streamable HTTP a call that may relay is answered with an SSE stream, which
    carries what the upstream sends during the call (a JSON body could carry only the
    response)."""
    config = tmp_path / "gateway.json"
    body = {"mcpServers": {"fixture": _fixture(tmp_path / "calls.jsonl")}, "gateway": {}}
    config.write_text(json.dumps(body))
    port = servers.free_port()
    argv = [sys.executable, "-m", "gatespec.cli", "serve", "--config", str(config)]
    servers.spawn([*argv, "--transport", "http", "--port", str(port)], port)
    side = ClientSide()
    url = f"http://127.0.0.1:{port}/mcp"
    async with Client(url, mode="legacy", **side.callbacks()) as client:

        async def find(query: str, name: str) -> str:
            return await find_in(client, query, name)

        progress = await find("report progress in steps", "progress")
        await _execute(client, progress, {"steps": 2}, progress_callback=side.on_progress)
        sample = await find("ask the client to sample a reply", "sample")
        result = await _execute(client, sample, {"prompt": "q"})
    assert [p for p, _, _ in side.progress] == [1, 2]
    assert result.structured_content["summary"] == f"{SAMPLE_REPLY_PREFIX}forty-two"
    # A client that declared nothing is answered with JSON bodies (AM-HTTP-ANSWER-FORM): an
    # upstream's log message during its call reaches it on its session's standalone stream.
    quiet = ClientSide()
    async with Client(url, mode="legacy", **quiet.callbacks(declare=False)) as client:
        log = await find_in(client, "write a log message", "log")
        await _execute(client, log, {"level": "warning", "text": "careful"})
        with anyio.fail_after(5):
            while not quiet.logs:
                await anyio.sleep(0.05)
    assert [(m.level, m.data) for m in quiet.logs] == [("warning", "careful")]
