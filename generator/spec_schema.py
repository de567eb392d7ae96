"""JSON Schemas of the spec files themselves, generated from the IR's pydantic models
(model_json_schema), one per file, written to generated/spec-schemas/. Each spec file names its
schema in a first-line `# yaml-language-server: $schema=...` comment, so editors with the YAML
language server validate spec/*.yaml as people type.

The one part of a spec file the IR checks by hand, not with pydantic, is a grammar's syntax
(ir.parse_node); GRAMMAR_NODE states the same node forms as JSON Schema, and
tests/generator/test_spec_schema.py holds the two to the same verdicts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, create_model

from . import ir

FOLDER = "spec-schemas"
# Draft 7: what the YAML language server validates (it only partly supports newer drafts).
# pydantic's schemas use no keyword draft 7 lacks; `$defs` is only where `$ref`s point.
DRAFT = "http://json-schema.org/draft-07/schema#"


def _file_model(name: str, **fields: Any) -> type[BaseModel]:
    definitions: dict[str, Any] = {k: (v, ...) for k, v in fields.items()}
    return create_model(name, __base__=ir.Strict, **definitions)


# Spec file -> the model its whole YAML document must match.
FILE_MODELS: dict[str, type[BaseModel]] = {
    "surface.yaml": ir.Surface,
    "grammars.yaml": _file_model(
        "GrammarsFile", grammars=dict[str, ir.GrammarSpec], name_mapping=ir.NameMapping
    ),
    "errors.yaml": _file_model("ErrorsFile", codes=dict[str, ir.ErrorCodeSpec]),
    "models.yaml": _file_model("ModelsFile", models=dict[str, ir.ModelSpec]),
    **ir.RULE_FILES,
    "profiles.yaml": ir.Profiles,
    "amendments.yaml": _file_model("AmendmentsFile", amendments=dict[str, ir.Amendment]),
    "requirements.yaml": ir.Requirements,
    "vectors.yaml": ir.Vectors,
    "seed_facts.yaml": ir.SeedFacts,
    "extensions.yaml": ir.Extensions,
}

_COUNT = {"type": "integer", "minimum": 0}
_NODES = {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/GrammarNode"}}
_CAPTURE = {"type": "string", "pattern": "^[a-z][a-z0-9_]*$"}


def _form(kind: str, value: dict[str, Any], **others: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": [kind],
        "properties": {kind: value, **others},
        "additionalProperties": False,
    }


# The node forms of grammars.yaml's syntax lists (its header comment; ir.parse_node).
GRAMMAR_NODE: dict[str, Any] = {
    "description": "One grammar node: exactly one of lit, set, ref, opt, rep, alt, group.",
    "oneOf": [
        _form("lit", {"type": "string", "minLength": 1}),
        _form(
            "set",
            {"type": "string", "minLength": 1, "description": "a regex character-class body"},
            min=_COUNT,
            max={"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]},
            **{"as": _CAPTURE},
        ),
        _form("ref", {"type": "string"}, **{"as": _CAPTURE}),
        _form("opt", _NODES),
        _form("rep", _NODES, min=_COUNT, max={"anyOf": [_COUNT, {"type": "null"}]}),
        _form("alt", {"type": "array", "minItems": 2, "items": _NODES}),
        _form("group", _NODES, **{"as": _CAPTURE}),
    ],
}


def schema_for(file: str) -> dict[str, Any]:
    model = FILE_MODELS[file]
    schema = model.model_json_schema(by_alias=True)
    defs = schema.setdefault("$defs", {})
    if "GrammarSpec" in defs:
        defs["GrammarSpec"]["properties"]["syntax"] = {**_NODES, "title": "Syntax"}
        defs["GrammarNode"] = GRAMMAR_NODE
    return {
        "$schema": DRAFT,
        "$comment": (
            f"Generated from generator/ir.py ({model.__name__}) by `make generate`; do not edit. "
            f"Validates spec/{file}."
        ),
        **schema,
        "title": f"gatespec spec/{file}",
    }


def schema_name(file: str) -> str:
    return file.removesuffix(".yaml") + ".schema.json"


def modeline(file: str) -> str:
    """The first line of spec/FILE: where editors find its schema."""
    return f"# yaml-language-server: $schema=../generated/{FOLDER}/{schema_name(file)}"


def write(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for file in FILE_MODELS:
        text = json.dumps(schema_for(file), indent=1, ensure_ascii=False, sort_keys=True)
        (out / schema_name(file)).write_text(text + "\n", encoding="utf-8")
