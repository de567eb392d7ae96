"""Server wiring tested in-process (SDK ``Client(server)``) over the stub upstream."""

import pytest
from mcp import Client

from tests.test_runtime import Stub
from tollbooth.runtime import ProxyRuntime
from tollbooth.server import TollboothServer


async def app(profile, **kw):
    rt = ProxyRuntime(Stub(), ["gh", "misc"])
    await rt.refresh_catalog()
    srv = TollboothServer(rt, profile, **kw)
    srv.ready.set()
    return srv


@pytest.mark.anyio
async def test_transparent_encoded_names_and_envelope_option():
    srv = await app("transparent", encode_names=True, proxy_result="envelope")
    async with Client(srv.server, mode="legacy") as c:
        names = [t.name for t in (await c.list_tools()).tools]
        assert "github:repo_info@2" not in names and "github%3Arepo_info@2" in names
        assert any(n.startswith("mcp%3Aread_file%23") for n in names)
        res = await c.call_tool("tool_execute", {"tool_id": "github%3Arepo_info@2", "args": {}})
        assert not res.is_error and res.structured_content["status"] == "ok"
        assert res.structured_content["facts"] == ["n: 1", "items: [1,2]"]
        res = await c.call_tool("github%3Arepo_info@2", {})
        assert res.is_error and res.structured_content["error"] == "ARGS_INVALID"


@pytest.mark.anyio
async def test_gateway_unknown_and_bad_args_never_raise():
    srv = await app("gateway")
    async with Client(srv.server, mode="legacy") as c:
        for name, args in [("nope", {}), ("tool_execute", {}), ("tool_execute", {"tool_id": 5}),
                           ("tool_view", {"handle": "h", "extra": 1}), ("tool_browse", {"path": 7})]:
            res = await c.call_tool(name, args)
            assert res.is_error and res.structured_content["error"] == "ARGS_INVALID", (name, args)
            assert res.structured_content["status"] == "error"
