"""Amendment hygiene (issue 20 item 4): an amendment nothing refers to fails generation, and a
vector whose expectation rests on an amendment names it."""

from __future__ import annotations

from pathlib import Path

from generator.checks import amendment_references, kit_amendments, unreferenced_amendments
from generator.emit import Generator
from generator.ir import load_spec
from generator.mutations import Mutation, _apply, run
from generator.vectors import build_cases

ROOT = Path(__file__).resolve().parents[2]


def _spec_and_cases():  # type: ignore[no-untyped-def]
    spec = load_spec(ROOT / "spec")
    return spec, build_cases(spec, Generator(spec, ROOT).analyses)


def test_every_amendment_of_the_spec_is_referenced() -> None:
    spec, cases = _spec_and_cases()
    assert unreferenced_amendments(spec, cases, ROOT) == []


def test_an_unreferenced_amendment_fails_generation() -> None:
    """AM-SEARCH-OPERATION-NAME is referenced only by the search_operation grammar it decides
    (the kit names it nowhere); without that reference, generation names the amendment."""
    outcome = run(
        Mutation(
            "unreferenced",
            "",
            "grammars.yaml",
            _apply("grammars.search_operation.amendments", lambda _: []),
            "x",
        ),
        ROOT / "spec",
        ROOT,
    )
    assert "amendments.AM-SEARCH-OPERATION-NAME: no grammar, vector, requirement" in outcome.detail


def test_a_kit_rule_counts_as_a_reference(tmp_path: Path) -> None:
    """AM-CARD-OVER-CAP is named only by the kit's rules: read from the kit, it is referenced;
    in a checkout without the kit it would not be."""
    spec, cases = _spec_and_cases()
    kit = kit_amendments(ROOT)
    assert "AM-CARD-OVER-CAP" in kit
    assert amendment_references(spec, cases, kit)["AM-CARD-OVER-CAP"] == ["the conformance kit"]
    assert amendment_references(spec, cases, set())["AM-CARD-OVER-CAP"] == []
    assert "AM-CARD-OVER-CAP" in str(unreferenced_amendments(spec, cases, tmp_path))


def test_the_longest_path_rests_on_the_amendment_that_bounds_it() -> None:
    """The path grammar has no cap in seed 000 §3.2; the 256-character cap and the depth bound
    that make a longest path exist are AM-PATH-BOUNDS's."""
    _, cases = _spec_and_cases()
    longest = [c for c in cases if c["name"].startswith("path/longest/")]
    assert len(longest) == 1 and longest[0]["expect"] == {"error": "PATH_INVALID"}
    assert longest[0]["amended_by"] == ["AM-PATH-BOUNDS"]
    # the longest tool_id is within the seed's 240 too: it rests on no amendment
    (tool_id,) = [c for c in cases if c["name"].startswith("tool_id/longest/")]
    assert tool_id["expect"] == {"ok": True} and tool_id["amended_by"] == []


def test_the_bare_tool_id_example_names_its_amendment() -> None:
    _, cases = _spec_and_cases()
    (case,) = [c for c in cases if c["name"] == "tool_id/valid/'a:b'"]
    assert case["amended_by"] == ["AM-BARE-TOOL-ID"]
