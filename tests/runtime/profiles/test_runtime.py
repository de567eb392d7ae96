"""ProxyRuntime end to end: the four operations over real upstream processes, failure
isolation, and properties that feed the generated invalid values to every operation.

The property tests use a spy pool (a unit-test stand-in that records calls) so that "nothing
reached upstream" is observable; every other test runs real MCP servers."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gatespec.config import parse_config
from gatespec.runtime import ProxyRuntime
from gatespec_surface import strategies
from gatespec_surface.errors import ErrorCode, GatewayError
from gatespec_surface.grammars import is_wire_name
from gatespec_surface.models import BrowseResult, HydrationResult, ResultEnvelope, ViewResult

ROOT = Path(__file__).resolve().parents[3]
RAW = ROOT / "tests" / "fixtures" / "raw_mcp_server.py"

SCHEMA = {
    "type": "object",
    "properties": {"count": {"type": "integer", "minimum": 1}, "label": {"type": "string"}},
    "required": ["count"],
    "additionalProperties": False,
}


class SpyPool:
    """Stands in for UpstreamPool in unit tests: serves a fixed tool list, records calls."""

    def __init__(self, tools: Mapping[str, list[dict[str, Any]]]) -> None:
        self._tools = {k: list(v) for k, v in tools.items()}
        self.calls: list[tuple[str, str, dict[str, Any]]] = []
        self.on_tools_changed = None

    def tools(self) -> dict[str, list[dict[str, Any]]]:
        return self._tools

    async def call(
        self,
        key: str,
        name: str,
        arguments: Any = None,
        timeout: float | None = None,
        relay: Any = None,
    ) -> dict[str, Any]:
        self.calls.append((key, name, dict(arguments or {})))
        return {"content": [{"type": "text", "text": "done"}], "structuredContent": {"ok": True}}


@pytest.fixture(scope="module")
def spy_runtime() -> tuple[ProxyRuntime, SpyPool]:
    pool = SpyPool(
        {"spy": [{"name": "count_things", "description": "Counts things.", "inputSchema": SCHEMA}]}
    )
    runtime = ProxyRuntime(pool, profile="gateway")  # type: ignore[arg-type]
    anyio.run(runtime.rebuild)
    assert runtime.catalog.items()  # the lazy build happens here, not in a timed example
    return runtime, pool


def _code(fn: Any, *args: Any) -> str:
    with pytest.raises(GatewayError) as exc:
        anyio.run(fn, *args)
    return exc.value.code.value


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(args=st.dictionaries(st.sampled_from(["count", "label", "other"]), JSON, max_size=3))
def test_args_invalid_never_reaches_upstream(
    spy_runtime: tuple[ProxyRuntime, SpyPool], args: dict
) -> None:
    runtime, pool = spy_runtime
    [item] = runtime.catalog.items()
    before = len(pool.calls)
    valid = jsonschema.Draft202012Validator(SCHEMA).is_valid(args)
    if valid:
        reply = anyio.run(runtime.execute, "s", item.id, args)
        ResultEnvelope.model_validate(reply.structured)
        assert pool.calls[-1] == ("spy", "count_things", args)
    else:
        assert _code(runtime.execute, "s", item.id, args) == "ARGS_INVALID"
        assert len(pool.calls) == before


@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tool_id=strategies.invalid("tool_id"))
def test_invalid_tool_ids_are_typed_errors(
    spy_runtime: tuple[ProxyRuntime, SpyPool], tool_id: str
) -> None:
    runtime, pool = spy_runtime
    before = len(pool.calls)
    # A malformed id may still be a well-formed wire name (e.g. "github"): then it is unknown.
    expected = {"TOOL_NOT_FOUND"} if is_wire_name(tool_id) else {"ARGS_INVALID"}
    assert _code(runtime.execute, "s", tool_id, {"count": 1}) in expected
    assert _code(runtime.hydrate, "s", tool_id) in expected
    assert len(pool.calls) == before


@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=strategies.invalid("path"))
def test_invalid_paths_are_path_invalid(
    spy_runtime: tuple[ProxyRuntime, SpyPool], path: str
) -> None:
    runtime, _ = spy_runtime
    assert _code(runtime.browse, "s", None, path) == "PATH_INVALID"


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=strategies.valid("path"))
def test_valid_paths_list_or_are_not_found(
    spy_runtime: tuple[ProxyRuntime, SpyPool], path: str
) -> None:
    runtime, _ = spy_runtime
    try:
        reply = anyio.run(runtime.browse, "s", None, path)
    except GatewayError as exc:
        assert exc.code == ErrorCode.PATH_NOT_FOUND and exc.path == path
    else:
        BrowseResult.model_validate(reply.structured)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    handle=st.one_of(strategies.invalid("artifact_handle"), strategies.valid("artifact_handle")),
    selector=strategies.valid("view_selector"),
)
def test_unknown_or_malformed_handles_are_view_failed(
    spy_runtime: tuple[ProxyRuntime, SpyPool], handle: str, selector: str
) -> None:
    runtime, _ = spy_runtime
    assert _code(runtime.view, "s", handle, selector) in {"VIEW_FAILED", "ARGS_INVALID"}


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(selector=strategies.invalid("view_selector"))
def test_invalid_selectors_are_args_invalid(
    spy_runtime: tuple[ProxyRuntime, SpyPool], selector: str
) -> None:
    runtime, _ = spy_runtime
    reply = anyio.run(runtime.execute, "s", runtime.catalog.items()[0].id, {"count": 1})
    handle = reply.structured["artifacts"][0]["handle"]
    assert _code(runtime.view, "s", handle, selector) == "ARGS_INVALID"


def test_both_or_neither_query_and_path(spy_runtime: tuple[ProxyRuntime, SpyPool]) -> None:
    runtime, _ = spy_runtime
    assert _code(runtime.browse, "s", "count", "/") == "ARGS_INVALID"
    assert _code(runtime.browse, "s", None, None) == "ARGS_INVALID"


def test_hydrate_and_execute_share_one_key(spy_runtime: tuple[ProxyRuntime, SpyPool]) -> None:
    """The tool_id (or its wire name, which decodes to it) is the only correlation key."""
    runtime, pool = spy_runtime
    [item] = runtime.catalog.items()
    by_id = anyio.run(runtime.hydrate, "s", item.id).structured
    by_wire = anyio.run(runtime.hydrate, "s", runtime.catalog.wire_name(item.id)).structured
    assert by_id == by_wire
    HydrationResult.model_validate(by_id)
    assert by_id["input_schema"] == SCHEMA
    anyio.run(runtime.execute, "s", runtime.catalog.wire_name(item.id), {"count": 2})
    assert pool.calls[-1] == ("spy", "count_things", {"count": 2})


def test_stripped_tools_cover_the_catalog(spy_runtime: tuple[ProxyRuntime, SpyPool]) -> None:
    runtime, _ = spy_runtime
    stripped = runtime.stripped_tools()
    assert [t.name for t in stripped] == [
        runtime.catalog.wire_name(i.id) for i in runtime.catalog.items()
    ]
    assert all(t.input_schema == {"type": "object"} for t in stripped)


def test_cache_stable_browse_records_hydration_only_on_success() -> None:
    tools = {
        "a": [
            {"name": n, "description": f"Tool {n} for things.", "inputSchema": {"type": "object"}}
            for n in ("alpha", "beta")
        ]
    }
    runtime = ProxyRuntime(SpyPool(tools), profile="gateway", cache_stable=True)  # type: ignore[arg-type]
    anyio.run(runtime.rebuild)
    ids = [i.id for i in runtime.catalog.items()]
    with pytest.raises(GatewayError):
        anyio.run(runtime.hydrate, "s", "a:missing#00000000")
    anyio.run(runtime.hydrate, "s", ids[1])
    cards = anyio.run(runtime.browse, "s", None, "/a").structured["cards"]
    assert [c["id"] for c in cards] == [ids[1], "__cache_breakpoint__", ids[0]]


@pytest.mark.parametrize(("mode", "built_at_rebuild"), [("gateway", 0), ("transparent", 1)])
def test_cards_index_and_tree_are_built_on_first_use_in_the_gateway_profile(
    monkeypatch: pytest.MonkeyPatch, mode: str, built_at_rebuild: int
) -> None:
    import gatespec.snapshot as snapshot_module

    builds: list[int] = []
    real = snapshot_module.admit_cards

    def counting(catalog: Any) -> Any:
        builds.append(len(catalog))
        return real(catalog)

    monkeypatch.setattr(snapshot_module, "admit_cards", counting)
    tools = {"a": [{"name": "alpha", "description": "A tool.", "inputSchema": SCHEMA}]}
    runtime = ProxyRuntime(SpyPool(tools), profile=mode)  # type: ignore[arg-type]
    builds.clear()  # the empty catalog a runtime starts with
    anyio.run(runtime.rebuild)
    assert builds == [1] * built_at_rebuild  # gateway: tools/list needs no cards
    tool_id = runtime.catalog.items()[0].id
    anyio.run(runtime.execute, "s", tool_id, {"count": 1})
    anyio.run(runtime.hydrate, "s", tool_id)
    assert builds == [1]  # built once, by the first use, then shared
    anyio.run(runtime.rebuild)
    assert builds == [1] * (1 + built_at_rebuild)


def test_cache_stable_execute_makes_its_tool_seen() -> None:
    """AM-CACHE-SEEN-BY-EXECUTE: tool_execute's implicit hydration (§4.3) enters the seen-set;
    a call that fails before hydrating (unknown tool) does not."""
    tools = {
        "a": [
            {"name": n, "description": f"Tool {n} for things.", "inputSchema": {"type": "object"}}
            for n in ("alpha", "beta")
        ]
    }
    runtime = ProxyRuntime(SpyPool(tools), profile="gateway", cache_stable=True)  # type: ignore[arg-type]
    anyio.run(runtime.rebuild)
    ids = [i.id for i in runtime.catalog.items()]
    with pytest.raises(GatewayError):
        anyio.run(runtime.execute, "s", "a:missing#00000000", {})
    anyio.run(runtime.execute, "s", ids[0], {})
    cards = anyio.run(runtime.browse, "s", None, "/a").structured["cards"]
    assert [c["id"] for c in cards] == [ids[0], "__cache_breakpoint__", ids[1]]


class FailingPool(SpyPool):
    """An upstream tool that answers with isError true (the tool itself failed)."""

    async def call(
        self,
        key: str,
        name: str,
        arguments: Any = None,
        timeout: float | None = None,
        relay: Any = None,
    ) -> dict[str, Any]:
        await super().call(key, name, arguments, timeout, relay)
        return {"content": [{"type": "text", "text": "disk full"}], "isError": True}


@pytest.mark.anyio
async def test_a_failed_upstream_tool_is_an_error_result(anyio_backend: str) -> None:
    """AM-UPSTREAM-ISERROR: the envelope says status error and the MCP result says isError."""
    from mcp import Client

    from gatespec.server import build_server

    pool = FailingPool({"s": [{"name": "write", "inputSchema": {"type": "object"}}]})
    runtime = ProxyRuntime(pool, profile="gateway")  # type: ignore[arg-type]
    await runtime.rebuild()
    tool_id = runtime.catalog.items()[0].id
    async with Client(build_server(runtime), cache=None) as client:
        result = await client.call_tool("tool_execute", {"tool_id": tool_id, "args": {}})
    assert result.is_error is True
    envelope = ResultEnvelope.model_validate(result.structured_content)
    assert envelope.status == "error" and envelope.summary == "disk full"
    assert pool.calls == [("s", "write", {})]


# ---------------------------------------------------------------------- real upstreams


def _config(servers: dict[str, Any], **gateway: Any) -> Any:
    return parse_config({"mcpServers": servers, "gateway": gateway}, environ={})


def _raw(*args: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(RAW), *args]}


@pytest.mark.anyio
@pytest.mark.timeout(90)
async def test_a_hung_or_crashed_upstream_is_isolated(anyio_backend: str) -> None:
    config = _config(
        {"good": _raw(), "flaky": _raw(), "missing": {"command": "/nonexistent/server"}},
        call_timeout=2,
        connect_timeout=15,
    )
    runtime = ProxyRuntime.from_config(config)
    try:
        statuses = {s.key: s for s in await runtime.start()}
        assert statuses["good"].state == "connected" and statuses["flaky"].state == "connected"
        assert statuses["missing"].state == "failed" and statuses["missing"].reason
        ids = {(i.metadata["server"], i.name): i.id for i in runtime.catalog.items()}

        # A call that hangs is cancelled at the call timeout.
        with pytest.raises(GatewayError) as hung:
            await runtime.execute("s", ids["flaky", "sleep"], {"seconds": 60})
        assert hung.value.code == ErrorCode.TIMEOUT

        # An upstream killed mid-call is an upstream error; the others keep serving.
        with pytest.raises(GatewayError) as crashed:
            await runtime.execute("s", ids["flaky", "crash"], {})
        assert crashed.value.code in (ErrorCode.UPSTREAM_ERROR, ErrorCode.SERVER_UNAVAILABLE)
        reply = await runtime.execute("s", ids["good", "echo"], {"text": "still here"})
        assert "still here" in reply.text

        # A later refresh reconnects the crashed one.
        statuses = {s.key: s for s in await runtime.refresh()}
        assert statuses["flaky"].state == "connected"
        reply = await runtime.execute("s", ids["flaky", "echo"], {"text": "back"})
        assert "back" in reply.text
    finally:
        await runtime.aclose()


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_a_server_timeout_wins_over_the_gateway_call_timeout(anyio_backend: str) -> None:
    """A per-server `timeout: 1` under a gateway-wide `call_timeout: 6` cancels after 1 s (the
    bug of issue 10: the gateway-wide value was always passed)."""
    config = _config({"quick": {**_raw(), "timeout": 1}, "slow": _raw()}, call_timeout=6)
    runtime = ProxyRuntime.from_config(config)
    try:
        await runtime.start()
        ids = {(i.metadata["server"], i.name): i.id for i in runtime.catalog.items()}
        with pytest.raises(GatewayError) as hung:
            await runtime.execute("s", ids["quick", "sleep"], {"seconds": 60})
        assert hung.value.code == ErrorCode.TIMEOUT
        assert "within 1s" in hung.value.message
        assert runtime.call_timeout_for("quick") == 1 and runtime.call_timeout_for("slow") == 6
    finally:
        await runtime.aclose()


@pytest.mark.anyio
@pytest.mark.real_upstream
@pytest.mark.timeout(120)
async def test_browse_execute_view_over_real_servers(anyio_backend: str, tmp_path: Path) -> None:
    fs = ROOT / "node_modules" / ".bin" / "mcp-server-filesystem"
    everything = ROOT / "node_modules" / ".bin" / "mcp-server-everything"
    if not fs.exists() or not everything.exists():
        pytest.skip("npm test peers are not installed (make install)")
    big = tmp_path / "notes.txt"
    big.write_text("\n".join(f"line {i}: some notes about the project" for i in range(1, 301)))
    runtime = ProxyRuntime.from_config(
        _config(
            {
                "files": {"command": str(fs), "args": [str(tmp_path)]},
                "everything": {"command": str(everything), "args": ["stdio"]},
            }
        )
    )
    try:
        await runtime.start()
        found = await runtime.browse("s", "read the contents of a text file", None)
        BrowseResult.model_validate(found.structured)
        read = next(
            c["id"] for c in found.structured["cards"] if c["id"].startswith("files:read_text_file")
        )
        # Bad args are refused before the call; good ones go through the firewall.
        with pytest.raises(GatewayError) as bad:
            await runtime.execute("s", read, {"path": 42})
        assert bad.value.code == ErrorCode.ARGS_INVALID
        reply = await runtime.execute("s", read, {"path": str(big)})
        envelope = ResultEnvelope.model_validate(reply.structured)
        assert envelope.status == "ok" and len(envelope.summary) <= 500
        [text_artifact] = [a for a in envelope.artifacts if a.media_type.startswith("text/")]
        view = await runtime.view("s", text_artifact.handle, "lines:299-300")
        ViewResult.model_validate(view.structured)
        assert view.structured["content"].splitlines() == [
            "line 299: some notes about the project",
            "line 300: some notes about the project",
        ]
        # Binary content becomes an artifact too (server-everything's tiny image).
        image_tool = next(i.id for i in runtime.catalog.items() if i.name == "get-tiny-image")
        envelope = ResultEnvelope.model_validate(
            (await runtime.execute("s", image_tool, {})).structured
        )
        assert any(a.media_type == "image/png" for a in envelope.artifacts)
        listing = runtime.catalog_listing()
        assert json.dumps(listing.tools)  # ids and wire names for `gatespec catalog`
    finally:
        await runtime.aclose()


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_serving_retries_a_crashed_upstream_in_the_background(anyio_backend: str) -> None:
    config = _config({"flaky": _raw()}, refresh_interval=0.5, connect_timeout=15)
    runtime = ProxyRuntime.from_config(config)
    try:
        await runtime.start()
        crash = next(i.id for i in runtime.catalog.items() if i.name == "crash")
        echo = next(i.id for i in runtime.catalog.items() if i.name == "echo")
        with pytest.raises(GatewayError):
            await runtime.execute("s", crash, {})
        async with anyio.create_task_group() as tg:
            tg.start_soon(runtime.keep_upstreams)
            with anyio.fail_after(20):
                while runtime.pool.status("flaky").state != "connected":
                    await anyio.sleep(0.2)
            tg.cancel_scope.cancel()
        assert "again" in (await runtime.execute("s", echo, {"text": "again"})).text
    finally:
        await runtime.aclose()
