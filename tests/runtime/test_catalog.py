"""The catalog: namespaces, tool ids, exclusions, collisions, wire names, resolve, hydrate."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings

import gatespec.catalog as catalog_module
from gatespec.catalog import Catalog
from gatespec_surface import parsers, strategies
from gatespec_surface.errors import CatalogError, ErrorCode, GatewayError
from gatespec_surface.grammars import is_tool_id, is_wire_name
from gatespec_surface.models import HydrationResult, SelectableItem

ISSUE_SCHEMA = {
    "type": "object",
    "properties": {"owner": {"type": "string"}, "repo": {"type": "string"}},
    "required": ["owner", "repo"],
}


def as_model(item: Any) -> SelectableItem:
    """The item as the validated models.SelectableItem it mirrors."""
    fields = {f.name: getattr(item, f.name) for f in dataclasses.fields(item)}
    return SelectableItem.model_validate(
        {**fields, "tags": list(item.tags), "metadata": dict(item.metadata)}
    )


def tool(name: Any, schema: Any = None, **extra: Any) -> dict[str, Any]:
    out = {"name": name, "inputSchema": ISSUE_SCHEMA if schema is None else schema}
    out.update(extra)
    return out


def test_ids_namespaces_and_fields() -> None:
    cat = Catalog.build(
        {
            "GitHub Server": [
                tool(
                    "create_issue",
                    description="Create an issue.",
                    title="Create issue",
                    annotations={"readOnlyHint": False, "costHint": 2},
                    _meta={"version": "1.4.0"},
                ),
                tool("list_issues", annotations={"readOnlyHint": True}),
            ]
        }
    )
    assert cat.namespaces() == ["github-server"]
    create = cat.resolve("github-server:create_issue@1.4.0")
    listing = cat.resolve(parsers.make_tool_id("github-server", "list_issues", ISSUE_SCHEMA))
    assert listing.id.startswith("github-server:list_issues#")
    assert (create.side_effects, create.cost_hint, create.tags) == (True, 2.0, ())
    assert (listing.side_effects, listing.tags) == (False, ("read-only",))
    assert dict(create.metadata) == {
        "server": "GitHub Server",
        "upstream_name": "create_issue",
        "title": "Create issue",
        "annotations": {"readOnlyHint": False, "costHint": 2},
    }
    assert [i.id for i in cat.items()] == sorted(i.id for i in cat.items())
    assert len(cat) == 2 and cat.by_namespace("github-server") == cat.items()
    for item in cat.items():
        as_model(item)


def test_invalid_version_falls_back_to_hash8() -> None:
    cat = Catalog.build({"s": [tool("t", _meta={"version": "1.0 beta"})]})
    assert cat.items()[0].id == parsers.make_tool_id("s", "t", ISSUE_SCHEMA)


BAD_TOOLS: list[tuple[Any, str]] = [
    (tool(""), "name is empty"),
    (tool(7), "name must be a string"),
    ({"inputSchema": ISSUE_SCHEMA}, "name must be a string"),
    ({"name": "no_schema"}, "inputSchema is missing"),
    (tool("list_schema", ["type", "object"]), "inputSchema must be a JSON object"),
    (tool("string_schema", {"type": "string"}), "must describe an object"),
    (tool("bad_type", {"type": "object", "properties": {"a": {"type": "strin"}}}), "JSON Schema"),
    (
        tool(
            "draft7_bool_exclusive",
            {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "properties": {"n": {"type": "number", "exclusiveMinimum": True}},
            },
        ),
        "draft-07",
    ),
    (tool("bad_dialect", {"$schema": 5, "type": "object"}), "$schema"),
    (tool("bad_output", outputSchema={"type": "object", "required": "x"}), "outputSchema"),
    (tool("bad_description", description=["not", "text"]), "description"),
    ("not a tool", "JSON object"),
]


def test_malformed_tools_are_excluded_with_reasons() -> None:
    good = tool(
        "draft4_bool_exclusive",
        {
            "$schema": "http://json-schema.org/draft-04/schema#",
            "type": "object",
            "properties": {"n": {"type": "number", "minimum": 0, "exclusiveMinimum": True}},
        },
    )
    cat = Catalog.build({"srv": [good, *(t for t, _ in BAD_TOOLS), tool("fine"), tool("a b")]})
    assert sorted(i.name for i in cat.items()) == ["_a_b", "draft4_bool_exclusive", "fine"]
    assert len(cat.excluded) == len(BAD_TOOLS)
    for excluded, (_, why) in zip(cat.excluded, BAD_TOOLS, strict=True):
        assert excluded.server == "srv"
        assert why in excluded.reason, excluded


def test_namespace_collision_is_an_error() -> None:
    with pytest.raises(CatalogError, match="'My Server'.*'my_server'"):
        Catalog.build({"My Server": [tool("a")], "my_server": [tool("b")]})


def test_duplicate_tools_are_excluded_naming_both() -> None:
    """§1.5 under AM-COLLISION-EXCLUDES: loud (a reason naming both), never disambiguated, and
    charged to the colliding tools only."""
    cat = Catalog.build({"s": [tool("dup"), tool("ok"), tool("dup")], "t": [tool("dup")]})
    assert [i.metadata["upstream_name"] for i in cat.items()] == ["ok", "dup"]
    assert [i.namespace for i in cat.items()] == ["s", "t"]
    assert [(e.server, e.name) for e in cat.excluded] == [("s", "dup"), ("s", "dup")]
    for excluded in cat.excluded:
        assert excluded.reason.startswith("upstream tools collide:")
        assert excluded.reason.count("'dup'") == 2
    # the same name with another schema shape is a different id, but still one upstream name
    cat = Catalog.build({"s": [tool("dup"), tool("dup", {"type": "object"})]})
    assert len(cat) == 0 and len(cat.excluded) == 2


def test_mapped_names_that_meet_a_real_name_collide() -> None:
    """AM-NAME-MAPPING: "1st" maps to "_1st"; a real "_1st" with the same schema shape would
    take the same id only if the hash matched, which it does not (hash8 covers the upstream
    name), but both ids name the operation "/s/_1st", so both are excluded
    (AM-SEARCH-OPERATION-NAME); the same version declared on both makes the ids collide."""
    cat = Catalog.build({"s": [tool("1st"), tool("_1st")]})
    assert len(cat) == 0 and {e.name for e in cat.excluded} == {"1st", "_1st"}
    assert all("share the operation '/s/_1st'" in e.reason for e in cat.excluded)
    assert cat.by_operation("/s/_1st") is None
    versioned = {"_meta": {"version": "1"}}
    cat = Catalog.build({"s": [tool("1st", **versioned), tool("_1st", **versioned)]})
    assert len(cat) == 0 and {e.name for e in cat.excluded} == {"1st", "_1st"}


def test_names_outside_the_grammar_are_mapped_not_dropped() -> None:
    cat = Catalog.build({"s": [tool("1st-tool"), tool(".hidden"), tool("get time")]})
    assert sorted(i.name for i in cat.items()) == ["_.hidden", "_1st-tool", "_get_time"]
    assert sorted(i.metadata["upstream_name"] for i in cat.items()) == [
        ".hidden",
        "1st-tool",
        "get time",
    ]
    assert not cat.excluded


def test_same_name_in_two_servers_is_fine() -> None:
    cat = Catalog.build({"a": [tool("search")], "b": [tool("search")]})
    assert len(cat) == 2 and cat.namespaces() == ["a", "b"]


def test_wire_names_resolve_including_shortened_ones() -> None:
    long_name = "get_" + "very_long_name_" * 7
    cat = Catalog.build({"my-server": [tool(long_name), tool("short.name")]})
    for item in cat.items():
        wire = cat.wire_name(item.id)
        assert is_wire_name(wire)
        assert cat.resolve(wire) is item
        assert cat.resolve(item.id) is item
        if parsers.is_shortened_wire_name(wire):
            assert item.name == long_name
        else:
            assert parsers.decode_wire_name(wire) == item.id


def test_wire_name_collision_excludes_both(monkeypatch: pytest.MonkeyPatch) -> None:
    real = parsers.encode_wire_name
    monkeypatch.setattr(
        parsers,
        "encode_wire_name",
        lambda tool_id: "same" if ":c" not in tool_id else real(tool_id),
    )
    cat = Catalog.build({"s": [tool("a"), tool("b"), tool("c")]})
    assert [i.name for i in cat.items()] == ["c"]
    assert {e.name for e in cat.excluded} == {"a", "b"}
    assert all("share the wire name 'same'" in e.reason for e in cat.excluded)


@pytest.fixture(scope="module")
def small() -> Catalog:
    return Catalog.build({"github": [tool("create_issue", description="Create.\nAn issue.")]})


@settings(max_examples=100)
@given(strategies.valid("tool_id"))
def test_unknown_well_formed_ids_are_tool_not_found(small: Catalog, tool_id: str) -> None:
    if tool_id in small or tool_id == "github:create_issue":  # the one bare id that resolves
        return
    with pytest.raises(GatewayError) as err:
        small.resolve(tool_id)
    assert err.value.code is ErrorCode.TOOL_NOT_FOUND


@settings(max_examples=100)
@given(strategies.valid("wire_name"))
def test_unknown_wire_names_are_tool_not_found(small: Catalog, wire: str) -> None:
    if wire == small.wire_name(small.items()[0].id):
        return
    with pytest.raises(GatewayError) as err:
        small.resolve(wire)
    assert err.value.code is ErrorCode.TOOL_NOT_FOUND


@settings(max_examples=100)
@given(strategies.invalid("tool_id"))
def test_malformed_names_are_args_invalid(small: Catalog, value: str) -> None:
    if is_wire_name(value):
        return  # e.g. "github" is a well-formed wire name
    with pytest.raises(GatewayError) as err:
        small.resolve(value)
    assert err.value.code is ErrorCode.ARGS_INVALID


def test_non_string_names_are_args_invalid(small: Catalog) -> None:
    for value in (None, 3, ["github:create_issue"]):
        with pytest.raises(GatewayError) as err:
            small.resolve(value)
        assert err.value.code is ErrorCode.ARGS_INVALID


def test_hydrate_gives_the_full_description_and_a_copy_of_the_schema(small: Catalog) -> None:
    item = small.items()[0]
    result = small.hydrate(item.id)
    HydrationResult.model_validate(result)
    assert result["tool_id"] == item.id
    assert result["description"] == "Create.\nAn issue."  # untruncated, not collapsed
    assert result["input_schema"] == ISSUE_SCHEMA
    result["input_schema"]["properties"].clear()
    assert small.hydrate(item.id)["input_schema"] == ISSUE_SCHEMA
    with pytest.raises(GatewayError) as err:
        small.hydrate("github:nothing#00000000")
    assert err.value.code is ErrorCode.TOOL_NOT_FOUND
    with pytest.raises(GatewayError) as err:
        small.hydrate("not an id")
    assert err.value.code is ErrorCode.ARGS_INVALID


def test_real_catalog_builds_without_crashing(real_tools: dict[str, list[dict[str, Any]]]) -> None:
    tools = real_tools
    cat = Catalog.build(tools)
    total = sum(len(v) for v in tools.values())
    assert len(cat) + len(cat.excluded) == total
    for excluded in cat.excluded:
        print(f"excluded {excluded.server}/{excluded.name}: {excluded.reason}")
        assert excluded.reason
    # the one malformed real schema: draft-4 style boolean exclusiveMinimum
    assert [(e.server, e.name) for e in cat.excluded] == [("pdf-reader-mcp", "read_pdf")]
    for item in cat.items():
        assert is_tool_id(item.id)
        as_model(item)
        assert is_wire_name(cat.wire_name(item.id))


def test_accelerator_agrees_with_jsonschema_on_every_real_schema(
    real_tools: dict[str, list[dict[str, Any]]],
) -> None:
    """jsonschema-rs decides validity; jsonschema (which words the errors) must agree."""
    schemas = [t["inputSchema"] for ts in real_tools.values() for t in ts]
    schemas += [s for t, _ in BAD_TOOLS if isinstance(t, dict) for s in [t.get("inputSchema")]]
    for schema in schemas:
        if not isinstance(schema, dict) or not isinstance(schema.get("$schema", ""), str):
            continue
        cls = catalog_module._draft(schema.get("$schema"))
        assert catalog_module._fast_meta_validator(cls).is_valid(schema) == (
            catalog_module._meta_validator(cls).is_valid(schema)
        )


# AM-BARE-TOOL-ID: a bare namespace:name resolves to the one tool it can mean; anything else
# that names no tool is TOOL_NOT_FOUND with the closest ids.
def test_a_bare_id_resolves_to_its_one_tool(small: Catalog) -> None:
    (item,) = small.items()
    assert small.resolve("github:create_issue") is item
    assert small.hydrate("github:create_issue")["tool_id"] == item.id


@pytest.mark.parametrize(
    "guess",
    [
        "github:create_issue#00000000",  # a stale or wrong hash8: never resolved silently
        "github:create_issue@9.9",  # a version the tool does not declare
        "github__create_issue",  # the aggregate profile's spelling, a wire name here
        "github:create_isue",  # a typo
    ],
)
def test_a_near_miss_names_the_closest_id(small: Catalog, guess: str) -> None:
    (item,) = small.items()
    # hydrate takes tool ids only: the runtime resolves wire names before it hydrates
    for lookup in (small.resolve, small.hydrate) if is_tool_id(guess) else (small.resolve,):
        with pytest.raises(GatewayError) as err:
            lookup(guess)
        assert err.value.code is ErrorCode.TOOL_NOT_FOUND
        assert f"did you mean {item.id!r}?" in err.value.message


def test_a_far_miss_points_at_browsing(small: Catalog) -> None:
    with pytest.raises(GatewayError) as err:
        small.resolve("slack:post_message")
    assert err.value.code is ErrorCode.TOOL_NOT_FOUND
    assert (
        "search or browse to find one" in err.value.message
        and "did you mean" not in err.value.message
    )
