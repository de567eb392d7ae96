"""Registry behaviour from seed 001 ("Tool Storage", "Tool Discovery", "Event Notification"),
exercised without network: the catalog is filled by hand."""

import mcp.types as types
import pytest

from switchyard.config import parse_config
from switchyard.registry import Registry
from switchyard.upstream import UpstreamPool

pytestmark = pytest.mark.anyio


def _registry():
    cfg = parse_config({"mcpServers": {"server1": {"command": "x"}, "server2": {"command": "y"}}})
    reg = Registry(UpstreamPool(cfg))
    schema = {"type": "object", "properties": {"p": {"type": "string"}}}
    reg.catalog["tools"]["server1"] = [types.Tool(name="myTool", description="d1", input_schema=schema)]
    reg.catalog["tools"]["server2"] = [types.Tool(name="myTool", description="d2", input_schema=schema)]
    return reg


def test_tools_are_stored_per_server_without_collisions():
    reg = _registry()
    assert reg.get_tool("server1", "myTool").description == "d1"
    assert reg.get_tool("server2", "myTool").description == "d2"
    assert reg.get_tool("server1", "other") is None


def test_compact_cards_have_only_name_description_server():
    cards = _registry().list_tools(compact=True)
    assert cards == [
        {"name": "myTool", "description": "d1", "serverId": "server1"},
        {"name": "myTool", "description": "d2", "serverId": "server2"},
    ]


def test_get_tool_returns_full_schema():
    assert _registry().get_tool("server1", "myTool").input_schema["properties"] == {"p": {"type": "string"}}


async def test_remove_server_drops_its_tools_and_emits_change():
    reg = _registry()
    events = []

    async def listener(kind):
        events.append(kind)

    reg.on_change(listener)
    await reg.remove_server("server1")
    assert reg.get_tool("server1", "myTool") is None
    assert reg.get_tool("server2", "myTool") is not None
    assert events == ["tools"]
