"""The aggregate profile's boundary translation (seed 004 Principle 1): the only module that
knows the server__name and server+uri forms.

Egress: an upstream's tools and prompts become server__name (AM-AGGREGATE-SEPARATOR), its
resources and resource templates server+uri (AM-RESOURCE-URI), and URIs inside answers
(resource contents, resource links, embedded resources) are namespaced the same way. An entry
that cannot be namespaced is left out and returned with its reason, never dropped silently.
Ingress is `routing.route`, which parses once with the same generated parsers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import mcp_types as types
from pydantic import BaseModel, ValidationError

from gatespec.upstream import tool_problem
from gatespec_surface import parsers
from gatespec_surface.errors import GatewayError

__all__ = ["LISTS", "Kind", "Offered", "Unoffered", "namespace_answer", "offer"]


@dataclass(frozen=True)
class Kind:
    """One list the aggregate profile merges."""

    method: str  # tools/list ...
    field: str  # the result's array
    key: str  # the entry's name or URI field
    capability: str  # what an upstream must offer to be asked
    uri: bool  # the key is a URI (server+uri) rather than a name (server__name)
    model: type[BaseModel] | None = None  # checks one entry (tools: wire.tool_problem)


LISTS: Final[dict[str, Kind]] = {
    k.method: k
    for k in (
        Kind("tools/list", "tools", "name", "tools", uri=False),
        Kind("prompts/list", "prompts", "name", "prompts", uri=False, model=types.Prompt),
        Kind("resources/list", "resources", "uri", "resources", uri=True, model=types.Resource),
        Kind(
            "resources/templates/list",
            "resourceTemplates",
            "uriTemplate",
            "resources",
            uri=True,
            model=types.ResourceTemplate,
        ),
    )
}


@dataclass(frozen=True)
class Unoffered:
    """An upstream entry the profile does not offer, and why (listed by `gatespec catalog`)."""

    server: str  # the server key
    kind: str  # the list it came from (tools/list ...)
    name: str
    reason: str


@dataclass(frozen=True)
class Offered:
    """A list's entries after egress: the namespaced ones and those that could not be."""

    entries: list[dict[str, Any]]
    unoffered: list[Unoffered]


def namespaced(kind: Kind, server: str, value: str) -> str:
    """server__name or server+uri; GatewayError (NAME_INVALID) when it cannot be split back."""
    if kind.uri:
        return parsers.format_resource_uri(server, value)
    return parsers.format_aggregate_name(server, value)


def offer(kind: Kind, server: str, entries: Iterable[Mapping[str, Any]]) -> Offered:
    """One upstream's entries of `kind`, namespaced for the client."""
    out: list[dict[str, Any]] = []
    left: list[Unoffered] = []
    for entry in entries:
        value = entry.get(kind.key)
        if not isinstance(value, str):
            left.append(Unoffered(server, kind.method, repr(value), f"{kind.key} is not a string"))
            continue
        problem = malformed(kind, entry)
        if problem is not None:  # a client would reject the whole page for it
            left.append(Unoffered(server, kind.method, value, problem))
            continue
        try:
            name = namespaced(kind, server, value)
        except GatewayError as exc:
            left.append(Unoffered(server, kind.method, value, _unsplittable(kind, value, exc)))
            continue
        out.append({**entry, kind.key: name})
    return Offered(out, left)


def malformed(kind: Kind, entry: Mapping[str, Any]) -> str | None:
    """Why an entry is not a well-formed MCP entry of its kind, or None."""
    if kind.model is None:
        return tool_problem(entry)
    try:
        kind.model.model_validate(entry, by_name=False)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "entry"
        return f"not a valid {kind.model.__name__}: {where}: {first['msg']}"
    return None


def _unsplittable(kind: Kind, value: str, exc: GatewayError) -> str:
    if kind.uri:
        return f"the URI cannot be namespaced as server+uri (AM-RESOURCE-URI): {exc.message}"
    return (
        f"the name cannot be split back from server__name (AM-AGGREGATE-SEPARATOR): it must be "
        f"a wire name without '__' that neither starts nor ends with '_' ({exc.message})"
    )


_RESOURCE_URI_KIND: Final = LISTS["resources/list"]


def namespace_uri(server: str, uri: Any) -> Any:
    """A URI in an answer, namespaced; one that cannot be is left as it is (the client sees
    the upstream's own URI, which it cannot read through the gateway)."""
    if not isinstance(uri, str):
        return uri
    try:
        return namespaced(_RESOURCE_URI_KIND, server, uri)
    except GatewayError:
        return uri


def _content_block(server: str, block: Any) -> Any:
    if not isinstance(block, dict):
        return block
    kind = block.get("type")
    if kind == "resource_link":
        return {**block, "uri": namespace_uri(server, block.get("uri"))}
    if kind == "resource" and isinstance(block.get("resource"), dict):
        resource = block["resource"]
        return {
            **block,
            "resource": {**resource, "uri": namespace_uri(server, resource.get("uri"))},
        }
    return block


def namespace_answer(method: str, server: str, result: dict[str, Any]) -> dict[str, Any]:
    """The URIs of an upstream's answer namespaced (AM-RESOURCE-URI); nothing else changes."""
    if method == "tools/call" and isinstance(result.get("content"), list):
        return {**result, "content": [_content_block(server, b) for b in result["content"]]}
    if method == "prompts/get" and isinstance(result.get("messages"), list):
        messages = [
            {**m, "content": _content_block(server, m.get("content"))} if isinstance(m, dict) else m
            for m in result["messages"]
        ]
        return {**result, "messages": messages}
    if method == "resources/read" and isinstance(result.get("contents"), list):
        contents = [
            {**c, "uri": namespace_uri(server, c.get("uri"))} if isinstance(c, dict) else c
            for c in result["contents"]
        ]
        return {**result, "contents": contents}
    return result
