"""The view-models templates receive: typed, built from the IR, and a clear SpecError naming
the file and key path when the spec lacks a value the generated code binds to."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.emit import Generator
from generator.errors import SpecError
from generator.ir import load_spec
from generator.views import Views
from tests.generator.specs import edited_spec

ROOT = Path(__file__).resolve().parents[2]


def _views(tmp_path: Path, file: str, change) -> Views:
    return Generator(load_spec(edited_spec(tmp_path, file, change)), ROOT).views


def test_views_carry_the_spec_values() -> None:
    """Each value a view holds is the one spec/ states (read here from the raw YAML)."""
    spec = load_spec(ROOT / "spec")
    views = Generator(spec, ROOT).views
    models = spec.raw["models.yaml"]["models"]
    payload = models["ErrorPayload"]["schema"]["properties"]
    card = models["ChoiceCard"]["schema"]["properties"]
    annotations = spec.raw["cards.yaml"]["annotations"]

    errors = views.errors()
    assert errors.message_max == payload["message"]["maxLength"]
    assert errors.path_max == payload["path"]["maxLength"]
    bounds = views.strategies().card
    assert bounds.tags_max == card["tags"]["maxItems"]
    assert bounds.name_max == card["name"]["maxLength"]
    assert bounds.kinds == tuple(card["kind"]["enum"])
    parsers = views.parsers()
    assert [h.hint for h in parsers.hints if h.rule.field] == [
        hint for hint, rule in annotations.items() if isinstance(rule, dict) and "field" in rule
    ]
    marker = spec.raw["grammars.yaml"]["grammars"]["cache_marker_id"]["syntax"]
    assert views.budgets().marker_id == "".join(node["lit"] for node in marker)


def test_a_missing_bound_is_named(tmp_path: Path) -> None:
    views = _views(
        tmp_path,
        "models.yaml",
        lambda d: d["models"]["ErrorPayload"]["schema"]["properties"]["message"].pop("maxLength"),
    )
    with pytest.raises(SpecError) as exc:
        views.errors()
    assert str(exc.value) == (
        "models.yaml: models.ErrorPayload.schema.properties.message.maxLength: "
        "expected an integer, got None"
    )


def test_a_card_rule_no_code_implements_is_named(tmp_path: Path) -> None:
    views = _views(
        tmp_path,
        "models.yaml",
        lambda d: d["models"]["ChoiceCard"]["rules"].update(no_emoji="No emoji anywhere."),
    )
    with pytest.raises(SpecError, match="models.ChoiceCard.rules: the card validator implements"):
        views.validators()


def test_tool_id_captures_must_be_the_parts(tmp_path: Path) -> None:
    views = _views(
        tmp_path,
        "models.yaml",
        lambda d: d["models"]["ToolIdParts"]["schema"]["properties"].update(
            extra={"type": "string"}
        ),
    )
    with pytest.raises(SpecError, match="grammars.tool_id.syntax: captures"):
        views.parsers()
