"""tool_id grammar, namespace inference and hash8 (seed 000 §1, seed 002 infer_namespace)."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

NAMESPACE_RE = re.compile(r"[a-z][a-z0-9_-]{0,63}")
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,127}")
VERSION_RE = re.compile(r"[A-Za-z0-9._-]{1,32}")
HASH8_RE = re.compile(r"[0-9a-f]{8}")
TOOL_ID_RE = re.compile(
    r"(?P<namespace>[a-z][a-z0-9_-]{0,63}):(?P<name>[A-Za-z_][A-Za-z0-9_.-]{0,127})"
    r"(?:@(?P<version>[A-Za-z0-9._-]{1,32}))?(?:#(?P<hash8>[0-9a-f]{8}))?"
)
TOOL_ID_MAX = 240
FALLBACK_NAMESPACE = "mcp"


class CatalogError(Exception):
    """A tool cannot be given a valid id or card, or two tools claim one id (§1.5, §2.3)."""


@dataclass(frozen=True)
class ToolIdParts:
    namespace: str
    name: str
    version: str | None = None
    hash8: str | None = None


def infer_namespace(upstream_name: str) -> tuple[str, str]:
    """Return (namespace, name) per the §1.4 derivation rule.

    The first dot or slash splits prefix from name; otherwise an underscore name with at
    least three segments lends its first segment as namespace and keeps the name verbatim;
    otherwise the `mcp` fallback keeps the name verbatim. A prefix that is not a valid
    namespace once lower-cased (§3.2: adapters lower-case namespaces) falls back too.
    """
    match = re.search(r"[./]", upstream_name)
    if match:
        prefix = upstream_name[: match.start()].lower()
        rest = upstream_name[match.end() :]
        if NAMESPACE_RE.fullmatch(prefix) and rest:
            return prefix, rest
        return FALLBACK_NAMESPACE, upstream_name
    segments = upstream_name.split("_")
    if len(segments) >= 3 and NAMESPACE_RE.fullmatch(segments[0].lower()):
        return segments[0].lower(), upstream_name
    return FALLBACK_NAMESPACE, upstream_name


def canonical_shape(input_schema: Any) -> str:
    """§1.3 canonical form; tolerant of non-dict members so one odd schema cannot crash us."""
    schema = input_schema if isinstance(input_schema, dict) else {}
    props = schema.get("properties")
    required = schema.get("required")
    return json.dumps(
        {
            "properties": sorted(props.keys()) if isinstance(props, dict) else [],
            "required": sorted(r for r in required if isinstance(r, str))
            if isinstance(required, list)
            else [],
        },
        sort_keys=True,
        separators=(",", ":"),
    )


def hash8(upstream_name: str, input_schema: Any) -> str:
    canonical = upstream_name + "\n" + canonical_shape(input_schema)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:8]


def declared_version(meta: Any) -> str | None:
    """`_meta.version` when it is a grammar-valid string; anything else counts as absent."""
    if isinstance(meta, dict):
        version = meta.get("version")
        if isinstance(version, str) and VERSION_RE.fullmatch(version):
            return version
    return None


def tool_id_for(upstream_name: str, input_schema: Any, meta: Any) -> ToolIdParts:
    namespace, name = infer_namespace(upstream_name)
    if not NAME_RE.fullmatch(name):
        raise CatalogError(
            f"upstream tool name {upstream_name!r} gives name {name!r}, outside §1.1"
        )
    version = declared_version(meta)
    # hash8 is required only when version is absent (§1.2); with a version we emit none.
    parts = ToolIdParts(
        namespace, name, version, None if version else hash8(upstream_name, input_schema)
    )
    if len(format_tool_id(parts)) > TOOL_ID_MAX:
        raise CatalogError(f"tool_id for {upstream_name!r} exceeds {TOOL_ID_MAX} characters")
    return parts


def parse_tool_id(text: str) -> ToolIdParts:
    match = TOOL_ID_RE.fullmatch(text) if isinstance(text, str) else None
    if match is None or len(text) > TOOL_ID_MAX:
        raise CatalogError(f"malformed tool_id {text!r}")
    return ToolIdParts(**match.groupdict())


def format_tool_id(parts: ToolIdParts) -> str:
    text = f"{parts.namespace}:{parts.name}"
    if parts.version:
        text += f"@{parts.version}"
    if parts.hash8:
        text += f"#{parts.hash8}"
    return text
