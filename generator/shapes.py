"""Typed reading of the spec's object schemas (models.yaml, meta-tool inputs), so that nothing
downstream digs through JSON Schema by hand: property names in order, which are required,
which grammars bind each, its literal keywords, and x-exactly-one-of. A value asked for and
not there is a SpecError naming the file and key path."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import SpecError


@dataclass(frozen=True)
class PropertyShape:
    name: str
    required: bool
    grammars: tuple[str, ...]  # x-grammar, directly or in an anyOf alternative
    keywords: dict[str, Any]  # its JSON-Schema keywords as written


@dataclass(frozen=True)
class ObjectShape:
    file: str
    where: str  # key path of the schema inside `file`
    properties: dict[str, PropertyShape]
    exactly_one: tuple[str, ...]

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.properties.values() if p.required)

    def prop(self, name: str) -> PropertyShape:
        if name not in self.properties:
            raise SpecError(self.file, f"{self.where}.properties", f"no property {name!r}")
        return self.properties[name]

    def integer(self, name: str, keyword: str) -> int:
        """A literal integer keyword of a property (maxLength, maxItems, ...)."""
        value = self.prop(name).keywords.get(keyword)
        if not isinstance(value, int) or isinstance(value, bool):
            where = f"{self.where}.properties.{name}.{keyword}"
            raise SpecError(self.file, where, f"expected an integer, got {value!r}")
        return value

    def strings(self, name: str, keyword: str) -> tuple[str, ...]:
        """A literal list of strings (enum)."""
        value = self.prop(name).keywords.get(keyword)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            where = f"{self.where}.properties.{name}.{keyword}"
            raise SpecError(self.file, where, f"expected a list of strings, got {value!r}")
        return tuple(value)


def _grammars(schema: dict[str, Any]) -> tuple[str, ...]:
    value = schema.get("x-grammar")
    if value is None:
        found: list[str] = []
        for option in schema.get("anyOf", []):
            found += _grammars(option) if isinstance(option, dict) else []
        return tuple(found)
    return tuple(value) if isinstance(value, list) else (value,)


def object_shape(schema: dict[str, Any], file: str, where: str) -> ObjectShape:
    required = set(schema.get("required", []))
    properties = {
        name: PropertyShape(name, name in required, _grammars(prop), dict(prop))
        for name, prop in (schema.get("properties") or {}).items()
    }
    return ObjectShape(file, where, properties, tuple(schema.get("x-exactly-one-of", [])))
