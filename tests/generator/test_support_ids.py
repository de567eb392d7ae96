"""generator.support.ids: tool ids parse and format (§1.6), hash8 over the schema shape
(§1.3), the mapped name of an upstream tool (AM-NAME-MAPPING), bound to the real spec."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from generator.support.ids import canonical_shape, hash8
from tests.generator.bound import STRATEGIES, TOOL_IDS, Code, Error, ToolIdParts


@given(STRATEGIES.valid("tool_id"))
def test_tool_id_roundtrip(value: str) -> None:
    """check grammar.tool_id.roundtrip: format_tool_id(parse_tool_id(x)) == x (§1.6)."""
    parts = TOOL_IDS.parse(value)
    assert TOOL_IDS.format(parts) == value
    assert value.startswith(parts.namespace + ":" + parts.name)


@given(
    STRATEGIES.valid("namespace"),
    STRATEGIES.valid("name"),
    st.dictionaries(st.text(max_size=8), st.just({}), max_size=4),
)
def test_make_tool_id(namespace: str, name: str, props: dict) -> None:
    """check hash8.emitted: an adapter's id carries hash8 when no version is declared, and it
    is the §1.3 hash of the upstream name and schema shape."""
    schema = {"type": "object", "properties": props, "required": sorted(props)[:1]}
    parts = TOOL_IDS.parse(TOOL_IDS.make(namespace, name, schema))
    assert parts.hash8 == hash8(name, schema) and parts.version is None
    reordered = {"required": schema["required"], "properties": dict(reversed(list(props.items())))}
    assert hash8(name, reordered) == parts.hash8


@given(STRATEGIES.valid("name"), st.text(min_size=1, max_size=60))
def test_hash8_ignores_prose(name: str, prose: str) -> None:
    """check hash8.shape_only: descriptions and types never change hash8 (§1.3)."""
    a = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    b = {
        "type": "object",
        "properties": {"q": {"type": "integer", "description": prose}},
        "required": ["q"],
    }
    assert hash8(name, a) == hash8(name, b)
    assert hash8(name, a) != hash8(name + "x", a)


@pytest.mark.parametrize(
    "schema",
    [None, "not a schema", {"properties": ["a"]}, {"required": "a"}, {"properties": 3}],
)
def test_a_malformed_schema_has_the_empty_shape(schema: object) -> None:
    """§1.3 reads only property and required names; what is not an object or a list of them
    counts as none (a malformed upstream schema must not crash the catalog)."""
    assert canonical_shape(schema) == '{"properties":[],"required":[]}'


def test_canonical_shape_sorts_names() -> None:
    shape = canonical_shape({"properties": {"b": {}, "a": {}}, "required": ["b", "a"]})
    assert shape == '{"properties":["a","b"],"required":["a","b"]}'


@pytest.mark.parametrize(
    ("upstream", "name"),
    [
        ("create_issue", "create_issue"),  # the name grammar admits it: verbatim
        ("1st-tool", "_1st-tool"),  # a leading digit: the prefix
        ("get time", "_get_time"),  # a character outside A-Za-z0-9_.-: replaced
        ("naïve", "_na_ve"),
    ],
)
def test_names_outside_the_grammar_are_mapped(upstream: str, name: str) -> None:
    """AM-NAME-MAPPING's decision: "_" then the name with every character outside
    A-Za-z0-9_.- replaced by "_"."""
    assert TOOL_IDS.names.tool_name(upstream) == name


def test_a_mapped_name_is_cut_to_the_longest_name() -> None:
    """AM-NAME-MAPPING: cut to the name grammar's 128 characters."""
    assert TOOL_IDS.names.tool_name("-" * 300) == "_" + "-" * 127


def test_an_invalid_version_falls_back_to_hash8() -> None:
    tool_id = TOOL_IDS.make("mcp", "read_file", {}, version="1.0 beta")
    assert TOOL_IDS.parse(tool_id).version is None
    assert TOOL_IDS.make("mcp", "read_file", {}, version="1.0") == "mcp:read_file@1.0"


@pytest.mark.parametrize("value", ["github", "Github:x", "a:b\n", 42, None, "a:" + "b" * 240])
def test_parse_rejects_with_the_grammar_code(value: object) -> None:
    with pytest.raises(Error) as exc:
        TOOL_IDS.parse(value)
    assert exc.value.code == Code["CATALOG_ERROR"]


def test_format_refuses_a_malformed_part() -> None:
    with pytest.raises(Error, match="namespace"):
        TOOL_IDS.format(ToolIdParts(namespace="Bad", name="x"))
    with pytest.raises(Error, match="hash8"):
        TOOL_IDS.format(ToolIdParts(namespace="a", name="x", hash8="ABCDEF01"))


def test_the_longest_parts_make_an_id_at_the_cap() -> None:
    """AM-TOOLID-CAP: the longest parts (64+1+128+1+32+1+8) make a 235-character id."""
    parts = ToolIdParts(namespace="n" * 64, name="x" * 128, version="v" * 32, hash8="0" * 8)
    assert len(TOOL_IDS.format(parts)) == 235


def test_make_takes_the_digest_it_is_given() -> None:
    """The generated make_tool_id passes parsers.hash8 at each call, so a replaced one (the
    conformance kit's hash8 mutant) is the one the ids carry."""
    assert TOOL_IDS.make("a", "b", {}, digest=lambda name, schema: "0" * 8) == "a:b#00000000"
