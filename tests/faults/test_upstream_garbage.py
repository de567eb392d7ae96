"""Issue 22 #15 and #16: answers a stdio upstream gets wrong, against real upstream processes.

#16: an answer with one invalid UTF-8 byte, or nested 100,000 deep, was dropped and the call
waited the whole call_timeout; now the call fails at once with UPSTREAM_ERROR saying why, and
the upstream goes on answering.
#15: a notification over the result cap, sent while one call was outstanding, was taken as
that call's answer (a too_large error) and the real answer discarded; a message without an id
is never a call's answer.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator

import pytest

from gatespec.upstream import UpstreamError, UpstreamPool
from gatespec_surface.errors import ErrorCode
from tests.faults.support import config, upstream

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

CALL_TIMEOUT = 40


@pytest.mark.parametrize("mode", ["utf8", "deep"])
async def test_an_unreadable_answer_fails_its_call_at_once(mode: str) -> None:
    cfg = config({"bad": upstream("--echo-as", mode)}, call_timeout=CALL_TIMEOUT)
    async with UpstreamPool.from_config(cfg) as pool:
        await pool.start()
        started = time.monotonic()
        with pytest.raises(UpstreamError) as caught:
            await pool.call("bad", "echo", {"text": "hello"})
        assert time.monotonic() - started < CALL_TIMEOUT / 4
        assert caught.value.code == ErrorCode.UPSTREAM_ERROR
        assert caught.value.kind == "protocol"
        assert "not a valid" in caught.value.reason
        # the connection stays usable: the next answer is read as usual
        with pytest.raises(UpstreamError):
            await pool.call("bad", "echo", {"text": "again"})
        assert [s.state for s in pool.statuses()] == ["connected"]


async def test_an_oversized_notification_is_not_the_answer_of_the_call_outstanding() -> None:
    cfg = config({"noisy": upstream("--echo-as", "noisy")}, call_timeout=CALL_TIMEOUT)
    async with UpstreamPool.from_config(cfg) as pool:
        await pool.start()
        result = await pool.call("noisy", "echo", {"text": "the real answer"})
        assert result["content"][0]["text"] == "the real answer"
        result = await pool.call("noisy", "echo", {"text": "and the next"})
        assert result["content"][0]["text"] == "and the next"


def test_the_two_ends_of_a_message_tell_an_answer_from_a_notification() -> None:
    from gatespec.upstream.oversized import Oversized

    is_answer = Oversized.is_answer
    assert not is_answer(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"d', b"x}}")
    assert not is_answer(b'{"params":{"data":"xx', b'xx"},"method":"n","jsonrpc":"2.0"}\n')
    assert not is_answer(b'event: message\ndata: {"method":"n","params":{"x', b'"}}\n\n')
    assert is_answer(b'{"jsonrpc":"2.0","id":2,"result":{"content":[{"text":"x', b'"}]}}')
    assert is_answer(b'{"result":{"content":"\\"method\\": 1', b'x"},"jsonrpc":"2.0","id":"7"}')
    assert is_answer(b"", b"")  # nothing to go by: as before, the one outstanding request


async def test_a_legacy_sse_answer_nested_too_deeply_fails_its_request_at_once() -> None:
    """#16 on a legacy SSE upstream: the SDK logged and dropped an event it could not parse;
    the request it answered now gets the typed error at once."""
    import mcp_types as types

    from gatespec.upstream.capped_sse import _CappedStream
    from gatespec.upstream.oversized import MALFORMED_CODE, Oversized

    pending = Oversized()
    pending.sent(types.JSONRPCRequest(jsonrpc="2.0", id=3, method="tools/call"))
    deep = b'{"jsonrpc":"2.0","id":3,"result":{"x":' + b"[" * 100_000 + b"]" * 100_000 + b"}}"
    body = [b"event: message\ndata: " + deep + b"\n\n", b"event: message\ndata: {}\n\n"]
    passed = [event async for event in _CappedStream(_Body(body), pending)]
    first = json.loads(passed[0].split(b"data: ", 1)[1])
    assert first["id"] == 3 and first["error"]["code"] == MALFORMED_CODE
    assert passed[1] == body[1]
    assert pending.outstanding == set()


class _Body:
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk
