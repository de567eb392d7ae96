"""Runtime semantics with an in-memory stub upstream: §3 browse, §4.3/§4.4
hydrate+validate, §5 cache-stable browsing, §1.5 collisions, firewall/view."""

import pytest

from tollbooth.catalog import Catalog
from tollbooth.errors import GatewayError
from tollbooth.runtime import ProxyRuntime, RuntimeOptions, UpstreamFailure

S = {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}
TOOLS = {
    "gh": [
        {"name": "github.issues.create", "description": "Create an issue.", "inputSchema": S},
        {"name": "github.issues.list", "description": "List issues.", "inputSchema": {"type": "object"}},
        {"name": "github.repo_info", "description": "Repository info.", "inputSchema": {"type": "object"},
         "_meta": {"version": "2"}},
    ],
    "misc": [
        {"name": "read_file", "description": "Read a file.", "inputSchema": {"type": "object"},
         "annotations": {"readOnlyHint": True, "costHint": 0.2}},
        {"name": "bad name", "description": "Skipped.", "inputSchema": {}},
    ],
}


class Stub:
    def __init__(self, tools=TOOLS):
        self.tools = tools
        self.calls = []

    async def list_tools(self, server):
        if server == "down":
            raise UpstreamFailure("down")
        return self.tools[server]

    async def call_tool(self, server, name, arguments):
        self.calls.append((server, name, arguments))
        if name == "boom":
            raise UpstreamFailure("exploded", reason="transport_error")
        return {"content": [{"type": "text", "text": "ok " + name}], "structuredContent": {"n": 1, "items": [1, 2]}}


async def make(cache_stable=False, servers=("gh", "misc"), **kw):
    rt = ProxyRuntime(Stub(), list(servers), RuntimeOptions(cache_stable=cache_stable, **kw))
    await rt.refresh_catalog()
    return rt


@pytest.mark.anyio
async def test_catalog_ids_and_skips():
    rt = await make(servers=("gh", "misc", "down"))
    ids = sorted(rt.catalog.entries)
    assert "github:repo_info@2" in ids
    assert any(i.startswith("github:issues.create#") for i in ids)
    assert any(i.startswith("mcp:read_file#") for i in ids)
    assert len(ids) == 4  # 'bad name' skipped, 'down' contributes nothing
    assert rt.catalog.problems


@pytest.mark.anyio
async def test_browse_paths():
    rt = await make()
    root = rt.browse({"path": "/"})
    assert [c.id for c in root] == ["/github", "/mcp"] and all(c.kind == "internal" for c in root)
    gh = rt.browse({"path": "/github"})
    assert [c.id for c in gh][0] == "/github/issues"
    assert any(c.id == "github:repo_info@2" for c in gh)
    issues = rt.browse({"path": "/github/issues"})
    assert rt.browse({"path": "/github/issues/*"}) == issues
    assert len(issues) == 2 and all(c.kind == "tool" for c in issues)
    leaf = rt.browse({"path": "/github/issues/create"})
    assert len(leaf) == 1 and leaf[0].id.startswith("github:issues.create#")
    for path, code in [("/nope", "PATH_NOT_FOUND"), ("/github/issues/zzz", "PATH_NOT_FOUND"), ("/github/", "PATH_INVALID")]:
        with pytest.raises(GatewayError) as ei:
            rt.browse({"path": path})
        assert ei.value.code == code and ei.value.path == path


@pytest.mark.anyio
@pytest.mark.parametrize("args", [{}, {"query": "x", "path": "/"}, {"query": 3}, {"path": None, "query": None},
                                  {"query": "x", "extra": 1}])
async def test_browse_args_invalid(args):
    rt = await make()
    with pytest.raises(GatewayError) as ei:
        rt.browse(args)
    assert ei.value.code == "ARGS_INVALID"


@pytest.mark.anyio
async def test_query_scores_and_order():
    rt = await make()
    cards = rt.browse({"query": "create issue"})
    assert cards[0].id.startswith("github:issues.create#")
    assert all(c.score is not None for c in cards)
    assert [c.score for c in cards] == sorted((c.score for c in cards), reverse=True)


@pytest.mark.anyio
async def test_cache_stable_session():
    rt = await make(cache_stable=True)
    first = rt.browse({"query": "issue"})
    assert "__cache_breakpoint__" not in [c.id for c in first]  # §5.3 first browse
    assert [c.id for c in first] == sorted(c.id for c in first)
    frozen_scores = {c.id: c.score for c in first}
    second = rt.browse({"query": "create issue read file"})
    ids = [c.id for c in second]
    assert "__cache_breakpoint__" in ids
    k = ids.index("__cache_breakpoint__")
    assert set(ids[:k]) <= set(frozen_scores) and ids[:k] == sorted(ids[:k])
    assert ids[k + 1:] == sorted(ids[k + 1:]) and not set(ids[k + 1:]) & set(frozen_scores)
    for c in second[:k]:
        assert c.score == frozen_scores[c.id]  # frozen on first sighting
    third = rt.browse({"query": "issue"})
    assert "__cache_breakpoint__" not in [c.id for c in third]  # all seen


@pytest.mark.anyio
async def test_hydrate_enters_seen_set_only_on_success():
    rt = await make(cache_stable=True)
    with pytest.raises(GatewayError) as ei:
        rt.hydrate("mcp:nothing#00000000")
    assert ei.value.code == "HYDRATE_FAILED" and not rt.seen
    tid = next(i for i in rt.catalog.entries if i.startswith("mcp:read_file"))
    h = rt.hydrate(tid)
    assert h["inputSchema"] == {"type": "object"} and tid in rt.seen
    out = rt.browse({"query": "read file issue"})
    assert out[0].id == tid and out[1].id == "__cache_breakpoint__"


@pytest.mark.anyio
async def test_validation_never_reaches_upstream():
    rt = await make()
    tid = next(i for i in rt.catalog.entries if i.startswith("github:issues.create"))
    with pytest.raises(GatewayError) as ei:
        await rt.call(tid, {"title": 5})
    assert ei.value.code == "ARGS_INVALID" and ei.value.details["errors"][0]["path"] == "/title"
    with pytest.raises(GatewayError):
        await rt.call(tid, "not an object")
    assert rt.upstream.calls == []
    raw = await rt.call(tid, {"title": "t"})
    assert raw["content"][0]["text"] == "ok github.issues.create"
    assert rt.upstream.calls == [("gh", "github.issues.create", {"title": "t"})]


@pytest.mark.anyio
async def test_percent_encoded_tool_id_accepted():
    rt = await make()
    tid = next(i for i in rt.catalog.entries if i.startswith("mcp:read_file"))
    assert rt.hydrate(tid.replace(":", "%3A").replace("#", "%23"))["tool_id"] == tid
    with pytest.raises(GatewayError) as ei:
        rt.hydrate("not an id")
    assert ei.value.code == "ARGS_INVALID"


@pytest.mark.anyio
async def test_envelope_and_view():
    rt = await make()
    tid = next(i for i in rt.catalog.entries if i.startswith("mcp:read_file"))
    env = await rt.execute_enveloped(tid, {})
    assert env.status == "ok" and "n: 1" in env.facts and "items: [1,2]" in env.facts
    handle = env.artifacts[0].handle
    assert handle.endswith(":structured_content")
    assert rt.view(handle, "/items/1")["content"] == "2"
    assert rt.view(handle, "keys")["content"] == '["n","items"]'
    assert rt.view(handle)["content"] == '{"n":1,"items":[1,2]}'
    for sel in ("/missing", "bogus"):
        with pytest.raises(GatewayError) as ei:
            rt.view(handle, sel)
        assert ei.value.code == "VIEW_FAILED"
    with pytest.raises(GatewayError) as ei:
        rt.view("mcp:nope")
    assert ei.value.code == "VIEW_FAILED"


@pytest.mark.anyio
async def test_upstream_failure_maps_to_upstream_error():
    stub = Stub({"s": [{"name": "boom", "inputSchema": {"type": "object"}}]})
    rt = ProxyRuntime(stub, ["s"])
    await rt.refresh_catalog()
    (tid,) = rt.catalog.entries
    with pytest.raises(GatewayError) as ei:
        await rt.call(tid, {})
    assert ei.value.code == "UPSTREAM_ERROR" and ei.value.path == tid


def test_collision_withholds_both():
    same = [{"name": "read_file", "inputSchema": {"type": "object"}}]
    cat = Catalog.from_upstreams({"a": same, "b": same})
    assert cat.entries == {}
    assert cat.problems[0]["code"] == "TOOL_ID_COLLISION"
    cat2 = Catalog.from_upstreams({"a": same, "b": same}, {"a": "a", "b": "b"})
    assert sorted(i.split(":")[0] for i in cat2.entries) == ["a", "b"]


def test_annotation_mapping():
    cat = Catalog.from_upstreams(TOOLS)
    card = next(e.card for e in cat.entries.values() if e.upstream_name == "read_file")
    assert card.tags == ("read-only",) and card.side_effects is False and card.cost_hint == 0.2
