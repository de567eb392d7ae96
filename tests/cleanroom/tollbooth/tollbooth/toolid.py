"""Stable tool_id format (seed 000 §1).

Grammar (§1.1)::

    tool_id   = namespace ":" name [ "@" version ] [ "#" hash8 ]
    namespace = [a-z] [a-z0-9_-]{0,63}
    name      = [A-Za-z_] [A-Za-z0-9_.-]{0,127}
    version   = [A-Za-z0-9._-]{1,32}
    hash8     = [0-9a-f]{8}
    total length <= 240
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import TOOL_ID_COLLISION, TOOL_ID_INVALID, UPSTREAM_TOOL_INVALID, CatalogError

NAMESPACE_RE = r"[a-z][a-z0-9_-]{0,63}"
NAME_RE = r"[A-Za-z_][A-Za-z0-9_.-]{0,127}"
VERSION_RE = r"[A-Za-z0-9._-]{1,32}"
HASH8_RE = r"[0-9a-f]{8}"
TOOL_ID_MAX_LEN = 240
FALLBACK_NAMESPACE = "mcp"

_TOOL_ID = re.compile(
    rf"(?P<namespace>{NAMESPACE_RE}):(?P<name>{NAME_RE})"
    rf"(?:@(?P<version>{VERSION_RE}))?(?:#(?P<hash8>{HASH8_RE}))?"
)
_NAMESPACE = re.compile(NAMESPACE_RE)
_NAME = re.compile(NAME_RE)
_VERSION = re.compile(VERSION_RE)
_HASH8 = re.compile(HASH8_RE)


@dataclass(frozen=True, slots=True)
class ToolIdParts:
    """The four fields of a tool_id (seed 000 §1.6 ``ToolIdParts``)."""

    namespace: str
    name: str
    version: str | None = None
    hash8: str | None = None


def is_namespace(s: str) -> bool:
    """True if *s* satisfies the §1.1 namespace production."""
    return isinstance(s, str) and _NAMESPACE.fullmatch(s) is not None


def is_name(s: str) -> bool:
    """True if *s* satisfies the §1.1 name production."""
    return isinstance(s, str) and _NAME.fullmatch(s) is not None


def is_version(s: str) -> bool:
    """True if *s* satisfies the §1.1 version production."""
    return isinstance(s, str) and _VERSION.fullmatch(s) is not None


def parse_tool_id(s: str) -> ToolIdParts:
    """Split a tool_id into ``(namespace, name, version, hash8)`` (seed 000 §1.6).

    Accepts exactly the §1.1 grammar (version and hash8 both optional, as the
    grammar reads).  Raises :class:`CatalogError` (code ``TOOL_ID_INVALID``) on
    malformed input, including ids longer than 240 characters.
    """
    if not isinstance(s, str):
        raise CatalogError(TOOL_ID_INVALID, f"tool_id must be a string, got {type(s).__name__}")
    if len(s) > TOOL_ID_MAX_LEN:
        raise CatalogError(TOOL_ID_INVALID, f"tool_id longer than {TOOL_ID_MAX_LEN} characters", tool_id=s)
    m = _TOOL_ID.fullmatch(s)
    if m is None:
        raise CatalogError(TOOL_ID_INVALID, f"malformed tool_id {s!r}", tool_id=s)
    return ToolIdParts(m["namespace"], m["name"], m["version"], m["hash8"])


def format_tool_id(parts: ToolIdParts) -> str:
    """Inverse of :func:`parse_tool_id` (seed 000 §1.6).

    Raises :class:`CatalogError` (``TOOL_ID_INVALID``) if *parts* would not
    produce a grammatical id, so every formatted id round-trips (§7).
    """
    s = f"{parts.namespace}:{parts.name}"
    if parts.version is not None:
        s += f"@{parts.version}"
    if parts.hash8 is not None:
        s += f"#{parts.hash8}"
    if parse_tool_id(s) != parts:
        raise CatalogError(TOOL_ID_INVALID, f"parts do not round-trip: {parts!r}", tool_id=s)
    return s


# --- §1.3 hash ---------------------------------------------------------------


def canonical_shape(input_schema: Mapping[str, Any]) -> str:
    """Seed 000 §1.3 ``_canonical_shape``: sorted top-level property names and
    sorted ``required``, as compact sorted-key JSON.  Types and descriptions
    are excluded.  Raises ``TypeError``/``AttributeError`` exactly where the
    seed's reference code would (e.g. ``properties`` not a mapping)."""
    props = sorted((input_schema.get("properties") or {}).keys())
    required = sorted(input_schema.get("required") or [])
    return json.dumps({"properties": props, "required": required}, sort_keys=True, separators=(",", ":"))


def hash8(upstream_name: str, input_schema: Mapping[str, Any]) -> str:
    """Seed 000 §1.3 ``_hash8``: first 8 hex chars of sha256 over
    ``upstream_name + "\\n" + canonical_shape(input_schema)`` (UTF-8).

    *upstream_name* is the original upstream tool name, before any namespace
    stripping."""
    canonical = upstream_name + "\n" + canonical_shape(input_schema)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:8]


