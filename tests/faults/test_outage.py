"""Issue 12 #6 and #7 (AM-UNAVAILABLE-NOT-MISSING, AM-SERVE-FIRST-READY): an upstream that
crashed answers "unavailable" (never "not found") until it is back, and it comes back while
another upstream's handshake still hangs; a hanging handshake does not delay the first answer,
and upstreams that connect later join with list_changed. Asserted by order and by state,
never by elapsed time (bench/faults.py reports the times)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from gatespec.runtime import ProxyRuntime
from gatespec_surface.errors import ErrorCode, GatewayError
from tests.faults.support import GATESPEC, config, upstream

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


async def test_a_crashed_upstream_is_unavailable_then_back_while_another_still_hangs() -> None:
    cfg = config(
        {"crashy": upstream(), "hang": upstream("--hang")},
        refresh_interval=1,
        connect_timeout=60,
    )
    runtime = ProxyRuntime.from_config(cfg)
    try:
        await runtime.start(first_ready=True)  # serves once crashy is ready
        assert runtime.pool.status("hang").state == "pending"  # still connecting
        async with anyio.create_task_group() as serving:
            serving.start_soon(runtime.keep_upstreams)  # what serve runs meanwhile
            await outage_and_return(runtime)
            serving.cancel_scope.cancel()
    finally:
        await runtime.aclose()


async def outage_and_return(runtime: ProxyRuntime) -> None:
    ids = {item.name: item.id for item in runtime.catalog.items()}
    listed = set(ids.values())
    with pytest.raises(GatewayError) as crashed:
        await runtime.execute("s", ids["crash"], {})
    assert crashed.value.code is ErrorCode.SERVER_UNAVAILABLE
    answers: Counter[str] = Counter()
    with anyio.fail_after(30):  # a bound on the test, not a timing claim
        while True:
            try:
                await runtime.execute("s", ids["echo"], {"text": "back?"})
                break
            except GatewayError as exc:
                answers[exc.code.value] += 1
            await anyio.sleep(0.05)
    # every call during the outage was told the server is unavailable, none "not found"
    assert set(answers) == {"SERVER_UNAVAILABLE"}
    # it came back before the hanging handshake settled: no retry waited for it
    assert runtime.pool.status("hang").state == "pending"
    assert {item.id for item in runtime.catalog.items()} == listed


def stdio_gateway(tmp_path: Path, servers: dict[str, Any], **gateway: Any) -> Any:
    path = tmp_path / "gateway.json"
    gateway = {"connect_timeout": 60, **gateway}
    path.write_text(json.dumps({"mcpServers": servers, "gateway": gateway}))
    return StdioServerParameters(command=GATESPEC, args=["serve", "--config", str(path)])


async def test_a_hanging_handshake_does_not_delay_the_first_answer(tmp_path: Path) -> None:
    params = stdio_gateway(tmp_path, {"hang": upstream("--hang"), "ok": upstream()})
    log = tmp_path / "stderr.log"
    with log.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            browse = await client.call_tool("tool_browse", {"query": "echo the text back"})
            cards = browse.structured_content["cards"]
            assert any(card["id"].startswith("ok:echo") for card in cards)
            # answered while hang's handshake is still pending: start-up has not reported it
            assert "hang" not in log.read_text()


async def test_upstreams_that_connect_later_join_with_list_changed(tmp_path: Path) -> None:
    go = tmp_path / "go"  # slow's handshake waits for it: it connects after the first list
    servers = {"slow": upstream("--wait-for", str(go)), "ok": upstream()}
    params = stdio_gateway(tmp_path, servers, profile="transparent")
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    with (tmp_path / "stderr.log").open("w") as errlog:
        transport = stdio_client(params, errlog=errlog)
        async with Client(transport, mode="legacy", message_handler=on_message) as client:
            first = {tool.name for tool in (await client.list_tools()).tools}
            assert not any(name.startswith("slow") for name in first)
            assert any(name.startswith("ok") for name in first)
            go.write_text("go")
            with anyio.fail_after(60):
                await changed.wait()
            later = {tool.name for tool in (await client.list_tools()).tools}
            assert first < later and any(name.startswith("slow") for name in later)
