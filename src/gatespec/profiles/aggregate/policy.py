"""The access policy in the aggregate profile (AM-ACCESS-CONTROL): what it decides about for a
merged list's entry and for a routed request's target, and how a refusal names the target
without telling a hidden name from an absent one (AM-ACCESS-NO-LEAK)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from gatespec.access import AccessPolicy, Identity, Subject, forbidden
from gatespec.access.uris import UriRefused, normalise_uri
from gatespec.profiles.aggregate.naming import NAMESPACED, Kind, Naming
from gatespec.profiles.aggregate.routing import RoutingContext
from gatespec_surface.errors import ErrorCode, GatewayError

# What a restricted identity is told FORBIDDEN for instead (AM-ACCESS-NO-LEAK).
_HIDDEN_AS_FORBIDDEN: Final = frozenset({ErrorCode.UNKNOWN_SERVER, ErrorCode.TOOL_NOT_FOUND})


def entry_subject(
    kind: Kind, entry: Mapping[str, Any], naming: Naming = NAMESPACED
) -> Subject | None:
    """What the access policy decides about for a merged list's entry (a resource by its
    normalised URI, as a read of it would be checked; None for one that cannot be normalised,
    which no restricted identity sees)."""
    if kind.uri:
        server, uri = naming.split(str(entry[kind.key]), True)
        if kind.key == "uri":  # a template is no URI yet: its reads are checked one by one
            try:
                uri = normalise_uri(uri)
            except UriRefused:
                return None
        return Subject.resource(server, uri)
    server, name = naming.split(str(entry[kind.key]), False)
    if kind.method == "tools/list":
        return Subject.tool(server, f"{server}:{name}", entry.get("annotations"))
    return Subject.prompt(server, name)


def target_subject(
    context: RoutingContext, params: Mapping[str, Any], annotations: object = None
) -> Subject:
    """What the access policy decides about for a routed request's target."""
    method = context.method
    if method == "completion/complete":
        ref = params.get("ref")
        is_resource = isinstance(ref, Mapping) and ref.get("type") == "ref/resource"
        method = "resources/read" if is_resource else "prompts/get"
    if method == "tools/call":
        return Subject.tool(context.server, f"{context.server}:{context.name}", annotations)
    if method == "prompts/get":
        return Subject.prompt(context.server, context.name)
    return Subject.resource(context.server, context.name)


def hidden(exc: GatewayError, policy: AccessPolicy, identity: Identity) -> GatewayError:
    """`exc`, or FORBIDDEN for a restricted identity when `exc` says a name does not exist (it
    would tell a hidden name from an absent one)."""
    if exc.code in _HIDDEN_AS_FORBIDDEN and policy.restricted(identity):
        return forbidden(exc.path or "")
    return exc


def shown(method: str, params: Mapping[str, Any]) -> str:
    """The caller's own identifier, as FORBIDDEN quotes it."""
    if method == "completion/complete":
        ref = params.get("ref")
        value = (ref.get("uri") or ref.get("name")) if isinstance(ref, Mapping) else None
    else:
        value = params.get("uri", params.get("name"))
    return value if isinstance(value, str) else ""
