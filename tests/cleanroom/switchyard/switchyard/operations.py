"""How an upstream MCP tool becomes an "operation" (seed 003).

* name:       `/{server key}/{tool name}`  - shaped like the ADR's `/fs/readFile`
* namespace:  the server key                - the first path segment (`fs`)
* type:       `query` when the tool is annotated `readOnlyHint: true`,
              otherwise `mutation` (MCP's default for readOnlyHint is false).
              A per-server `operationTypes` map in the config overrides this,
              and is the only way an operation can be a `subscription`
              (which the gateway then excludes, seed 003 Decision 2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .config import UpstreamSpec

QUERY, MUTATION, SUBSCRIPTION = "query", "mutation", "subscription"


@dataclass(frozen=True)
class Operation:
    name: str
    namespace: str
    type: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    server: str
    tool: str

    def summary(self, limit: int) -> dict[str, Any]:
        """What `search` returns: names, namespaces, types, short descriptions (Decision 3)."""
        return {
            "name": self.name,
            "namespace": self.namespace,
            "type": self.type,
            "description": short_description(self.description, limit),
        }


def operation_name(server: str, tool: str) -> str:
    return f"/{server}/{tool}"


def parse_operation_name(name: str) -> tuple[str, str] | None:
    """`/server/tool` -> (server, tool).  Server keys never contain `/`; tool
    names may, so only the first separator after the namespace counts."""
    if not isinstance(name, str) or not name.startswith("/"):
        return None
    server, sep, tool = name[1:].partition("/")
    if not server or not sep or not tool:
        return None
    return server, tool


def short_description(description: str | None, limit: int) -> str:
    """First non-empty line, cut to `limit` characters."""
    if not description:
        return ""
    line = next((ln.strip() for ln in description.splitlines() if ln.strip()), "")
    if len(line) > limit:
        line = line[: limit - 1].rstrip() + "\u2026"
    return line


def operation_type(tool: Any, spec: UpstreamSpec | None) -> str:
    if spec is not None and tool.name in spec.operation_types:
        return spec.operation_types[tool.name]
    annotations = getattr(tool, "annotations", None)
    if annotations is not None and getattr(annotations, "read_only_hint", None) is True:
        return QUERY
    return MUTATION


def from_tool(server: str, tool: Any, spec: UpstreamSpec | None) -> Operation:
    return Operation(
        name=operation_name(server, tool.name),
        namespace=server,
        type=operation_type(tool, spec),
        description=tool.description or "",
        input_schema=dict(tool.input_schema or {"type": "object"}),
        output_schema=dict(tool.output_schema) if tool.output_schema else None,
        server=server,
        tool=tool.name,
    )
