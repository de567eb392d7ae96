"""Tool ids as seed 000 §1.1-§1.4 state them, and server keys as AM-NAMESPACE-FROM-CONFIG does.

The part grammars are the spec's patterns (facts of the spec, imported); how parts join, which
suffix an id carries and how a namespace is inferred are written here from the seed's text.
"""

from __future__ import annotations

import re
from typing import Any, Final

from gatespec_conformance.oracle.seed_hash import seed_hash8
from gatespec_surface.grammars import (
    GRAMMARS,
    HASH8_PATTERN,
    NAME_PATTERN,
    NAMESPACE_PATTERN,
    SERVER_KEY_MAX_LENGTH,
    VERSION_PATTERN,
)
from gatespec_surface.requirements import AMENDMENTS

__all__ = [
    "MCP_FALLBACK",
    "id_suffix",
    "join_tool_id",
    "make_tool_id",
    "mapped_name",
    "seed_id_candidates",
    "seed_infer_namespace",
    "server_key",
    "split_tool_id",
]

MCP_FALLBACK: Final = "mcp"  # §1.4's namespace when no prefix can be inferred
_PARTS: Final = {
    "namespace": re.compile(NAMESPACE_PATTERN),
    "name": re.compile(NAME_PATTERN),
    "version": re.compile(VERSION_PATTERN),
    "hash8": re.compile(HASH8_PATTERN),
}


def _part_ok(kind: str, value: Any) -> bool:
    return isinstance(value, str) and _PARTS[kind].fullmatch(value) is not None


def join_tool_id(parts: dict[str, Any]) -> str:
    """§1.1: namespace ":" name ["@" version] ["#" hash8]."""
    out = f"{parts['namespace']}:{parts['name']}"
    if parts.get("version") is not None:
        out += f"@{parts['version']}"
    if parts.get("hash8") is not None:
        out += f"#{parts['hash8']}"
    return out


def split_tool_id(answer: Any, value: str) -> str | None:
    """Why `answer` is not the split of the tool_id `value` (None when it is): four parts,
    each matching its own production (or null for the optional two), that join back to it."""
    if not isinstance(answer, dict) or set(answer) != {"namespace", "name", "version", "hash8"}:
        return "expected an object with exactly namespace, name, version, hash8"
    for kind in ("namespace", "name"):
        if not _part_ok(kind, answer[kind]):
            return f"{kind} {answer[kind]!r} does not match its production"
    for kind in ("version", "hash8"):
        if answer[kind] is not None and not _part_ok(kind, answer[kind]):
            return f"{kind} {answer[kind]!r} does not match its production"
    if join_tool_id(answer) != value:
        return f"the parts join to {join_tool_id(answer)!r}, not the id"
    return None


def id_suffix(upstream_name: str, input_schema: dict[str, Any], version: str | None) -> str:
    """§1.2-§1.3: "@" and the declared version when it is a valid version part, else "#" and
    hash8 over the upstream name and the schema shape."""
    if version is not None and _part_ok("version", version):
        return "@" + version
    return "#" + seed_hash8(upstream_name, input_schema)


def mapped_name(upstream_name: str) -> str:
    """The name part of an upstream name: verbatim when the name grammar accepts it; under
    AM-NAME-MAPPING (when the spec has it) any other name becomes "_" and the name with every
    character outside A-Za-z0-9_.- replaced by "_", cut to the name grammar's length."""
    if _part_ok("name", upstream_name) or "AM-NAME-MAPPING" not in AMENDMENTS:
        return upstream_name
    return ("_" + re.sub("[^A-Za-z0-9_.-]", "_", upstream_name))[: GRAMMARS["name"].max_length]


def make_tool_id(
    namespace: str, upstream_name: str, input_schema: dict[str, Any], version: str | None
) -> str:
    """The id of an upstream tool under a given namespace (the name verbatim, or mapped)."""
    suffix = id_suffix(upstream_name, input_schema, version)
    return f"{namespace}:{mapped_name(upstream_name)}{suffix}"


def seed_infer_namespace(upstream_name: str) -> tuple[str, str]:
    """(namespace, name) by seed 000 §1.4 and seed 002's infer_namespace table: a dot or slash
    splits prefix from name; an underscore name of three or more segments keeps its name and
    gives its first segment; otherwise "mcp" and the name as is. Namespaces are lower-cased
    (§3.2); a prefix the namespace grammar rejects infers nothing."""
    cut = [i for i in (upstream_name.find("."), upstream_name.find("/")) if i > 0]
    if cut:
        i = min(cut)
        prefix, rest = upstream_name[:i].lower(), upstream_name[i + 1 :]
        if _part_ok("namespace", prefix) and _part_ok("name", rest):
            return prefix, rest
    segments = upstream_name.split("_")
    if len(segments) >= 3 and _part_ok("namespace", segments[0].lower()):
        return segments[0].lower(), upstream_name
    return MCP_FALLBACK, upstream_name


def seed_id_candidates(
    upstream_name: str,
    input_schema: dict[str, Any],
    version: str | None,
    server_namespace: str | None,
) -> set[str]:
    """Every id seed 000 §1.2 allows for an upstream tool: the namespace inferred from its
    name (§1.4), or the upstream's server name with the name verbatim."""
    out = set()
    suffix = id_suffix(upstream_name, input_schema, version)
    namespace, name = seed_infer_namespace(upstream_name)
    if _part_ok("name", name):
        out.add(f"{namespace}:{name}{suffix}")
    if server_namespace is not None and _part_ok("name", upstream_name):
        out.add(f"{server_namespace}:{upstream_name}{suffix}")
    return out


def server_key(config_key: str) -> dict[str, Any]:
    """AM-NAMESPACE-FROM-CONFIG, as its decision reads: lower-cased, each run of characters
    outside [a-z0-9] replaced by one "-", leading and trailing "-" dropped, "s-" in front when
    it would not start with a letter, cut to SERVER_KEY_MAX_LENGTH characters. Nothing left is
    the server_key grammar's error."""
    key = re.sub("[^a-z0-9]+", "-", config_key.lower()).strip("-")
    if not key:
        return {"error": GRAMMARS["server_key"].error.value}
    if not ("a" <= key[0] <= "z"):
        key = "s-" + key
    return {"ok": key[:SERVER_KEY_MAX_LENGTH]}
