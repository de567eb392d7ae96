"""Operation mapping for the search profile (seed 003 / ADR-041)."""

import mcp.types as types

from switchyard.config import UpstreamSpec
from switchyard.operations import (
    from_tool,
    operation_name,
    parse_operation_name,
    short_description,
)


def _tool(name="readFile", read_only=None, description="Read a file.\nMore text.", output_schema=None):
    ann = types.ToolAnnotations(read_only_hint=read_only) if read_only is not None else None
    return types.Tool(name=name, description=description, input_schema={"type": "object"},
                      output_schema=output_schema, annotations=ann)


def test_operation_name_matches_adr_example_shape():
    # ADR-041 Decision 4 example: { operation: "/fs/readFile", ... }
    assert operation_name("fs", "readFile") == "/fs/readFile"
    assert parse_operation_name("/fs/readFile") == ("fs", "readFile")


def test_operation_name_parse_rejects_malformed():
    for bad in ["fs/readFile", "/fs", "/fs/", "//x", "", None, 5]:
        assert parse_operation_name(bad) is None
    # tool names may contain "/" - only the namespace segment is split off
    assert parse_operation_name("/fs/a/b") == ("fs", "a/b")


def test_namespace_and_types():
    op = from_tool("fs", _tool(read_only=True), None)
    assert (op.name, op.namespace, op.type) == ("/fs/readFile", "fs", "query")
    assert from_tool("fs", _tool(read_only=False), None).type == "mutation"
    assert from_tool("fs", _tool(), None).type == "mutation"  # MCP default readOnlyHint=false


def test_type_override_from_config():
    spec = UpstreamSpec(key="fs", command="x", operation_types={"readFile": "subscription"})
    assert from_tool("fs", _tool(read_only=True), spec).type == "subscription"


def test_short_description():
    assert short_description("Read a file.\nMore text.", 200) == "Read a file."
    assert short_description(None, 200) == ""
    long = "x" * 300
    out = short_description(long, 50)
    assert len(out) == 50 and out.endswith("\u2026")


def test_summary_has_no_schema():
    # ADR-041 Decision 3: names + namespaces + types + short descriptions, not schemas.
    op = from_tool("fs", _tool(read_only=True, output_schema={"type": "object"}), None)
    assert set(op.summary(200)) == {"name", "namespace", "type", "description"}
