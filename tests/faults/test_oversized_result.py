"""AM-RESULT-SIZE-CAP: an upstream answer over MAX_UPSTREAM_RESULT_BYTES is skipped unparsed
and answers its request with a typed error naming the limit; the upstream stays usable and
other upstreams are served while the oversized answer is still arriving. Stdio upstreams,
Streamable HTTP ones with JSON and SSE-framed answers, and legacy SSE ones (where the limit
is the SDK's per-event one, capped_sse.EVENT_LIMIT)."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest

from gatespec.runtime import ProxyRuntime
from gatespec.upstream import UpstreamError, UpstreamPool
from gatespec.upstream.capped_sse import EVENT_LIMIT, Skipped, _CappedStream, split_events
from gatespec.upstream.oversized import Oversized
from gatespec_surface.budgets import MAX_UPSTREAM_RESULT_BYTES
from gatespec_surface.errors import ErrorCode, GatewayError
from tests.faults.support import config, upstream

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


async def test_oversized_answer_is_capped_while_another_upstream_keeps_answering(
    tmp_path: Path,
) -> None:
    hold, started = tmp_path / "hold", tmp_path / "started"
    cfg = config({"big": upstream(), "fast": upstream()}, call_timeout=60)
    events: list[str] = []
    async with UpstreamPool.from_config(cfg) as pool:
        await pool.start()
        assert [s.state for s in pool.statuses()] == ["connected", "connected"]

        async def oversized() -> None:
            args = {
                "bytes": MAX_UPSTREAM_RESULT_BYTES + 1024,
                "hold_file": str(hold),
                "started_file": str(started),
            }
            with pytest.raises(UpstreamError) as caught:
                await pool.call("big", "big", args)
            events.append("big:" + caught.value.kind)
            assert f"{MAX_UPSTREAM_RESULT_BYTES:,}" in caught.value.reason

        async with anyio.create_task_group() as tg:
            tg.start_soon(oversized)
            while not started.exists():  # half of the answer (8 MiB) is on its way
                await anyio.sleep(0.01)
            for i in range(20):
                result = await pool.call("fast", "echo", {"text": f"t{i}"})
                events.append(result["content"][0]["text"])
            hold.write_text("go")  # only now does the rest of the oversized answer come
        # Every call to the other upstream was answered before the oversized one ended.
        assert events == [f"t{i}" for i in range(20)] + ["big:too_large"]
        # The oversized upstream is still connected and answers its next call.
        assert pool.status("big").state == "connected"
        again = await pool.call("big", "echo", {"text": "still here"})
        assert again["content"][0]["text"] == "still here"


async def test_the_agent_sees_a_typed_error_naming_the_limit(tmp_path: Path) -> None:
    runtime = ProxyRuntime.from_config(config({"big": upstream()}, call_timeout=60))
    try:
        await runtime.start()
        tool_id = next(i.id for i in runtime.catalog.items() if i.name == "big")
        hold = tmp_path / "hold"
        hold.write_text("go")
        with pytest.raises(GatewayError) as caught:
            await runtime.execute(
                "s", tool_id, {"bytes": MAX_UPSTREAM_RESULT_BYTES + 1, "hold_file": str(hold)}
            )
        assert caught.value.code is ErrorCode.UPSTREAM_ERROR
        assert caught.value.details == {"server": "big", "kind": "too_large"}
        assert "MAX_UPSTREAM_RESULT_BYTES" in caught.value.message
    finally:
        await runtime.aclose()


HTTP_UPSTREAM = str(Path(__file__).with_name("http_upstream.py"))


@asynccontextmanager
async def http_upstream_pool(flag: str | None) -> AsyncIterator[UpstreamPool]:
    """A pool connected to http_upstream.py started with `flag`, as upstream "web"."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    argv = [sys.executable, HTTP_UPSTREAM, str(port), *([flag] if flag else [])]
    server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if flag == "--legacy-sse":
            web = {"type": "sse", "url": f"http://127.0.0.1:{port}/sse"}
        else:
            web = {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}
        async with UpstreamPool.from_config(config({"web": web})) as pool:
            for _ in range(100):  # until the server listens
                await pool.start()
                if pool.status("web").state == "connected":
                    break
                await anyio.sleep(0.1)
            yield pool
    finally:
        server.terminate()
        server.wait(10)


