"""Images reach the model (AM-INLINE-MEDIA) and structured results are shown once
(AM-RESULT-TEXT-ONCE), over stdio: `gatespec serve` in front of the real server-everything,
driven by the official SDK client in the gateway, transparent and search profiles.

The image is server-everything's own MCP_TINY_IMAGE, read from its source: the test's input,
not something recorded from gatespec."""

from __future__ import annotations

import base64
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import CallToolResult, ImageContent, TextContent

from gatespec_surface.budgets import STRUCTURED_CONTENT_LABEL

pytestmark = [pytest.mark.anyio, pytest.mark.real_upstream]

ROOT = Path(__file__).resolve().parents[2]
_TOOLS = ROOT / "node_modules/@modelcontextprotocol/server-everything/dist/tools"


def tiny_image() -> bytes:
    source = (_TOOLS / "get-tiny-image.js").read_text()
    match = re.search(r'MCP_TINY_IMAGE = "([A-Za-z0-9+/=]+)"', source)
    assert match, "server-everything no longer defines MCP_TINY_IMAGE"
    return base64.b64decode(match.group(1))


def _params(tmp_path: Path, servers: Any, profile: str, **gateway: Any) -> StdioServerParameters:
    everything = servers.binary(servers.node_bin / "mcp-server-everything")
    config = tmp_path / "gateway.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {"everything": {"command": everything, "args": ["stdio"]}},
                "gateway": {"profile": profile, **gateway},
            }
        )
    )
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT / 'generated'}"}
    return StdioServerParameters(
        command=sys.executable, args=["-m", "gatespec", "serve", "--config", str(config)], env=env
    )


def images(result: CallToolResult) -> list[ImageContent]:
    return [block for block in result.content if isinstance(block, ImageContent)]


def texts(result: CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, TextContent)]


async def _execute(client: Client, name: str, args: dict[str, Any]) -> CallToolResult:
    # A bare namespace:name runs the one tool it names (AM-BARE-TOOL-ID).
    result = await client.call_tool("tool_execute", {"tool_id": f"everything:{name}", "args": args})
    assert not result.is_error, result.content
    return result


def _png_artifact(result: CallToolResult) -> dict[str, Any]:
    (art,) = [a for a in result.structured_content["artifacts"] if a["media_type"] == "image/png"]
    return art


@pytest.mark.timeout(180)
@pytest.mark.parametrize("profile", ["gateway", "transparent"])
async def test_image_under_the_cap_reaches_the_model_and_stays_an_artifact(
    tmp_path: Path, servers: Any, profile: str
) -> None:
    png = tiny_image()
    async with Client(_params(tmp_path, servers, profile), mode="legacy", cache=None) as client:
        ran = await _execute(client, "get-tiny-image", {})
        (shown,) = images(ran)
        assert shown.mime_type == "image/png" and base64.b64decode(shown.data) == png
        # Seed 002: still a binary artifact, listed in the text the budgets count.
        art = _png_artifact(ran)
        assert art["size_bytes"] == len(png)
        assert f"artifact {art['handle']}" in texts(ran)[0]
        assert shown.data not in "".join(texts(ran))  # the image is not text as well

        viewed = await client.call_tool("tool_view", {"handle": art["handle"], "selector": "all"})
        assert not viewed.is_error, viewed.content
        (view_image,) = images(viewed)
        assert base64.b64decode(view_image.data) == png
        assert view_image.data not in "".join(texts(viewed))
        # The ViewResult is unchanged for programs (AM-VIEW-SELECTOR).
        assert viewed.structured_content["encoding"] == "base64"
        assert base64.b64decode(viewed.structured_content["content"]) == png


@pytest.mark.timeout(180)
async def test_over_the_cap_the_model_gets_the_handle_only(tmp_path: Path, servers: Any) -> None:
    png = tiny_image()
    params = _params(tmp_path, servers, "gateway", inline_media_max_bytes=len(png) - 1)
    async with Client(params, mode="legacy", cache=None) as client:
        ran = await _execute(client, "get-tiny-image", {})
        assert images(ran) == []
        art = _png_artifact(ran)
        viewed = await client.call_tool("tool_view", {"handle": art["handle"], "selector": "all"})
        assert images(viewed) == []
        assert base64.b64decode(texts(viewed)[0]) == png  # base64 text, as before


@pytest.mark.timeout(180)
async def test_search_profile_call_returns_the_upstream_image(tmp_path: Path, servers: Any) -> None:
    async with Client(_params(tmp_path, servers, "search"), mode="legacy", cache=None) as client:
        ran = await client.call_tool("call", {"operation": "/everything/get-tiny-image"})
        assert not ran.is_error, ran.content
        (shown,) = images(ran)
        assert base64.b64decode(shown.data) == tiny_image()


@pytest.mark.timeout(180)
async def test_structured_result_is_shown_once_in_the_text(tmp_path: Path, servers: Any) -> None:
    async with Client(_params(tmp_path, servers, "gateway"), mode="legacy", cache=None) as client:
        ran = await _execute(client, "get-structured-content", {"location": "Chicago"})
        envelope = ran.structured_content
        structured = json.loads(envelope["summary"])  # server-everything's text is the JSON
        (text,) = texts(ran)
        lines = text.split("\n")
        assert lines[0] == "[ok]"  # AM-RESULT-TEXT-ONCE: no summary line
        # Seed 002: each top-level key is a fact, once; the JSON artifact holds the whole.
        for key in structured:
            assert sum(line.startswith(f"- {key}: ") for line in lines) == 1
            assert text.count(key) == 1
        assert any(STRUCTURED_CONTENT_LABEL in line for line in lines[1:])
        assert envelope["summary"]  # the envelope keeps its summary
