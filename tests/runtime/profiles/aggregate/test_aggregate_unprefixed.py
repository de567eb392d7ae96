"""gateway.unprefixed end to end (AM-AGGREGATE-UNPREFIXED), in both protocol eras: gatespec in
front of the kit's rich fixture upstreams, one of them served by its own names. Expected names
come from the amendment and the fixture's own tables; the call logs show where each request
went."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from gatespec.config import parse_config
from gatespec.profiles.aggregate.naming import Naming
from gatespec_conformance.fixtures.catalog import fixture_tools
from gatespec_conformance.fixtures.rich import BAD_PROMPT, PROMPTS, RELAY_TOOLS, RESOURCES, TEXTS
from gatespec_surface.errors import ErrorCode, GatewayError
from tests.runtime.profiles.aggregate.test_aggregate import (
    ERAS,
    calls,
    every,
    fixture_entry,
    offered_tools,
    serving,
)

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]


def config(tmp_path: Path, servers: list[str], unprefixed: str = "alpha") -> Any:
    body = {
        "mcpServers": {k: fixture_entry(tmp_path / f"{k}.jsonl") for k in servers},
        "gateway": {"profile": "aggregate", "call_timeout": 10, "unprefixed": unprefixed},
    }
    return parse_config(body, source=tmp_path / "gatespec.json", environ={})


def fixture_entries() -> list[dict[str, Any]]:
    return [t.wire() for t in fixture_tools()] + list(RELAY_TOOLS)


def is_object(schema: object) -> bool:
    return isinstance(schema, dict) and schema.get("type") == "object"


def called(log: Path) -> list[str]:
    return [str(c["name"]) for c in calls(log)]


@pytest.mark.parametrize("mode", ERAS)
async def test_the_unprefixed_upstream_is_served_by_its_own_names(
    anyio_backend: str, tmp_path: Path, mode: str
) -> None:
    readme = RESOURCES[0]["uri"]
    async with serving(config(tmp_path, ["alpha", "beta"])) as (_, server):
        async with Client(server, mode=mode) as client:
            tools = [t.name for t in await every(client, "tools/list")]
            prompts = [p.name for p in await every(client, "prompts/list")]
            uris = [str(r.uri) for r in await every(client, "resources/list")]
            own = await client.call_tool("echo", {"text": "hi"})
            other = await client.call_tool("beta__echo", {"text": "there"})
            greeting = await client.get_prompt("greet", {"name": "Ada"})
            embedded = await client.get_prompt("with-resource")
            done = await client.complete(
                types.PromptReference(type="ref/prompt", name="greet"),
                {"name": "name", "value": "al"},
            )
            read = await client.read_resource(readme)
            namespaced_read = await client.read_resource(f"beta+{readme}")
            with pytest.raises(MCPError):  # the unprefixed upstream has no prefixed names
                await client.get_prompt("alpha__greet", {"name": "Ada"})
    # the unprefixed upstream's tools by their own names (every tool MCP allows, whether or not
    # server__name could hold it), then the other's namespaced ones
    alpha_tools = [t["name"] for t in fixture_entries() if is_object(t.get("inputSchema"))]
    assert set(alpha_tools) > {n.removeprefix("alpha__") for n in offered_tools("alpha")}
    assert tools[: len(alpha_tools)] == alpha_tools
    assert tools[len(alpha_tools) :] == offered_tools("beta")
    assert [p["name"] for p in PROMPTS] == prompts[: len(PROMPTS)]  # bad__prompt too: no "bad"
    assert "beta__greet" in prompts and "alpha__greet" not in prompts
    assert readme in uris and f"beta+{readme}" in uris
    assert not own.is_error and not other.is_error
    assert greeting.messages[0].content.text == "Hello, Ada!"
    assert str(embedded.messages[0].content.resource.uri) == readme
    assert done.completion.values == ["alice", "albert"]
    # an answer's URI of the unprefixed upstream is its own; the other's is namespaced
    assert [str(c.uri) for c in read.contents] == [readme]
    assert [str(c.uri) for c in namespaced_read.contents] == [f"beta+{readme}"]
    assert getattr(read.contents[0], "text", None) == TEXTS[readme]
    alpha, beta = called(tmp_path / "alpha.jsonl"), called(tmp_path / "beta.jsonl")
    assert alpha.count("echo") == 1 and beta.count("echo") == 1
    assert "prompts/get:greet" in alpha and "prompts/get:greet" not in beta


async def test_a_colliding_entry_is_not_offered_and_says_why(
    anyio_backend: str, tmp_path: Path
) -> None:
    """alpha's prompt bad__prompt reads as server bad's prompt "prompt" once a server bad is
    configured: then it is not offered (listed with the reason), while before it was."""
    async with serving(config(tmp_path, ["alpha"])) as (runtime, server):
        async with Client(server, mode="legacy") as client:
            before = [p.name for p in await every(client, "prompts/list")]
        await runtime.reconfigure(config(tmp_path, ["alpha", "bad"]))
        async with Client(server, mode="legacy") as client:
            after = [p.name for p in await every(client, "prompts/list")]
            with pytest.raises(MCPError):  # routed to server bad, which has no prompt "prompt"
                await client.get_prompt(BAD_PROMPT)
        listing = await runtime.catalog_listing()
    assert BAD_PROMPT in before
    assert BAD_PROMPT not in after and "greet" in after and "bad__greet" in after
    reasons = [r for s, what, r in listing.excluded if s == "alpha" and BAD_PROMPT in what]
    assert len(reasons) == 1 and "'bad'" in reasons[0] and "collides" in reasons[0]


def test_which_name_is_whose() -> None:
    """The amendment's ingress and egress rules on names, without upstreams."""
    namespaced = Naming(frozenset({"ref", "mem"}))
    with pytest.raises(GatewayError) as bare:
        namespaced.split("echo", False)
    assert bare.value.code == ErrorCode.NOT_NAMESPACED  # off by default: seed 004 Principle 5
    naming = Naming(frozenset({"ref", "mem"}), unprefixed="ref")
    assert naming.split("mem__x", False) == ("mem", "x")  # another server's prefix goes there
    assert naming.split("echo", False) == ("ref", "echo")
    assert naming.split("ref__x", False) == ("ref", "ref__x")  # whole, to the unprefixed one
    assert naming.split("gone__x", False) == ("ref", "gone__x")  # no such server: whole
    assert naming.split("mem+file:///a", True) == ("mem", "file:///a")
    assert naming.split("test://static-text", True) == ("ref", "test://static-text")
    assert naming.split("git+ssh://h/r", True) == ("ref", "git+ssh://h/r")
    assert naming.expose(False, "ref", "read.file") == "read.file"
    assert naming.expose(True, "mem", "file:///a") == "mem+file:///a"
    for uri, value in ((False, "mem__x"), (True, "mem+file:///a")):
        with pytest.raises(GatewayError) as collision:
            naming.expose(uri, "ref", value)
        assert collision.value.code == ErrorCode.NAME_INVALID and "'mem'" in collision.value.message
