"""TypeScript types from the models' JSON Schemas (the same portable schemas MODEL_SCHEMAS
holds): one exported interface per model, `$ref`s to other models by name.

Our own emitter rather than json-schema-to-typescript: the schemas use a small subset of JSON
Schema (objects, arrays, enums, const, anyOf, nullable type lists, local $refs), generation
stays one Python process with no Node step (byte-identical output, no formatter to pin), and
the emitted text is what a person would write. A keyword outside that subset that changes the
shape is a generation error, so a richer schema cannot silently lose its type."""

from __future__ import annotations

import json
from typing import Any

from .errors import SpecError

# Keywords that constrain values without changing their TypeScript type.
_VALUE_ONLY = frozenset(
    {
        "$schema",
        "title",
        "description",
        "default",
        "pattern",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "$defs",
        "format",
    }
)
_SHAPE = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "oneOf",
        "$ref",
    }
)
_SCALARS = {
    "string": "string",
    "integer": "number",
    "number": "number",
    "boolean": "boolean",
    "null": "null",
}


def _literal(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True)


def _doc(text: str, indent: str) -> list[str]:
    words = " ".join(text.split()).replace("*/", "* /")
    return [f"{indent}/** {words} */"]


class TypeEmitter:
    def __init__(self, model: str) -> None:
        self.model = model

    def _fail(self, where: str, message: str) -> SpecError:
        return SpecError("models.yaml", f"models.{self.model}{where}", message)

    def type_of(self, schema: Any, where: str, indent: str) -> str:
        if schema is True or schema == {}:
            return "unknown"
        if not isinstance(schema, dict):
            raise self._fail(where, f"cannot type schema {schema!r}")
        unknown = set(schema) - _VALUE_ONLY - _SHAPE
        if unknown:
            raise self._fail(where, f"the TypeScript emitter does not know {sorted(unknown)}")
        if "$ref" in schema:
            ref = schema["$ref"]
            if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
                raise self._fail(where, f"only local $defs references are typed, not {ref!r}")
            return ref.removeprefix("#/$defs/")
        if "const" in schema:
            return _literal(schema["const"])
        if "enum" in schema:
            return " | ".join(_literal(v) for v in schema["enum"])
        for key in ("anyOf", "oneOf"):
            if key in schema:
                base = {k: v for k, v in schema.items() if k != key}
                options = [
                    self.type_of({**base, **o}, f"{where}.{key}", indent) for o in schema[key]
                ]
                return " | ".join(dict.fromkeys(options))
        kind = schema.get("type")
        if isinstance(kind, list):
            return " | ".join(self.type_of({**schema, "type": k}, where, indent) for k in kind)
        if kind in _SCALARS:
            return _SCALARS[kind]
        if kind == "array":
            item = self.type_of(schema.get("items", True), f"{where}.items", indent)
            return f"Array<{item}>"
        if kind == "object" or "properties" in schema:
            return self._object(schema, where, indent)
        if kind is None:
            return "unknown"
        raise self._fail(where, f"unknown type {kind!r}")

    def _object(self, schema: dict[str, Any], where: str, indent: str) -> str:
        props: dict[str, Any] = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        if not props:
            value = (
                "unknown"
                if extra in (True, None) or extra == {}
                else self.type_of(extra, where, indent)
            )
            return f"Record<string, {value}>"
        required = set(schema.get("required", []))
        inner = indent + "  "
        lines = ["{"]
        for name, sub in props.items():
            if isinstance(sub, dict) and sub.get("description"):
                lines += _doc(sub["description"], inner)
            mark = "" if name in required else "?"
            key = name if name.isidentifier() else _literal(name)
            lines.append(f"{inner}{key}{mark}: {self.type_of(sub, f'.{name}', inner)};")
        if extra not in (False, None):
            value = "unknown" if extra is True or extra == {} else self.type_of(extra, where, inner)
            lines.append(f"{inner}[key: string]: {value};")
        lines.append(indent + "}")
        return "\n".join(lines)


def model_types(schemas: dict[str, dict[str, Any]]) -> list[str]:
    """One `export interface` (or `export type`) per model, in spec order."""
    out = []
    for name, schema in schemas.items():
        emitter = TypeEmitter(name)
        body = emitter.type_of(schema, "", "")
        doc = _doc(schema["description"], "") if schema.get("description") else []
        if body.startswith("{"):
            out.append("\n".join([*doc, f"export interface {name} {body}"]))
        else:
            out.append("\n".join([*doc, f"export type {name} = {body};"]))
    return out
