"""generator.support paths, wire names, server keys, aggregate names, search operations and
view selectors, bound to the real spec."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.generator.bound import (
    AGGREGATE,
    GRAMMARS,
    OPERATIONS,
    PATHS,
    RESOURCE_URIS,
    SELECTORS,
    SERVER_KEYS,
    STRATEGIES,
    WIRE,
    Code,
    Error,
)


@given(STRATEGIES.valid("path"))
def test_path_parse(value: str) -> None:
    """check grammar.path.parse: parse_path / format_path round-trip; "*" only ends a path."""
    parts = PATHS.parse(value)
    assert "*" not in parts.segments
    assert PATHS.format(parts) == value
    if parts.segments:
        assert GRAMMARS["namespace"].accepts(parts.segments[0])


@given(STRATEGIES.valid("tool_id"))
def test_wire_name_roundtrip(value: str) -> None:
    """check wire_name.roundtrip: every tool_id encodes to a strict MCP name; unshortened names
    decode back to the id, shortened ones say they need the catalog (AM-WIRE-NAME)."""
    wire = WIRE.encode(value)
    assert GRAMMARS["wire_name"].accepts(wire)
    if WIRE.is_shortened(wire):
        with pytest.raises(Error) as exc:
            WIRE.decode(wire)
        assert exc.value.code == "NAME_INVALID"
        assert wire == WIRE.encode(value)  # deterministic
    else:
        assert WIRE.decode(wire) == value


@given(STRATEGIES.valid("aggregate_name"))
def test_aggregate_roundtrip(value: str) -> None:
    """check grammar.aggregate_name.roundtrip: server__tool splits once and re-joins (seed 004)."""
    server, tool = AGGREGATE.parse(value)
    assert "__" not in server and "__" not in tool
    assert AGGREGATE.format(server, tool) == value


@given(STRATEGIES.valid("resource_uri"))
def test_resource_uri_roundtrip(value: str) -> None:
    """check grammar.resource_uri.roundtrip: server+uri splits at the first "+" and re-joins,
    and the upstream's URI comes back unchanged (AM-RESOURCE-URI)."""
    server, uri = RESOURCE_URIS.parse(value)
    assert "+" not in server and value == f"{server}+{uri}"
    assert RESOURCE_URIS.format(server, uri) == value
    assert RESOURCE_URIS.parse(RESOURCE_URIS.format(server, uri)) == (server, uri)


@given(STRATEGIES.valid("search_operation"))
def test_search_operation_roundtrip(value: str) -> None:
    """check grammar.search_operation.roundtrip: "/ns/name" splits and re-joins (seed 003)."""
    ns, name = OPERATIONS.parse(value)
    assert OPERATIONS.format(ns, name) == value


@given(STRATEGIES.valid("view_selector"))
def test_view_selector_parse(value: str) -> None:
    """check grammar.view_selector.parse: every well-formed selector parses or is rejected
    only for an inverted range or a line 0, always with ARGS_INVALID."""
    try:
        sel = SELECTORS.parse(value)
    except Error as exc:
        assert exc.code == "ARGS_INVALID"
        return
    assert sel.kind in {"all", "lines", "bytes", "json"}
    if sel.end is not None and sel.start is not None:
        assert sel.end >= sel.start


@given(st.text(max_size=40))
def test_server_key_normalise(config_key: str) -> None:
    """check server_key.normalise: any config key with a letter or digit gives a valid server key,
    which is also a valid namespace and path root (AM-NAMESPACE-FROM-CONFIG)."""
    try:
        key = SERVER_KEYS.from_config_key(config_key)
    except Error as exc:
        assert exc.code == "UNKNOWN_SERVER"
        assert not any(c.isascii() and c.isalnum() for c in config_key.lower())
        return
    assert GRAMMARS["server_key"].accepts(key) and GRAMMARS["namespace"].accepts(key)
    assert SERVER_KEYS.from_config_key(key) == key


def test_a_server_key_is_cut_without_a_trailing_dash() -> None:
    """AM-NAMESPACE-FROM-CONFIG: at most the grammar's 32 characters, no trailing "-"."""
    assert SERVER_KEYS.from_config_key("a" * 31 + "-b") == "a" * 31


def test_a_name_without_separator_is_not_namespaced() -> None:
    """Seed 004: a tool name with no "__" is NOT_NAMESPACED; other malformations NAME_INVALID."""
    with pytest.raises(Error) as exc:
        AGGREGATE.parse("read_file")
    assert exc.value.code == Code["NOT_NAMESPACED"]
    with pytest.raises(Error) as exc:
        AGGREGATE.parse("fs__read__file")
    assert exc.value.code == Code["NAME_INVALID"]


@pytest.mark.parametrize(
    ("selector", "kind", "start", "end"),
    [("lines:5", "lines", 5, 5), ("lines:5-", "lines", 5, None), ("bytes:0-9", "bytes", 0, 9)],
)
def test_selector_ranges(selector: str, kind: str, start: int, end: int | None) -> None:
    """The view_selector grammar's summary: "lines:A" one line, "lines:A-" to the end, bytes
    0-based and inclusive."""
    sel = SELECTORS.parse(selector)
    assert (sel.kind, sel.start, sel.end) == (kind, start, end)


@pytest.mark.parametrize("selector", ["lines:0-3", "lines:5-2"])
def test_selector_rejects_line_zero_and_inverted_ranges(selector: str) -> None:
    with pytest.raises(Error) as exc:
        SELECTORS.parse(selector)
    assert exc.value.code == Code["ARGS_INVALID"]


def test_an_unknown_escape_does_not_decode() -> None:
    with pytest.raises(Error, match="unknown escape"):
        WIRE.decode("github-qx")
