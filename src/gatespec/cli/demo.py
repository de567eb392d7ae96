"""The embedded default catalog (real tool lists captured from the MCP reference servers, see
tools/capture_default_catalog.py) and a scripted session against it: `gatespec demo`.

The demo needs no configuration and no network: every upstream is a stub serving its captured
tools and echoing calls. It walks the agent's path through the gateway surface: browse by
query, browse by path, execute with bad arguments (refused before any upstream call), execute,
view an artifact, and shows the context cost next to passing every tool through.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from gatespec.config import GatewayConfig, parse_config

DEFAULT_CATALOG = "default_catalog.json"


def default_catalog_path() -> Path:
    return Path(str(resources.files("gatespec.data").joinpath(DEFAULT_CATALOG)))


def default_catalog() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(default_catalog_path().read_text(encoding="utf-8"))
    return data


def default_config(profile: str = "gateway", **options: Any) -> GatewayConfig:
    """A config serving the embedded catalog through one stub upstream per captured server."""
    path = default_catalog_path()
    servers = {
        key: {"type": "stub", "catalog": str(path), "server": key}
        for key in default_catalog()["sources"]
    }
    return parse_config({"mcpServers": servers, "gateway": {"profile": profile, **options}})


def _tokens_of_tools(tools: list[dict[str, Any]]) -> int:
    from gatespec.tokens import count_tokens

    return sum(
        count_tokens(json.dumps(t, ensure_ascii=False, separators=(",", ":"))) for t in tools
    )


async def _session(out: Any) -> None:
    from gatespec.runtime import ProxyRuntime
    from gatespec_surface.descriptors import tools_for_profile
    from gatespec_surface.errors import GatewayError

    def show(title: str, text: str) -> None:
        out(f"\n== {title}\n{text}")

    runtime = ProxyRuntime.from_config(default_config(cache_stable=True))
    try:
        await runtime.start()
        catalog = default_catalog()
        upstream_tools = [
            {k: v for k, v in t.items() if k in ("name", "description", "inputSchema")}
            for t in catalog["tools"]
        ]
        meta = [
            t.model_dump(by_alias=True, exclude_none=True, mode="json")
            for t in tools_for_profile("gateway")
        ]
        show(
            "What the agent loads (exact cl100k_base tokens)",
            f"{len(upstream_tools)} upstream tools passed through: {_tokens_of_tools(upstream_tools)} tokens\n"
            f"gateway (tool_browse, tool_execute, tool_view): {_tokens_of_tools(meta)} tokens",
        )
        show('tool_browse(path="/")', (await runtime.browse("demo", None, "/")).text)
        found = await runtime.browse("demo", "what time is it in Tokyo", None)
        scores = ", ".join(f"{c['id']}={c['score']}" for c in (found.structured or {})["cards"])
        show(
            'tool_browse(query="what time is it in Tokyo")',
            f"{found.text}\n(cache_stable: lines are in id order; the rank is each card's "
            f"structured score: {scores})",
        )
        tool_id = next(i.id for i in runtime.catalog.items() if i.name == "get_current_time")
        try:
            await runtime.execute("demo", tool_id, {"timezone": 9})
        except GatewayError as exc:
            show(
                f"tool_execute({tool_id}, {{timezone: 9}}) is refused before any upstream call",
                json.dumps(exc.to_payload(), indent=1),
            )
        reply = await runtime.execute("demo", tool_id, {"timezone": "Asia/Tokyo"})
        show(f'tool_execute({tool_id}, {{timezone: "Asia/Tokyo"}})', reply.text)
        handle = reply.structured["artifacts"][0]["handle"] if reply.structured else None
        if handle:
            show(
                f'tool_view("{handle}", "json:/timezone")',
                (await runtime.view("demo", handle, "json:/timezone")).text,
            )
        show(
            'tool_browse(query="current time") again, cache-stable: seen cards first, then the marker',
            (await runtime.browse("demo", "current time", None)).text,
        )
    finally:
        await runtime.aclose()


def run_demo(out: Any = print) -> int:
    """`gatespec demo`: a scripted agent session against the embedded catalog (stubs echo)."""
    import anyio

    out("gatespec demo: the embedded catalog of five MCP reference servers, served by stubs")
    anyio.run(_session, out)
    return 0
