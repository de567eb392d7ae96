"""The aggregate profile's boundary translation (seed 004 Principle 1): the only module that
knows the server__name and server+uri forms.

Egress: an upstream's tools and prompts become server__name (AM-AGGREGATE-SEPARATOR), its
resources and resource templates server+uri (AM-RESOURCE-URI), and URIs inside answers
(resource contents, resource links, embedded resources) are namespaced the same way. An entry
that cannot be namespaced is left out and returned with its reason, never dropped silently.
Ingress is `routing.route`, which parses once with `Naming.split`.

`gateway.unprefixed` names one upstream whose entries pass under their own names
(AM-AGGREGATE-UNPREFIXED): `Naming` decides, in both directions, which names are whose. An
unprefixed entry that would route to another server (it reads as that server's namespaced name)
collides and is not offered.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import mcp_types as types
from pydantic import BaseModel, ValidationError

from gatespec.upstream import tool_problem
from gatespec_surface import parsers
from gatespec_surface.errors import ErrorCode, GatewayError

__all__ = ["LISTS", "Kind", "Naming", "Offered", "Unoffered", "namespace_answer", "offer"]

Parser = Callable[[str], tuple[str, str]]


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


@dataclass(frozen=True)
class Naming:
    """Which client-facing name is whose: the configured server keys, and the one of them whose
    names are not namespaced (None: seed 004 Principle 5, every name namespaced)."""

    servers: frozenset[str] = field(default_factory=frozenset)
    unprefixed: str | None = None

    def split(
        self,
        value: str,
        uri: bool,
        parse_name: Parser = parsers.parse_aggregate_name,
        parse_uri: Parser = parsers.parse_resource_uri,
    ) -> tuple[str, str]:
        """(server key, the upstream's own name or URI) of a client-facing name, parsed once.
        With an unprefixed upstream, a value that names no other configured server is its own,
        whole; without one, GatewayError (NOT_NAMESPACED, NAME_INVALID) as the parsers say."""
        try:
            server, clean = parse_uri(value) if uri else parse_name(value)
        except GatewayError:
            if self.unprefixed is None:
                raise
            return self.unprefixed, value
        if self.unprefixed is not None and (
            server == self.unprefixed or server not in self.servers
        ):
            return self.unprefixed, value
        return server, clean

    def expose(self, uri: bool, server: str, value: str) -> str:
        """The client-facing name of `server`'s `value`: server__name, server+uri, or the value
        itself for the unprefixed upstream. GatewayError (NAME_INVALID) when the name could not
        be routed back to `server`."""
        if server != self.unprefixed:
            if uri:
                return parsers.format_resource_uri(server, value)
            return parsers.format_aggregate_name(server, value)
        owner, _ = self.split(value, uri)
        if owner != server:
            raise GatewayError(
                ErrorCode.NAME_INVALID,
                f"it collides with the namespace of server {owner!r}: a request for it would be "
                f"routed there (AM-AGGREGATE-UNPREFIXED)",
                value,
            )
        return value

    def shown(self, server: str, name: str) -> str:
        """A tool name as an error payload quotes it (no check: it may be a name a plugin
        made up, which no list offers)."""
        return name if server == self.unprefixed else f"{server}__{name}"


NAMESPACED: Final = Naming()  # every name namespaced, whatever the server keys


def offer(
    kind: Kind, server: str, entries: Iterable[Mapping[str, Any]], naming: Naming = NAMESPACED
) -> Offered:
    """One upstream's entries of `kind`, named for the client."""
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
            name = naming.expose(kind.uri, server, value)
        except GatewayError as exc:
            reason = _unsplittable(kind, value, exc) if server != naming.unprefixed else exc.message
            left.append(Unoffered(server, kind.method, value, reason))
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


def namespace_uri(server: str, uri: Any, naming: Naming = NAMESPACED) -> Any:
    """A URI in an answer, namespaced; one that cannot be is left as it is (the client sees
    the upstream's own URI, which it cannot read through the gateway)."""
    if not isinstance(uri, str):
        return uri
    try:
        return naming.expose(True, server, uri)
    except GatewayError:
        return uri


def _content_block(server: str, block: Any, naming: Naming) -> Any:
    if not isinstance(block, dict):
        return block
    kind = block.get("type")
    if kind == "resource_link":
        return {**block, "uri": namespace_uri(server, block.get("uri"), naming)}
    if kind == "resource" and isinstance(block.get("resource"), dict):
        resource = block["resource"]
        return {
            **block,
            "resource": {**resource, "uri": namespace_uri(server, resource.get("uri"), naming)},
        }
    return block


def namespace_answer(
    method: str, server: str, result: dict[str, Any], naming: Naming = NAMESPACED
) -> dict[str, Any]:
    """The URIs of an upstream's answer namespaced (AM-RESOURCE-URI); nothing else changes."""
    if method == "tools/call" and isinstance(result.get("content"), list):
        return {**result, "content": [_content_block(server, b, naming) for b in result["content"]]}
    if method == "prompts/get" and isinstance(result.get("messages"), list):
        messages = [
            {**m, "content": _content_block(server, m.get("content"), naming)}
            if isinstance(m, dict)
            else m
            for m in result["messages"]
        ]
        return {**result, "messages": messages}
    if method == "resources/read" and isinstance(result.get("contents"), list):
        contents = [
            {**c, "uri": namespace_uri(server, c.get("uri"), naming)} if isinstance(c, dict) else c
            for c in result["contents"]
        ]
        return {**result, "contents": contents}
    return result