@pytest.mark.parametrize("framing", ["json", "sse"])
async def test_an_http_upstreams_oversized_answer_is_capped_too(framing: str) -> None:
    async with http_upstream_pool("--json" if framing == "json" else None) as pool:
        with pytest.raises(UpstreamError) as caught:
            await pool.call("web", "big", {"bytes": MAX_UPSTREAM_RESULT_BYTES + 1})
        assert caught.value.kind == "too_large"
        assert f"{MAX_UPSTREAM_RESULT_BYTES:,}" in caught.value.reason
        assert pool.status("web").state == "connected"
        # an answer under the cap but over the SDK's 1 MiB SSE event default gets through
        fine = await pool.call("web", "big", {"bytes": 2 * 1024 * 1024})
        assert len(fine["content"][0]["text"]) == 2 * 1024 * 1024


async def test_a_legacy_sse_upstreams_oversized_event_is_capped_and_the_stream_goes_on() -> None:
    # Without the cap the SDK fails the whole stream at its event limit: every call in flight
    # on the upstream would be lost with it.
    async with http_upstream_pool("--legacy-sse") as pool:
        results: dict[str, Any] = {}

        async def call(key: str, args: dict[str, Any]) -> None:
            try:
                results[key] = await pool.call("web", args.pop("tool"), args)
            except UpstreamError as exc:
                results[key] = exc

        async with anyio.create_task_group() as tg:  # both in flight on one stream
            tg.start_soon(call, "big", {"tool": "big", "bytes": EVENT_LIMIT + 1})
            tg.start_soon(call, "echo", {"tool": "echo", "text": "still here"})
        big = results["big"]
        assert isinstance(big, UpstreamError) and big.kind == "too_large"
        assert f"{EVENT_LIMIT:,}" in big.reason
        assert results["echo"]["content"][0]["text"] == "still here"
        assert pool.status("web").state == "connected"
        fine = await pool.call("web", "big", {"bytes": EVENT_LIMIT // 2})
        assert len(fine["content"][0]["text"]) == EVENT_LIMIT // 2


async def _chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


async def test_sse_events_are_split_at_blank_lines_across_chunks_and_long_ones_skipped() -> None:
    stream = _chunks(
        b"event: endpoint\r\ndata: /m\r", b"\n\r\n",  # CRLF, split inside a line end
        b'data: {"id":7,"result":"' + b"y" * 50, b"y" * 50 + b'"}\n', b"\n",
        b"data: short\n\ndata: unterminated",
    )  # fmt: skip
    out = [e async for e in split_events(stream, 64)]
    assert out[0] == b"event: endpoint\r\ndata: /m\r\n\r\n"
    skipped = out[1]  # its size counts every byte up to the blank line that ends it
    assert isinstance(skipped, Skipped)
    assert skipped.size == len(b'data: {"id":7,"result":"') + 100 + len(b'"}\n\n')
    assert skipped.head.startswith(b'data: {"id":7') and skipped.tail.endswith(b'"}\n\n')
    assert out[2:] == [b"data: short\n\n", b"data: unterminated"]


def test_an_oversized_line_is_matched_to_its_request_by_id_or_not_at_all() -> None:
    pending = Oversized()
    for request_id in (1, 2, "seven"):
        pending.sent(types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method="tools/call"))
    sdk_style = b'{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"xx'
    node_style = b'xx"}],"isError":false},"jsonrpc":"2.0","id":"seven"}\n'
    nested = b'{"result":{"content":[{"id":1,"id":2'  # two outstanding ids: no guess
    assert pending.request_of(sdk_style, b"xx") == 2
    assert pending.request_of(b"xx", node_style) == "seven"
    assert pending.request_of(nested, b"xx") is None
    assert pending.request_of(b'{"id":99', b"") is None  # answers nothing outstanding
    pending.answered(types.JSONRPCResponse(jsonrpc="2.0", id=1, result={}))
    pending.answered(types.JSONRPCResponse(jsonrpc="2.0", id=2, result={}))
    assert pending.request_of(b"", b"") == "seven"  # the only one left


async def test_an_oversized_sse_event_that_answers_no_named_request_ends_the_stream() -> None:
    # As on stdio: with two requests outstanding and no id of theirs at either end of the
    # event, the stream is ended rather than one of them guessed (the upstream reconnects).
    pending = Oversized()
    for request_id in (1, 2):
        pending.sent(types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method="tools/call"))
    body = b"data: " + b"z" * (EVENT_LIMIT + 1) + b"\n\n"
    stream = _CappedStream(_Body([b"data: small\n\n", body, b"data: never\n\n"]), pending)
    passed = []
    with pytest.raises(httpx2.StreamError, match="answers no request that can be named"):
        async for event in stream:
            passed.append(event)
    assert passed == [b"data: small\n\n"]
    assert pending.outstanding == {1, 2}


class _Body:
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk
