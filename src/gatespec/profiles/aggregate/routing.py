"""The single parse point of the aggregate profile (seed 004 Principles 2 and 4).

`route` parses the one namespaced identifier of a request (a tool or prompt name, a resource
URI, a completion reference) exactly once, at ingress, into a `RoutingContext` plus the clean
parameters the upstream expects. Plugins and handlers receive both; nothing after this point
reads a server out of a name again, so a plugin that rewrites a name cannot redirect a request.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from gatespec.profiles.aggregate.naming import NAMESPACED, Naming
from gatespec_surface import parsers
from gatespec_surface.errors import ErrorCode, GatewayError

__all__ = ["ROUTED_METHODS", "RoutingContext", "names_uri", "rename", "route"]

# The parsers `route` uses, looked up at each call (the routing tests count the calls).
parse_name = parsers.parse_aggregate_name
parse_uri = parsers.parse_resource_uri


@dataclass(frozen=True)
class RoutingContext:
    """Where one request goes, and for whom; fixed at ingress."""

    method: str
    server: str  # the server key the identifier named
    config_key: str  # the upstream's key in the configuration (the pool's)
    name: str  # the clean name or URI parsed at ingress (what the upstream knows it by)
    session: str
    asked: str = ""  # the identifier as the client sent it (what an error quotes back)


def _name(params: Mapping[str, Any]) -> tuple[object, str]:
    return params.get("name"), "name"


def _uri(params: Mapping[str, Any]) -> tuple[object, str]:
    return params.get("uri"), "uri"


# method -> (where its identifier is, whether it is a URI)
ROUTED_METHODS: Final = {
    "tools/call": (_name, False),
    "prompts/get": (_name, False),
    "resources/read": (_uri, True),
    "resources/subscribe": (_uri, True),
    "resources/unsubscribe": (_uri, True),
}


def _identifier(method: str, params: Mapping[str, Any]) -> tuple[object, bool, str]:
    """(the namespaced identifier, is it a URI, where it sits in params)."""
    if method == "completion/complete":
        ref = params.get("ref")
        if isinstance(ref, Mapping) and ref.get("type") == "ref/resource":
            return ref.get("uri"), True, "ref.uri"
        return (ref.get("name") if isinstance(ref, Mapping) else None), False, "ref.name"
    locate, is_uri = ROUTED_METHODS[method]
    value, where = locate(params)
    return value, is_uri, where


def _replace(params: Mapping[str, Any], where: str, clean: str) -> dict[str, Any]:
    out = dict(params)
    if where.startswith("ref."):
        out["ref"] = {**params["ref"], where[4:]: clean}
    else:
        out[where] = clean
    return out


def names_uri(method: str, params: Mapping[str, Any]) -> bool:
    """Whether the request's identifier is a resource URI (or a resource completion ref)."""
    return _identifier(method, params)[1]


def rename(
    context: RoutingContext, params: Mapping[str, Any], clean: str
) -> tuple[RoutingContext, dict[str, Any]]:
    """The routing context and clean params of `route` with the upstream identifier replaced
    by `clean` (a normalised resource URI): what is checked is what goes upstream."""
    _, _, where = _identifier(context.method, params)
    return dataclasses.replace(context, name=clean), _replace(params, where, clean)


def route(
    method: str,
    params: Mapping[str, Any],
    session: str,
    servers: Mapping[str, str],
    naming: Naming = NAMESPACED,
) -> tuple[RoutingContext, dict[str, Any]]:
    """Parse the request's identifier once: (its routing context, the params with the clean
    identifier in place). `servers` maps each configured server key to its config key; with
    `naming.unprefixed`, a name of no other server is that upstream's own.

    GatewayError: NOT_NAMESPACED (no server part), NAME_INVALID (malformed), UNKNOWN_SERVER
    (a server key that is not configured)."""
    value, is_uri, where = _identifier(method, params)
    if not isinstance(value, str):
        raise GatewayError(ErrorCode.NAME_INVALID, f"{method}: {where} is missing or not a string")
    server, clean = naming.split(value, is_uri, parse_name, parse_uri)
    config_key = servers.get(server)
    if config_key is None:  # seed 004's wording
        raise GatewayError(
            ErrorCode.UNKNOWN_SERVER,
            f"Unknown server: {server}",
            value,
            {"server": server, "servers": sorted(servers)},
        )
    context = RoutingContext(method, server, config_key, clean, session, value)
    return context, _replace(params, where, clean)