# --- §1.2 / §1.4 namespace and name derivation -------------------------------


def split_upstream_name(tool_name: str) -> tuple[str, str, str | None]:
    """Apply the §1.4 name-derivation rule; returns ``(namespace, name, sep)``.

    * first ``.`` or ``/`` (whichever comes first) with a non-empty prefix that
      (lower-cased, §3.2) is a valid namespace and a non-empty remainder:
      namespace = prefix, name = remainder (prefix dropped), sep = that char;
    * otherwise an underscore name with >= 3 ``_``-segments whose first
      segment (lower-cased) is a valid namespace: namespace = first segment,
      name = the upstream name verbatim, sep = ``"_"``;
    * otherwise the ``mcp`` fallback: name = upstream name verbatim, sep = None.
    """
    for i, ch in enumerate(tool_name):
        if ch in "./":
            prefix, rest = tool_name[:i].lower(), tool_name[i + 1 :]
            if prefix and rest and is_namespace(prefix):
                return prefix, rest, ch
            break
    segments = tool_name.split("_")
    if len(segments) >= 3 and is_namespace(segments[0].lower()):
        return segments[0].lower(), tool_name, "_"
    return FALLBACK_NAMESPACE, tool_name, None


def infer_namespace(tool_name: str) -> str:
    """Namespace inferred from an upstream tool name (seed 002 table; seed 000 §1.2).

    ``github.create_issue`` -> ``github``; ``filesystem/read`` -> ``filesystem``;
    ``slack_send_message`` -> ``slack``; ``search_database`` -> ``mcp``.
    """
    return split_upstream_name(tool_name)[0]


def declared_version(tool: Mapping[str, Any]) -> str | None:
    """``_meta.version`` of an upstream tool dict, if it is a string matching
    the §1.1 version production (seed 000 §1.2); otherwise None."""
    meta = tool.get("_meta")
    if isinstance(meta, Mapping):
        v = meta.get("version")
        if isinstance(v, str) and is_version(v):
            return v
    return None


def make_tool_id(
    upstream_name: str,
    input_schema: Mapping[str, Any],
    version: str | None = None,
    namespace: str | None = None,
) -> str:
    """Build the canonical tool_id for an upstream tool (seed 000 §1.2-§1.4).

    * namespace: *namespace* if given (the "upstream server_name" source of
      §1.2; name is then the upstream name verbatim), else inferred (§1.4);
    * ``@version`` when *version* is declared, in which case no hash is added
      (matches the §1.4 examples); otherwise ``#hash8`` per §1.3.

    Raises :class:`CatalogError` (``UPSTREAM_TOOL_INVALID``) when no
    grammatical id can be derived (bad name, non-dict schema, or a schema on
    which the §1.3 reference code fails).
    """
    if not isinstance(upstream_name, str):
        raise CatalogError(UPSTREAM_TOOL_INVALID, "upstream tool name is not a string")
    if namespace is not None:
        ns, name = namespace.lower(), upstream_name
    else:
        ns, name, _sep = split_upstream_name(upstream_name)
    if not is_namespace(ns):
        raise CatalogError(UPSTREAM_TOOL_INVALID, f"invalid namespace {ns!r}", upstream_name=upstream_name)
    if not is_name(name):
        raise CatalogError(
            UPSTREAM_TOOL_INVALID, f"name {name!r} violates the tool_id name grammar", upstream_name=upstream_name
        )
    h = None
    if version is None:
        if not isinstance(input_schema, Mapping):
            raise CatalogError(UPSTREAM_TOOL_INVALID, "inputSchema is not an object", upstream_name=upstream_name)
        try:
            h = hash8(upstream_name, input_schema)
        except (TypeError, AttributeError, ValueError) as exc:
            raise CatalogError(
                UPSTREAM_TOOL_INVALID, f"cannot hash inputSchema shape: {exc}", upstream_name=upstream_name
            ) from exc
    elif not is_version(version):
        raise CatalogError(UPSTREAM_TOOL_INVALID, f"invalid version {version!r}", upstream_name=upstream_name)
    try:
        return format_tool_id(ToolIdParts(ns, name, version, h))
    except CatalogError as exc:
        raise CatalogError(UPSTREAM_TOOL_INVALID, exc.message, upstream_name=upstream_name) from exc


def check_collisions(pairs: Iterable[tuple[str, str]]) -> None:
    """Raise :class:`CatalogError` (``TOOL_ID_COLLISION``) if two distinct
    upstream keys map to the same tool_id (seed 000 §1.5).

    *pairs* are ``(tool_id, upstream_key)``."""
    seen: dict[str, str] = {}
    for tool_id, key in pairs:
        if tool_id in seen and seen[tool_id] != key:
            raise CatalogError(
                TOOL_ID_COLLISION,
                f"tool_id {tool_id!r} produced by both {seen[tool_id]!r} and {key!r}",
                tool_id=tool_id,
                upstreams=[seen[tool_id], key],
            )
        seen.setdefault(tool_id, key)
