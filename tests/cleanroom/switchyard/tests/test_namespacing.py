"""Boundary namespacing - expected values taken from seed 004 (Gatekit routing model)."""

import pytest

from switchyard import namespacing as ns


def test_ingress_parse_example_from_data_flow():
    # 004 "Ingress Flow": filesystem__read_file -> server=filesystem, name=read_file
    assert ns.parse_name("filesystem__read_file") == ns.Parsed("filesystem", "read_file")


def test_egress_apply_example_from_data_flow():
    # 004 "Egress Flow": read_file, write_file -> filesystem__read_file, filesystem__write_file
    assert [ns.apply_name("filesystem", n) for n in ["read_file", "write_file"]] == [
        "filesystem__read_file",
        "filesystem__write_file",
    ]


def test_scenario_3_aggregated_tools_list():
    collected = {"filesystem": ["read_file", "write_file"], "database": ["query", "insert"]}
    aggregated = [ns.apply_name(server, name) for server, names in collected.items() for name in names]
    assert aggregated == [
        "filesystem__read_file",
        "filesystem__write_file",
        "database__query",
        "database__insert",
    ]


def test_multi_server_disambiguation():
    # 004 "Multi-Server Disambiguation": the same clean name on two servers stays distinct.
    assert ns.apply_name("filesystem", "read_file") != ns.apply_name("database", "read_file")
    assert ns.parse_name("database__read_file") == ns.Parsed("database", "read_file")


def test_missing_namespace_is_rejected_with_seed_wording():
    # 004 Scenario 4 "Invalid Request" and "Missing Server Context".
    with pytest.raises(ns.NamespaceError) as info:
        ns.parse_name("read_file")
    assert info.value.kind == "missing"
    assert "No server specified for non-broadcast request" in info.value.message
    assert "Tool 'read_file' is not namespaced" in info.value.message


@pytest.mark.parametrize("bad", ["a__b__c", "__read_file", "filesystem__", "x__y__"])
def test_invalid_namespace_format(bad):
    # 004 "Parse Failures": multiple __ separators or malformed -> "Invalid namespace format".
    with pytest.raises(ns.NamespaceError) as info:
        ns.parse_name(bad)
    assert info.value.kind == "invalid"
    assert "Invalid namespace format" in info.value.message


def test_names_that_cannot_be_namespaced():
    assert ns.apply_name("fs", "bad__name") is None
    assert ns.apply_name("fs", "") is None
    # a leading underscore is fine: server keys never end with "_"
    assert ns.apply_name("fs", "_private") == "fs___private"
    assert ns.parse_name("fs___private") == ns.Parsed("fs", "_private")


def test_prompt_wording():
    with pytest.raises(ns.NamespaceError) as info:
        ns.parse_name("greet", "Prompt")
    assert "Prompt 'greet' is not namespaced" in info.value.message


def test_resource_uris():
    assert ns.apply_uri("fs", "file:///tmp/a__b") == "fs__file:///tmp/a__b"
    # URIs split at the FIRST separator, so "__" inside the URI survives.
    assert ns.parse_uri("fs__file:///tmp/a__b") == ns.Parsed("fs", "file:///tmp/a__b")
    with pytest.raises(ns.NamespaceError) as info:
        ns.parse_uri("file:///tmp/x")
    assert info.value.kind == "missing"
    assert "Resource 'file:///tmp/x' is not namespaced" in info.value.message
    with pytest.raises(ns.NamespaceError):
        ns.parse_uri("file:///a__b")  # prefix is not a possible server key
