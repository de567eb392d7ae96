"""Tool ids (§1.1-§1.6): parse and format, hash8 over the schema shape (§1.3), the name an
upstream tool gets (AM-NAME-MAPPING) and the id an adapter emits."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any, Generic, Protocol, TypeVar

from .errors import ErrorFactory
from .grammar import GrammarInfo


def canonical_shape(input_schema: object) -> str:
    """§1.3: top-level property names and required names, sorted, as compact JSON.

    A malformed schema still hashes deterministically: a `properties` that is not an object
    counts as none, a `required` that is not a list counts as empty.
    """
    schema: Mapping[Any, Any] = input_schema if isinstance(input_schema, Mapping) else {}
    raw_props = schema.get("properties")
    raw_required = schema.get("required")
    props = sorted(str(k) for k in raw_props) if isinstance(raw_props, Mapping) else []
    required = sorted(str(r) for r in raw_required) if isinstance(raw_required, list) else []
    shape = {"properties": props, "required": required}
    return json.dumps(shape, sort_keys=True, separators=(",", ":"))


def hash8(upstream_name: str, input_schema: object) -> str:
    """§1.3: first 8 hex digits of sha256(upstream name + "\\n" + canonical shape)."""
    canonical = upstream_name + "\n" + canonical_shape(input_schema)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:8]


@dataclass(frozen=True)
class NameMapping:
    """AM-NAME-MAPPING: an upstream name the name grammar rejects gets `prefix`, and each of
    its characters outside the grammar's alphabet becomes `replacement`, cut to the grammar's
    longest name."""

    name: GrammarInfo
    prefix: str
    replacement: str

    def __post_init__(self) -> None:
        if self.name.alphabet is None or self.name.max_length is None:
            raise ValueError(f"{self.name.name} needs a finite alphabet and a length cap")

    def tool_name(self, upstream_name: str) -> str:
        """The name part of a tool_id for an upstream tool name: the name itself when the name
        grammar admits it, else the mapped form (never a dropped tool)."""
        if self.name.accepts(upstream_name):
            return upstream_name
        assert self.name.alphabet is not None
        mapped = self.prefix + "".join(
            ch if ch in self.name.alphabet else self.replacement for ch in upstream_name
        )
        return mapped[: self.name.max_length]


class Parts(Protocol):
    """The four parts of a tool_id (the generated ToolIdParts record)."""

    namespace: str
    name: str
    version: str | None
    hash8: str | None


P = TypeVar("P", bound=Parts)


class ToolIds(Generic[P]):
    """§1.6 parse_tool_id / format_tool_id over the tool_id grammar, whose captures are the
    fields of `parts`, and the id an adapter emits (§1.2-§1.4, AM-NAMESPACE-FROM-CONFIG)."""

    def __init__(
        self,
        *,
        tool_id: GrammarInfo,
        namespace: GrammarInfo,
        name: NameMapping,
        version: GrammarInfo,
        hash8: GrammarInfo,
        parts: Callable[..., P],
        error: ErrorFactory,
    ) -> None:
        self.grammar = tool_id
        self.namespace = namespace
        self.names = name
        self.version = version
        self.hash8 = hash8
        self.parts = parts
        self.error = error
        self._fields = tuple(f.name for f in fields(parts))  # type: ignore[arg-type]
        if set(self._fields) != set(tool_id.captures):
            raise ValueError(f"{tool_id.name} captures {tool_id.captures}, not {self._fields}")
        self._fullmatch = tool_id.regex.fullmatch
        self._max = tool_id.max_length if tool_id.max_length is not None else float("inf")

    def parse(self, value: object) -> P:
        """§1.6: split a tool_id into its parts; raises the tool_id grammar's error."""
        # Fast path first: ids are parsed on every call through the gateway.
        if type(value) is str and len(value) <= self._max:
            m = self._fullmatch(value)
            if m is not None:
                return self.parts(*m.group(*self._fields))
        self.grammar.match(value, self.error)  # raises, naming what was wrong
        raise AssertionError("unreachable: the tool_id grammar accepted what the fast path refused")

    def format(self, parts: P) -> str:
        """§1.6: the inverse of parse; raises when a part is malformed."""
        self.namespace.match(parts.namespace, self.error)
        self.names.name.match(parts.name, self.error)
        out = f"{parts.namespace}:{parts.name}"
        if parts.version is not None:
            self.version.match(parts.version, self.error)
            out += f"@{parts.version}"
        if parts.hash8 is not None:
            self.hash8.match(parts.hash8, self.error)
            out += f"#{parts.hash8}"
        if len(out) > self._max:
            message = f"tool_id is {len(out)} characters; the limit is {self.grammar.max_length}"
            raise self.error(self.grammar.error, message, out)
        return out

    def make(
        self,
        namespace: str,
        upstream_name: str,
        input_schema: object,
        version: str | None = None,
        digest: Callable[[str, object], str] = hash8,
    ) -> str:
        """The tool_id an adapter emits: the declared version when it is valid, else the
        `digest` (hash8) of the upstream name and schema. Raises when the namespace cannot be
        an id's."""
        name = self.names.tool_name(upstream_name)
        if version is not None and self.version.accepts(version):
            return self.format(self.parts(namespace=namespace, name=name, version=version))
        hashed = digest(upstream_name, input_schema)
        return self.format(self.parts(namespace=namespace, name=name, hash8=hashed))
