"""Seed 000 §1 (tool_id grammar, hash, derivation, collisions) and seed 002's
infer_namespace table."""

import hashlib
import json

import pytest

from tollbooth.surface import (
    CatalogError,
    ToolIdParts,
    canonical_shape,
    check_collisions,
    format_tool_id,
    hash8,
    infer_namespace,
    make_tool_id,
    parse_tool_id,
)


# The seed's reference code (§1.3), verbatim, as the oracle.
def _canonical_shape(input_schema):
    props = sorted((input_schema.get("properties") or {}).keys())
    required = sorted(input_schema.get("required") or [])
    return json.dumps({"properties": props, "required": required}, sort_keys=True, separators=(",", ":"))


def _hash8(upstream_name, input_schema):
    canonical = upstream_name + "\n" + _canonical_shape(input_schema)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:8]


SCHEMA = {
    "type": "object",
    "properties": {"channel": {"type": "string"}, "text": {"type": "string", "description": "body"}},
    "required": ["text", "channel"],
}


@pytest.mark.parametrize(
    "tool_id,parts",
    [
        ("github:create_issue@1.4.0", ToolIdParts("github", "create_issue", "1.4.0", None)),
        ("slack:slack_send_message#3a91c7d2", ToolIdParts("slack", "slack_send_message", None, "3a91c7d2")),
        ("mcp:read_file#7b2f0e14", ToolIdParts("mcp", "read_file", None, "7b2f0e14")),
        ("weather:get@2024-05", ToolIdParts("weather", "get", "2024-05", None)),
        ("a:b@v1#deadbeef", ToolIdParts("a", "b", "v1", "deadbeef")),
        ("ns-1_x:_Name.v2-x", ToolIdParts("ns-1_x", "_Name.v2-x", None, None)),
    ],
)
def test_parse_and_round_trip_seed_examples(tool_id, parts):
    assert parse_tool_id(tool_id) == parts
    assert format_tool_id(parts) == tool_id


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "github",
        "GitHub:create_issue",  # namespace must be lower-case
        "1github:x",  # namespace starts with [a-z]
        "github:",  # empty name
        ":name",
        "ns:9name",  # name starts with [A-Za-z_]
        "ns:na me",
        "ns:name@",  # empty version
        "ns:name#ABCDEF12",  # hash8 is lower-case hex
        "ns:name#1234567",  # 7 hex chars
        "ns:name#123456789",
        "ns:name#deadbeef@1.0",  # version must precede hash
        "n" * 65 + ":x",  # namespace > 64
        "ns:" + "n" * 129,  # name > 128
        "ns:x@" + "1" * 33,  # version > 32
        "ns:a:b",
    ],
)
def test_parse_rejects_malformed(bad):
    with pytest.raises(CatalogError) as ei:
        parse_tool_id(bad)
    assert ei.value.code == "TOOL_ID_INVALID"


def test_format_rejects_ungrammatical_parts():
    with pytest.raises(CatalogError):
        format_tool_id(ToolIdParts("Bad", "x"))
    with pytest.raises(CatalogError):
        format_tool_id(ToolIdParts("ns", "x", version=""))


def test_hash8_matches_seed_reference_code():
    assert canonical_shape(SCHEMA) == '{"properties":["channel","text"],"required":["channel","text"]}'
    assert hash8("slack_send_message", SCHEMA) == _hash8("slack_send_message", SCHEMA)
    assert len(hash8("x", {})) == 8


def test_hash8_ignores_types_and_descriptions_but_not_shape():
    prose = {"type": "object", "properties": {"channel": {"type": "integer", "description": "changed"}, "text": {}},
             "required": ["channel", "text"]}
    assert hash8("t", prose) == hash8("t", SCHEMA)
    more = {"type": "object", "properties": {**SCHEMA["properties"], "thread": {}}, "required": SCHEMA["required"]}
    assert hash8("t", more) != hash8("t", SCHEMA)
    fewer_required = {**SCHEMA, "required": ["text"]}
    assert hash8("t", fewer_required) != hash8("t", SCHEMA)


def test_hash8_uses_upstream_name_before_stripping():
    # §1.3: github.create_issue and gitlab.create_issue share a shape but differ.
    assert hash8("github.create_issue", SCHEMA) != hash8("gitlab.create_issue", SCHEMA)
    assert make_tool_id("github.create_issue", SCHEMA) == f"github:create_issue#{_hash8('github.create_issue', SCHEMA)}"


def test_seed_examples_table_1_4():
    assert make_tool_id("github.create_issue", SCHEMA, version="1.4.0") == "github:create_issue@1.4.0"
    assert make_tool_id("weather.get", {}, version="2024-05") == "weather:get@2024-05"
    assert make_tool_id("slack_send_message", SCHEMA) == "slack:slack_send_message#" + _hash8("slack_send_message", SCHEMA)
    assert make_tool_id("read_file", {}) == "mcp:read_file#" + _hash8("read_file", {})


@pytest.mark.parametrize(
    "name,ns",
    [
        ("github.create_issue", "github"),
        ("filesystem/read", "filesystem"),
        ("slack_send_message", "slack"),
        ("search_database", "mcp"),
        ("read_file", "mcp"),
        ("GitHub.create_issue", "github"),  # §3.2: adapters lower-case namespaces
    ],
)
def test_infer_namespace_seed_002_table(name, ns):
    assert infer_namespace(name) == ns


def test_slash_prefix_is_stripped_and_underscore_preserved():
    assert make_tool_id("filesystem/read", {}).startswith("filesystem:read#")
    assert make_tool_id("slack_send_message", {}).startswith("slack:slack_send_message#")


def test_server_namespace_source_keeps_upstream_name():
    assert make_tool_id("read_file", {}, namespace="files") == "files:read_file#" + _hash8("read_file", {})


def test_underivable_ids_raise():
    with pytest.raises(CatalogError) as ei:
        make_tool_id("has space", {})
    assert ei.value.code == "UPSTREAM_TOOL_INVALID"
    with pytest.raises(CatalogError):
        make_tool_id("ok_name", {"properties": ["a", "b"]})  # §1.3 code cannot hash this
    with pytest.raises(CatalogError):
        make_tool_id("ok_name", None)


def test_collision_raises_catalog_error():
    check_collisions([("mcp:a#00000000", "s1/a"), ("mcp:b#00000000", "s1/b")])
    with pytest.raises(CatalogError) as ei:
        check_collisions([("mcp:a#00000000", "s1/a"), ("mcp:a#00000000", "s2/a")])
    assert ei.value.code == "TOOL_ID_COLLISION"
