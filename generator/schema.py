"""Resolve the spec's JSON-Schema extensions (x-grammar, x-model, x-exactly-one-of, x-bound,
x-error-code) into plain JSON Schema 2020-12.

Two pattern flavours: `portable` (^(?:…)(?![\\s\\S]), exact in ECMA-262 and in Python's
re.search, for descriptors and language-neutral schemas) and `rust` (^(?:…)$, exact in the Rust
regex engine pydantic uses, which has no look-ahead).
"""

from __future__ import annotations

import copy
from typing import Any, Literal

from .grammar import Analysis
from .ir import Spec

Flavor = Literal["portable", "rust"]


class SchemaResolver:
    def __init__(self, spec: Spec, analyses: dict[str, Analysis], caps: dict[str, int | None]):
        self.spec = spec
        self.analyses = analyses
        self.caps = caps

    def grammar_schema(self, name: str, flavor: Flavor) -> dict[str, Any]:
        a = self.analyses[name]
        pattern = a.portable if flavor == "portable" else a.portable.replace(r"(?![\s\S])", "$")
        out: dict[str, Any] = {"type": "string", "pattern": pattern}
        if a.min_len > 0:
            out["minLength"] = a.min_len
        cap = self.caps[name]
        if cap is not None:
            out["maxLength"] = cap
        return out

    def resolve(self, schema: Any, flavor: Flavor, defs: dict[str, Any] | None = None) -> Any:
        """Return a resolved deep copy. x-model references land in `defs` (name -> schema)."""
        if isinstance(schema, list):
            return [self.resolve(s, flavor, defs) for s in schema]
        if not isinstance(schema, dict):
            return copy.deepcopy(schema)
        out: dict[str, Any] = {}
        for key, value in schema.items():
            if key == "x-grammar":
                names = value if isinstance(value, list) else [value]
                if len(names) == 1:
                    out.update(self.grammar_schema(names[0], flavor))
                else:
                    out["type"] = "string"
                    out["anyOf"] = [
                        {k: v for k, v in self.grammar_schema(n, flavor).items() if k != "type"}
                        for n in names
                    ]
            elif key == "x-model":
                if defs is not None and value not in defs:
                    defs[value] = {}  # placeholder first: models may refer to each other
                    defs[value] = self.model_schema(value, flavor, defs)
                out["$ref"] = f"#/$defs/{value}"
            elif key == "x-error-code":
                out["type"] = "string"
                out["enum"] = list(self.spec.error_codes)
            elif key == "x-exactly-one-of":
                props = set(schema.get("properties", {}))
                closed = schema.get("additionalProperties") is False
                if closed and props == set(value):
                    out["minProperties"] = 1
                    out["maxProperties"] = 1
                else:
                    out["oneOf"] = [{"required": [p]} for p in value]
            elif key == "x-bound":
                for keyword, ref in value.items():
                    section, _, attr = ref.partition(".")
                    out[keyword] = getattr(getattr(self.spec.budgets, section), attr)
            else:
                out[key] = self.resolve(value, flavor, defs)
        return _merge_nullable(out)

    def model_schema(self, name: str, flavor: Flavor, defs: dict[str, Any]) -> dict[str, Any]:
        m = self.spec.models[name]
        resolved = self.resolve(m.json_schema, flavor, defs)
        return {"title": name, "description": m.summary.strip(), **resolved}

    def bundle(self, names: list[str], flavor: Flavor) -> dict[str, Any]:
        """One schema document whose $defs hold the named models and all they reference."""
        defs: dict[str, Any] = {}
        for n in names:
            if n not in defs:
                defs[n] = {}
                defs[n] = self.model_schema(n, flavor, defs)
        return {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$defs": {k: defs[k] for k in sorted(defs)},
        }

    def standalone(self, name: str, flavor: Flavor) -> dict[str, Any]:
        """One model as a self-contained schema (its references in $defs)."""
        defs: dict[str, Any] = {name: {}}
        top = self.model_schema(name, flavor, defs)
        defs.pop(name)
        out = {"$schema": "https://json-schema.org/draft/2020-12/schema", **top}
        if defs:
            out["$defs"] = {k: defs[k] for k in sorted(defs)}
        return out


def _merge_nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """{anyOf: [{type: T, ...}, {type: null}]} -> {type: [T, null], ...}: the same language,
    and model generators then emit `T | None` instead of wrapper classes."""
    options = schema.get("anyOf")
    if not isinstance(options, list) or len(options) != 2 or {"type": "null"} not in options:
        return schema
    other = next(o for o in options if o != {"type": "null"})
    if not isinstance(other.get("type"), str) or "anyOf" in other or "$ref" in other:
        return schema
    merged = {k: v for k, v in schema.items() if k != "anyOf"}
    clash = set(merged) & set(other)
    if clash:
        return schema
    return {**other, **merged, "type": [other["type"], "null"]}
