"""Plain-dict checks on upstream wire objects: which tools are usable, how results are shaped."""

from __future__ import annotations

from typing import Any

import pytest

from gatespec.upstream import UpstreamError, call_result, strip_envelope_meta, tool_problem

OBJ = {"type": "object"}


@pytest.mark.parametrize(
    ("tool", "problem"),
    [
        ({"name": "ok", "inputSchema": OBJ}, None),
        ({"name": "ok", "inputSchema": OBJ, "outputSchema": OBJ, "title": "T"}, None),
        ("just text", "tool entry is str, not an object"),
        ({"inputSchema": OBJ}, "tool name is None, not a non-empty string"),
        ({"name": "", "inputSchema": OBJ}, "tool name is '', not a non-empty string"),
        ({"name": "t"}, "tool 't' has no inputSchema"),
        ({"name": "t", "inputSchema": None}, "tool 't' inputSchema is NoneType, not an object"),
        ({"name": "t", "inputSchema": {"type": "array"}}, "inputSchema type is 'array'"),
        ({"name": "t", "inputSchema": {}}, "inputSchema type is None"),
        ({"name": "t", "inputSchema": OBJ, "outputSchema": []}, "outputSchema is list"),
        ({"name": "t", "inputSchema": OBJ, "description": 3}, "description is int"),
        (
            {
                "name": "t",
                "inputSchema": {
                    "type": "object",
                    "properties": {"region": {"type": "string", "x-mcp-header": "bad header"}},
                },
            },
            "x-mcp-header",
        ),
    ],
)
def test_tool_problem(tool: Any, problem: str | None) -> None:
    found = tool_problem(tool)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found


def test_call_result_shaping() -> None:
    raw = {
        "content": [{"type": "text", "text": "hi"}],
        "structuredContent": {"a": 1},
        "isError": False,
        "resultType": "complete",
        "ttlMs": 0,
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "x"}, "vendor/trace": "abc"},
    }
    assert call_result(raw) == {
        "content": [{"type": "text", "text": "hi"}],
        "structuredContent": {"a": 1},
        "isError": False,
        "_meta": {"vendor/trace": "abc"},
    }
    assert call_result({}) == {"content": [], "isError": False}
    assert call_result({"content": "text"}) == "tools/call result content is str, not an array"
    assert isinstance(call_result({"content": ["x"]}), str)
    assert isinstance(call_result({"content": [], "isError": "no"}), str)


def test_strip_envelope_meta() -> None:
    assert strip_envelope_meta({"io.modelcontextprotocol/x": 1}) is None
    assert strip_envelope_meta({"k": 1}) == {"k": 1}
    assert strip_envelope_meta("nope") is None


def test_upstream_error() -> None:
    error = UpstreamError("fs", "timeout", "no answer within 3s")
    assert str(error) == "upstream 'fs': no answer within 3s"
    assert (error.key, error.kind, error.reason) == ("fs", "timeout", "no answer within 3s")
    with pytest.raises(ValueError, match="unknown UpstreamError kind"):
        UpstreamError("fs", "weird", "x")  # type: ignore[arg-type]
    import pickle

    again = pickle.loads(pickle.dumps(error))
    assert (again.key, again.kind, again.reason) == (error.key, error.kind, error.reason)
