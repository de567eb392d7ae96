"""Typed argument classes of the meta-tools, read from their input schemas (profiles.yaml).

Each meta-tool gets a frozen dataclass with one field per input property, and a nested class
for an array whose items are objects (batch's calls). A field's Python type comes from the
property's JSON type (an x-grammar is a string); a property that is optional and has no default
is `T | None`. The generated `of(mapping)` reads every field from arguments already checked
against the schema, defaults applied (a nested item's defaults are applied there, since the
checker fills the top level only). A property name that is no Python identifier is a SpecError:
the name becomes an attribute the runtime reads, so a rename breaks type checking there.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from typing import Any

from .errors import SpecError

FILE = "profiles.yaml"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_JSON_TYPES = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "object": "dict[str, Any]",
}


@dataclass(frozen=True)
class ArgField:
    name: str
    annotation: str  # the Python type, as source text
    read: str  # the expression reading it from the checked mapping `a`


@dataclass(frozen=True)
class ArgClass:
    name: str
    doc: str
    fields: tuple[ArgField, ...]


def class_name(tool: str) -> str:
    """tool_browse -> ToolBrowseArgs."""
    return "".join(part.capitalize() for part in tool.split("_")) + "Args"


def _identifier(name: str, where: str) -> str:
    if not _IDENT.fullmatch(name) or keyword.iskeyword(name):
        raise SpecError(FILE, where, f"{name!r} is not a Python identifier (it names an attribute)")
    return name


def _json_type(prop: dict[str, Any], where: str) -> str:
    if "x-grammar" in prop:
        return "str"
    kind = prop.get("type")
    if isinstance(kind, str) and kind in _JSON_TYPES:
        return _JSON_TYPES[kind]
    raise SpecError(FILE, where, f"no Python type for the JSON Schema {prop!r}")


class ArgumentClasses:
    """Builds the argument classes of the meta-tools, nested classes first."""

    def __init__(self) -> None:
        self.classes: list[ArgClass] = []

    def add(self, tool: str, schema: dict[str, Any]) -> str:
        where = f"meta_tools.{tool}.input_schema"
        return self._object(class_name(tool), f"Arguments of {tool}.", schema, where)

    def _object(self, name: str, doc: str, schema: dict[str, Any], where: str) -> str:
        required = set(schema.get("required", []))
        fields = []
        for prop_name, prop in (schema.get("properties") or {}).items():
            at = f"{where}.properties.{prop_name}"
            field = _identifier(prop_name, at)
            annotation, item_class = self._type(name, field, prop, at)
            key = repr(prop_name)
            if item_class is not None:
                read = f"tuple({item_class}.of(x) for x in a[{key}])"
            elif prop_name in required:
                read = f"a[{key}]"
            elif "default" in prop:
                read = f"a.get({key}, {prop['default']!r})"
            else:
                annotation += " | None"
                read = f"a.get({key})"
            fields.append(ArgField(field, annotation, read))
        self.classes.append(ArgClass(name, doc, tuple(fields)))
        return name

    def _type(
        self, owner: str, field: str, prop: dict[str, Any], where: str
    ) -> tuple[str, str | None]:
        """(the annotation, the nested item class when the field is an array of objects)."""
        if prop.get("type") != "array":
            return _json_type(prop, where), None
        items = prop.get("items")
        if not isinstance(items, dict):
            raise SpecError(FILE, f"{where}.items", "an array argument needs an items schema")
        if items.get("type") == "object" and "properties" in items:
            stem = owner.removesuffix("Args")
            camel = "".join(part.capitalize() for part in field.split("_"))
            item_class = self._object(
                f"{stem}{camel}Item", f"One item of {field}.", items, f"{where}.items"
            )
            if "default" in prop:
                raise SpecError(FILE, where, "an array of objects cannot have a default")
            return f"tuple[{item_class}, ...]", item_class
        return f"tuple[{_json_type(items, f'{where}.items')}, ...]", None
