"""The aggregate profile's parts on their own: the single parse point, the boundary
translation, paged snapshots, the plugins and their config, and the relay's attribution rule.
Expected answers come from seed 004 and the amendments (AM-RESOURCE-URI, AM-AGGREGATE-*)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from gatespec.config import ConfigError, parse_config
from gatespec.profiles.aggregate import naming, routing
from gatespec.profiles.aggregate.naming import LISTS, Naming, namespace_answer, offer
from gatespec.profiles.aggregate.pages import CursorInvalid, Pages
from gatespec.profiles.aggregate.plugins import AuditLog, CallOutcome, Chain, ToolCall, ToolFilter
from gatespec.profiles.aggregate.routing import RoutingContext, route
from gatespec.upstream.relay import InFlight
from gatespec_surface.errors import ErrorCode, GatewayError

pytestmark = pytest.mark.anyio

SERVERS = {"filesystem": "filesystem", "database": "database", "my-server": "my_server"}


# ------------------------------------------------------------------ routing (seed 004)


def test_seed_004_scenario_1_parses_once_into_a_routing_context() -> None:
    params = {"name": "filesystem__read_file", "arguments": {"path": "/tmp/data"}}
    context, clean = route("tools/call", params, "s1", SERVERS)
    assert context == RoutingContext(
        "tools/call", "filesystem", "filesystem", "read_file", "s1", "filesystem__read_file"
    )
    assert clean == {"name": "read_file", "arguments": {"path": "/tmp/data"}}
    assert params["name"] == "filesystem__read_file"  # the client's params are not touched


def test_the_server_part_is_the_normalised_config_key() -> None:
    context, _ = route("prompts/get", {"name": "my-server__greet"}, "s", SERVERS)
    assert (context.server, context.config_key) == ("my-server", "my_server")


@pytest.mark.parametrize(
    ("method", "params", "code"),
    [
        ("tools/call", {"name": "read_file"}, ErrorCode.NOT_NAMESPACED),  # scenario 4
        ("tools/call", {"name": "filesystem__read__file"}, ErrorCode.NAME_INVALID),
        ("tools/call", {"name": "unknown__tool"}, ErrorCode.UNKNOWN_SERVER),
        ("tools/call", {"name": 7}, ErrorCode.NAME_INVALID),
        ("prompts/get", {"name": "greet"}, ErrorCode.NOT_NAMESPACED),
        ("resources/read", {"uri": "file:///tmp/x"}, ErrorCode.NOT_NAMESPACED),
        ("resources/read", {"uri": "git+ssh://host/repo"}, ErrorCode.UNKNOWN_SERVER),
        ("resources/subscribe", {"uri": "filesystem+/tmp/x"}, ErrorCode.NAME_INVALID),
    ],
)
def test_routing_failures_carry_the_spec_codes(
    method: str, params: dict[str, Any], code: ErrorCode
) -> None:
    with pytest.raises(GatewayError) as exc:
        route(method, params, "s", SERVERS)
    assert exc.value.code == code
    if code == ErrorCode.UNKNOWN_SERVER:
        assert exc.value.message.startswith("Unknown server: ")  # seed 004's wording


def test_resource_uris_and_completion_references_route_too() -> None:
    context, clean = route("resources/read", {"uri": "filesystem+file:///tmp/a.txt"}, "s", SERVERS)
    assert (context.server, clean["uri"]) == ("filesystem", "file:///tmp/a.txt")
    ref = {"type": "ref/resource", "uri": "database+db://rows/{id}"}
    context, clean = route(
        "completion/complete", {"ref": ref, "argument": {"name": "id", "value": "1"}}, "s", SERVERS
    )
    assert context.server == "database" and clean["ref"]["uri"] == "db://rows/{id}"
    ref = {"type": "ref/prompt", "name": "database__report"}
    context, clean = route("completion/complete", {"ref": ref}, "s", SERVERS)
    assert context.name == "report" and clean["ref"] == {"type": "ref/prompt", "name": "report"}


def test_route_parses_exactly_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    real = routing.parse_name
    monkeypatch.setattr(routing, "parse_name", lambda v: calls.append(v) or real(v))
    route("tools/call", {"name": "database__query"}, "s", SERVERS)
    assert calls == ["database__query"]


# ------------------------------------------------------------------ boundary translation


def test_egress_namespaces_and_lists_what_it_cannot() -> None:
    tools = [
        {"name": "read_file", "inputSchema": {"type": "object"}},
        {"name": "read__file", "inputSchema": {"type": "object"}},  # holds the separator
        {"name": "read.file", "inputSchema": {"type": "object"}},  # not a wire name
        {"name": "_private", "inputSchema": {"type": "object"}},  # leading "_"
        {"name": "no_schema"},  # a client would reject the page for it
    ]
    done = offer(LISTS["tools/list"], "fs", tools)
    assert [t["name"] for t in done.entries] == ["fs__read_file"]
    assert [u.name for u in done.unoffered] == ["read__file", "read.file", "_private", "no_schema"]
    assert all(u.server == "fs" and u.reason for u in done.unoffered)
    assert "AM-AGGREGATE-SEPARATOR" in done.unoffered[0].reason


def test_resources_and_templates_get_server_plus_uri() -> None:
    resources = [
        {"uri": "file:///a.txt", "name": "a"},
        {"uri": "notes.txt", "name": "no scheme"},
        {"uri": "file:///b.txt"},  # no name: not a valid Resource
    ]
    done = offer(LISTS["resources/list"], "fs", resources)
    assert [r["uri"] for r in done.entries] == ["fs+file:///a.txt"]
    assert {u.name for u in done.unoffered} == {"notes.txt", "file:///b.txt"}
    templates = [{"uriTemplate": "file:///{path}", "name": "any"}]
    done = offer(LISTS["resources/templates/list"], "fs", templates)
    assert done.entries == [{"uriTemplate": "fs+file:///{path}", "name": "any"}]


def test_uris_inside_answers_are_namespaced() -> None:
    result = {
        "content": [
            {"type": "text", "text": "see the link"},
            {"type": "resource_link", "uri": "file:///a.txt", "name": "a"},
            {"type": "resource", "resource": {"uri": "file:///b.txt", "text": "b"}},
        ]
    }
    out = namespace_answer("tools/call", "fs", result)
    assert [b.get("uri") for b in out["content"][:2]] == [None, "fs+file:///a.txt"]
    assert out["content"][2]["resource"]["uri"] == "fs+file:///b.txt"
    read = namespace_answer("resources/read", "fs", {"contents": [{"uri": "file:///a.txt"}]})
    assert read["contents"][0]["uri"] == "fs+file:///a.txt"
    assert naming.namespace_uri("fs", "no-scheme") == "no-scheme"


# ------------------------------------------------------------------ pages


def test_pages_walk_a_snapshot_and_reject_foreign_cursors() -> None:
    now = [0.0]
    pages = Pages(page_size=2, ttl=10, clock=lambda: now[0])
    entries = [{"name": f"t{i}"} for i in range(5)]
    first, cursor = pages.first("tools/list", entries)
    seen = list(first)
    while cursor is not None:
        page, cursor = pages.next("tools/list", cursor)
        seen += page
    assert seen == entries
    _, cursor = pages.first("tools/list", entries)
    assert cursor is not None
    with pytest.raises(CursorInvalid):
        pages.next("prompts/list", cursor)  # another list's cursor
    with pytest.raises(CursorInvalid):
        pages.next("tools/list", "not-a-cursor")
    now[0] = 11.0
    with pytest.raises(CursorInvalid, match="expired"):
        pages.next("tools/list", cursor)
    assert pages.first("tools/list", entries[:2]) == (entries[:2], None)  # one page: no cursor


def test_a_cursor_pages_only_the_identity_it_was_merged_for() -> None:
    # AM-ACCESS-NO-LEAK: a snapshot holds one identity's visible entries.
    pages = Pages(page_size=2)
    entries = [{"name": f"t{i}"} for i in range(5)]
    _, cursor = pages.first("tools/list", entries, owner="admin")
    assert cursor is not None
    with pytest.raises(CursorInvalid, match="unknown"):
        pages.next("tools/list", cursor, owner="bob")
    assert pages.next("tools/list", cursor, owner="admin")[0] == entries[2:4]


# ------------------------------------------------------------------ plugins


CONTEXT = RoutingContext("tools/call", "fs", "fs", "read_file", "s1")


async def test_the_filter_hides_and_refuses(anyio_backend: str) -> None:
    plugin = ToolFilter({"fs": (("read_*",), ("*secret*",))})
    tools = [{"name": n} for n in ("read_file", "read_secret", "write_file")]
    assert [t["name"] for t in plugin.tools("fs", tools)] == ["read_file"]
    assert plugin.tools("other", tools) == tools  # no rule: everything
    assert await plugin.before_call(CONTEXT, ToolCall("read_file")) == ToolCall("read_file")
    with pytest.raises(GatewayError) as exc:
        await plugin.before_call(CONTEXT, ToolCall("write_file"))
    assert exc.value.code == ErrorCode.TOOL_NOT_FOUND  # as absent: existence is not revealed


async def test_a_refusal_quotes_the_name_the_client_sent(anyio_backend: str) -> None:
    """A hidden tool is answered as absent, naming it as the client spelled it: the server's
    own name under gateway.unprefixed (AM-AGGREGATE-UNPREFIXED), the prefixed one otherwise."""
    plugin = ToolFilter({"fs": ((), ("write_*",))})
    unprefixed = Naming(frozenset({"fs"}), unprefixed="fs")
    for naming_, sent in (
        (unprefixed, "write_file"),
        (Naming(frozenset({"fs"})), "fs__write_file"),
    ):
        context, _ = route("tools/call", {"name": sent}, "s1", {"fs": "fs"}, naming_)
        with pytest.raises(GatewayError) as exc:
            await plugin.before_call(context, ToolCall(context.name))
        assert exc.value.code == ErrorCode.TOOL_NOT_FOUND
        assert exc.value.path == sent


async def test_the_audit_log_writes_one_line_per_call(anyio_backend: str, tmp_path: Path) -> None:
    quiet = AuditLog(tmp_path / "audit.jsonl")
    loud = AuditLog(tmp_path / "loud.jsonl", arguments=True)
    call = ToolCall("read_file", {"path": "/etc/passwd"})
    for plugin in (quiet, loud):
        await Chain([plugin]).after_call(CONTEXT, call, CallOutcome("TIMEOUT", 1.5))
    line = json.loads((tmp_path / "audit.jsonl").read_text())
    assert set(line) == {"time", "session", "server", "tool", "duration_ms", "outcome"}
    assert (line["server"], line["tool"], line["outcome"], line["duration_ms"]) == (
        "fs",
        "read_file",
        "TIMEOUT",
        1500.0,
    )
    assert "/etc/passwd" not in (tmp_path / "audit.jsonl").read_text()
    assert json.loads((tmp_path / "loud.jsonl").read_text())["arguments"] == {"path": "/etc/passwd"}


def test_plugins_are_configured_in_the_gateway_block(tmp_path: Path) -> None:
    body = {
        "mcpServers": {"fs": {"command": "x"}},
        "gateway": {
            "plugins": [
                {"type": "tool_filter", "servers": {"fs": {"deny": ["write_*"]}}},
                {"type": "audit_log", "path": "audit.jsonl"},
            ],
            "page_size": 50,
        },
    }
    config = parse_config(body, source=tmp_path / "gw.json", environ={})
    kinds = [(p.type, p.servers, p.path) for p in config.options.plugins]
    assert kinds == [
        ("tool_filter", {"fs": ((), ("write_*",))}, None),
        ("audit_log", {}, tmp_path / "audit.jsonl"),
    ]
    assert config.options.page_size == 50
    bad = {**body, "gateway": {"plugins": [{"type": "tool_filter", "servers": {"nope": {}}}]}}
    with pytest.raises(ConfigError, match="plugins"):
        parse_config(bad, environ={})
    with pytest.raises(ConfigError, match="expected one of tool_filter, audit_log"):
        parse_config({**body, "gateway": {"plugins": [{"type": "rewrite"}]}}, environ={})


# ------------------------------------------------------------------ relay attribution


class FakeRelay:
    def __init__(self, session: str, refusal: str | None = None) -> None:
        self.session = session
        self._refusal = refusal
        self.logs: list[Any] = []
        self.asked: list[str] = []
        self.wants_progress = False

    async def log(self, level: str, data: Any, logger: str | None) -> None:
        self.logs.append((level, data, logger))

    def refusal(self, method: str) -> str | None:
        return self._refusal

    async def ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(method)
        return {"roots": []}

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        pass


async def test_messages_relate_only_to_one_session_in_flight(anyio_backend: str) -> None:
    inflight = InFlight("fs")
    log = types.LoggingMessageNotificationParams(level="info", data="x", logger="srv")
    a1, a2, b = FakeRelay("a"), FakeRelay("a"), FakeRelay("b")
    with inflight.track(a1), inflight.track(a2):  # two requests of one session: the latest
        await inflight.log(log)
        assert isinstance(await inflight.roots(None), types.ListRootsResult)
    assert a2.logs == [("info", "x", "fs/srv")] and a2.asked == ["roots/list"] and a1.logs == []
    with inflight.track(a1), inflight.track(b):  # two sessions: nobody
        await inflight.log(log)
        refused = await inflight.roots(None)
    assert a1.logs == [] and b.logs == []
    assert isinstance(refused, types.ErrorData) and "2 client sessions" in refused.message
    refused = await inflight.roots(None)  # nothing in flight
    assert isinstance(refused, types.ErrorData) and "no client request" in refused.message
    with inflight.track(FakeRelay("c", refusal="no roots declared")):
        refused = await inflight.roots(None)
    assert isinstance(refused, types.ErrorData) and "no roots declared" in refused.message


# ------------------------------------------------------------------ access control


def test_list_changed_compares_only_what_an_identity_sees() -> None:
    # AM-ACCESS-NO-LEAK: bob (alpha's echo only) is told of a change only when it touches
    # what he sees; an unrestricted identity is told of every change (None).
    from gatespec.access import Identity
    from gatespec.profiles.aggregate import AggregateRuntime

    body = {
        "mcpServers": {"alpha": {"command": "x"}, "beta": {"command": "x"}},
        "gateway": {"profile": "aggregate", "access": {"identities": {
            "bob": {"tokens": ["${BOB}"], "allow": [{"tools": ["alpha:echo"]}]},
            "admin": {"tokens": ["${ADMIN}"]}}}},
    }  # fmt: skip
    environ = {"BOB": "t-bob-0001", "ADMIN": "t-admin-001"}
    runtime = AggregateRuntime.from_config(parse_config(body, environ=environ))
    bob, admin = Identity("bob"), Identity("admin")
    tools = [{"name": "alpha__echo"}, {"name": "beta__echo"}]
    runtime._last["tools/list"] = tools
    before = runtime.visible_names(bob)
    assert before is not None and len(before) == 1
    assert runtime.visible(LISTS["tools/list"], tools, bob) == [{"name": "alpha__echo"}]
    runtime._last["tools/list"] = [*tools, {"name": "beta__new"}]  # hidden from bob
    assert runtime.visible_names(bob) == before
    runtime._last["tools/list"] = [{"name": "alpha__echo", "description": "changed"}]
    assert runtime.visible_names(bob) != before
    assert runtime.visible_names(admin) is None
