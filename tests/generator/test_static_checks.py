"""The generator refuses a broken spec with an error naming the file, the key path and the
problem: unknown keys, dangling references, unreachable caps, ambiguous alternatives,
requirements nothing covers."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.emit import Generator
from generator.errors import SpecError, SpecErrors
from generator.ir import load_spec
from tests.generator.specs import edited_spec

ROOT = Path(__file__).resolve().parents[2]


def _check(tmp_path: Path, file: str, change) -> str:
    spec = edited_spec(tmp_path, file, change)
    with pytest.raises((SpecError, SpecErrors)) as exc:
        Generator(load_spec(spec), ROOT).static_checks()
    return str(exc.value)


def test_the_real_spec_passes() -> None:
    Generator(load_spec(ROOT / "spec"), ROOT).static_checks()


def test_unknown_key_is_named_with_its_path(tmp_path: Path) -> None:
    msg = _check(tmp_path, "grammars.yaml", lambda d: d["grammars"]["hash8"].update(maxlen=9))
    assert "grammars.yaml: grammars.hash8.maxlen: unknown key" in msg


def test_unknown_key_inside_a_node(tmp_path: Path) -> None:
    msg = _check(
        tmp_path, "grammars.yaml", lambda d: d["grammars"]["namespace"]["syntax"][1].update(mx=3)
    )
    assert "grammars.yaml: grammars.namespace.syntax[1].mx: unknown key for a set node" in msg


def test_dangling_grammar_reference(tmp_path: Path) -> None:
    msg = _check(
        tmp_path,
        "profiles.yaml",
        lambda d: d["meta_tools"]["tool_view"]["input_schema"]["properties"]["handle"].update(
            {"x-grammar": "handel"}
        ),
    )
    assert (
        "profiles.yaml: meta_tools.tool_view.input_schema.properties.handle.x-grammar: unknown grammar 'handel'"
        in msg
    )


def test_dangling_error_code_and_amendment(tmp_path: Path) -> None:
    def change(d: dict) -> None:
        d["grammars"]["path"]["error"] = "PATH_BAD"
        d["grammars"]["path"]["amendments"].append("AM-NOPE")

    msg = _check(tmp_path, "grammars.yaml", change)
    assert "grammars.path.error: unknown error code 'PATH_BAD'" in msg
    assert "unknown amendment 'AM-NOPE'" in msg


def test_the_seeds_240_cap_is_refused_as_unreachable(tmp_path: Path) -> None:
    msg = _check(
        tmp_path, "grammars.yaml", lambda d: d["grammars"]["tool_id"].update(max_length=240)
    )
    assert "grammars.tool_id.max_length: cap 240 can never be reached" in msg
    assert "235" in msg


def test_cap_below_the_shortest_value(tmp_path: Path) -> None:
    msg = _check(
        tmp_path, "grammars.yaml", lambda d: d["grammars"]["artifact_handle"].update(max_length=10)
    )
    assert "below the shortest artifact_handle" in msg


def test_cap_on_a_referenced_grammar_would_not_bind(tmp_path: Path) -> None:
    msg = _check(
        tmp_path, "grammars.yaml", lambda d: d["grammars"]["namespace"].update(max_length=16)
    )
    assert "namespace is used inside" in msg and "tool_id" in msg


def test_ambiguous_alternatives(tmp_path: Path) -> None:
    def change(d: dict) -> None:
        alt = d["grammars"]["view_selector"]["syntax"][0]["alt"]
        alt.append([{"lit": "lines:"}, {"set": "a-z", "min": 1, "max": 3}])
        d["grammars"]["view_selector"]["invalid"] = []

    msg = _check(tmp_path, "grammars.yaml", change)
    assert "grammars.view_selector.syntax" in msg and "ambiguous" in msg


def test_examples_must_agree_with_the_grammar(tmp_path: Path) -> None:
    msg = _check(tmp_path, "grammars.yaml", lambda d: d["grammars"]["hash8"]["valid"].append("XYZ"))
    assert "grammars.hash8.valid[3]: 'XYZ' does not match" in msg


def test_requirement_without_a_check(tmp_path: Path) -> None:
    def change(d: dict) -> None:
        d["requirements"][0].pop("checks", None)
        d["requirements"][0].pop("pending", None)

    msg = _check(tmp_path, "requirements.yaml", change)
    assert "requirements[0] (TOOLID-GRAMMAR): no covering check" in msg


def test_requirement_naming_a_missing_check(tmp_path: Path) -> None:
    def change(d: dict) -> None:
        d["requirements"][0]["checks"] = [
            "grammar.tool_id.nonexistent",
            "tests/runtime/test_nope.py::test_x",
        ]

    msg = _check(tmp_path, "requirements.yaml", change)
    assert "unknown check id 'grammar.tool_id.nonexistent'" in msg
    assert "check file tests/runtime/test_nope.py does not exist" in msg


def test_a_preamble_over_its_allowance(tmp_path: Path) -> None:
    long = "{count} of {total} tools match; " + "pass an id to tool_execute and read it. " * 5
    msg = _check(tmp_path, "cards.yaml", lambda d: d["render"]["preamble"].update(query=long))
    assert "cards.yaml: render.preamble.query: renders in" in msg and "allowance is 32" in msg


def test_artifact_threshold_above_the_summary(tmp_path: Path) -> None:
    msg = _check(
        tmp_path, "firewall.yaml", lambda d: d["firewall"].update(text_artifact_threshold_chars=900)
    )
    assert "firewall.text_artifact_threshold_chars: 900 exceeds summary_max_chars" in msg
