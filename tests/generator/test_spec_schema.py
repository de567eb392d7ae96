"""The JSON Schemas of the spec files (generated/spec-schemas/): every spec file names its schema
on its first line and validates against it; what the IR refuses, the schema refuses too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from generator import ir
from generator.errors import SpecError, SpecErrors
from generator.spec_schema import FILE_MODELS, FOLDER, GRAMMAR_NODE, modeline, schema_name

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "spec"
FILES = ["surface.yaml", *yaml.safe_load((SPEC / "surface.yaml").read_text())["files"]]


def _validator(file: str) -> jsonschema.Draft7Validator:
    schema = json.loads((ROOT / "generated" / FOLDER / schema_name(file)).read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def test_every_spec_file_has_a_schema() -> None:
    assert sorted(FILE_MODELS) == sorted(FILES)
    shipped = sorted(p.name for p in (ROOT / "generated" / FOLDER).iterdir())
    assert shipped == sorted(schema_name(f) for f in FILES)


@pytest.mark.parametrize("file", FILES)
def test_the_file_names_its_schema_and_matches_it(file: str) -> None:
    text = (SPEC / file).read_text(encoding="utf-8")
    assert text.splitlines()[0] == modeline(file)
    target = (SPEC / modeline(file).split("=", 1)[1]).resolve()
    assert target == (ROOT / "generated" / FOLDER / schema_name(file)).resolve()
    errors = list(_validator(file).iter_errors(yaml.safe_load(text)))
    assert errors == [], [e.message for e in errors[:3]]


def test_an_unknown_key_is_refused_as_the_ir_refuses_it() -> None:
    data = yaml.safe_load((SPEC / "profiles.yaml").read_text())
    data["meta_tools"]["tool_view"]["inputs"] = {}
    assert not _validator("profiles.yaml").is_valid(data)
    with pytest.raises(SpecErrors):
        ir.validate(ir.Profiles, data, "profiles.yaml")


# Grammar nodes: the schema's verdict must be the IR parser's (ir.parse_node).
NODES: list[tuple[Any, bool]] = [
    ({"lit": ":"}, True),
    ({"lit": ""}, False),
    ({"set": "a-z", "min": 0, "max": None, "as": "head"}, True),
    ({"set": "a-z", "mx": 3}, False),
    ({"set": "a-z", "as": "Head"}, False),
    ({"ref": "namespace", "as": "root"}, True),
    ({"ref": "namespace", "min": 1}, False),
    ({"opt": [{"lit": "@"}]}, True),
    ({"opt": []}, False),
    ({"rep": [{"lit": "/"}], "min": 0, "max": 6}, True),
    ({"rep": [{"lit": "/"}], "as": "x"}, False),
    ({"alt": [[{"lit": "a"}], [{"lit": "b"}]]}, True),
    ({"alt": [[{"lit": "a"}]]}, False),
    ({"group": [{"lit": "a"}], "as": "tool"}, True),
    ({"lit": "a", "set": "b"}, False),
    ("lit", False),
]


@pytest.mark.parametrize(("node", "valid"), NODES, ids=lambda v: json.dumps(v))
def test_grammar_nodes_are_judged_alike(node: Any, valid: bool) -> None:
    schema = {"$defs": {"GrammarNode": GRAMMAR_NODE}, "$ref": "#/$defs/GrammarNode"}
    assert jsonschema.Draft7Validator(schema).is_valid(node) == valid
    try:
        ir.parse_node(node, "grammars.yaml", "grammars.x.syntax[0]")
        parsed = True
    except SpecError:
        parsed = False
    assert parsed == valid
