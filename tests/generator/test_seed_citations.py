"""Seed facts rest on the seeds' own words (issue 21 item 1): each fact quotes its cited
section, checked against the seed files; inferences are labelled and refused as inferences."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.emit import Generator
from generator.facts import FactChecker
from generator.ir import load_spec
from generator.seed_text import Seeds, normalise, seed_folder

ROOT = Path(__file__).resolve().parents[2]
SPEC = load_spec(ROOT / "spec")
FILES = {n: info.file for n, info in SPEC.surface.seeds.items()}


@pytest.fixture(scope="module")
def seeds() -> Seeds:
    folder = seed_folder(ROOT)
    assert folder is not None, "the seed folder (../shared/seeds) is missing"
    return Seeds(folder, FILES)


def _checker(seeds: Seeds | None) -> FactChecker:
    gen = Generator(SPEC, ROOT)
    return FactChecker(SPEC, SPEC.raw, gen.compiler, gen.analyses, gen.caps, seeds)


def test_every_fact_quotes_its_section(seeds: Seeds) -> None:
    assert _checker(seeds).citations() == []
    assert all(fact.quote for fact in SPEC.seed_facts.values())


@pytest.mark.parametrize(
    ("seed", "section", "inside", "outside"),
    [
        ("000", "2.1", "has_schema— boolean.", "A ChoiceCard MUST NOT carry"),  # stops at 2.2
        ("000", "5", "HYDRATE_FAILED", "Implementation dependencies"),  # 5 holds 5.1-5.5
        ("001", "Tool Routing", 'throws a "Tool not found" error', "Timeout error"),
        ("001", "Execution Policies: Enforce timeout", "Timeout error", "Propagate errors"),
        ("002", "mcp_result_to_envelope", "max 500 chars", "structuredContent"),
        ("003", "Decision 5", "FORBIDDEN", "## Consequences"),  # one long line, inline headings
        ("004", "Error Handling: Parse Failures", "Invalid namespace format", "Unknown server"),
    ],
)
def test_a_section_is_its_heading_to_the_next(
    seeds: Seeds, seed: str, section: str, inside: str, outside: str
) -> None:
    text, why = seeds.locate(seed, section)
    assert text is not None, why
    assert normalise(inside) in text and normalise(outside) not in text


def test_an_unknown_section_is_none(seeds: Seeds) -> None:
    assert seeds.locate("000", "2.9") == (None, "seed 000 has no section '2.9'")
    assert seeds.locate("001", "Tool Routing: Enforce timeout")[0] is None


def test_a_missing_seed_file_fails_generation(tmp_path: Path) -> None:
    errors = _checker(Seeds(tmp_path, FILES)).citations()
    assert len(errors) == len(FILES)
    assert "cannot read seed 000 (000_" in str(errors[0])


def test_refusals_say_inferred_from_for_inferences_and_states_for_the_seeds_words() -> None:
    from generator.facts import _says

    inferred = SPEC.seed_facts["S004-AGGREGATE-NO-META-TOOLS"]
    stated = SPEC.seed_facts["S000-CARD-NAME-MAX"]
    assert inferred.kind == "inference" and stated.kind == "stated"
    assert _says(inferred).startswith("inferred from seed 004 §Broadcast Methods (")
    assert "states" not in _says(inferred)
    assert _says(stated).startswith("seed 000 §2.1 states (")


@pytest.mark.parametrize(
    "fact_id",
    # issue 21 item 7: the spec's own inferences, no longer under the seed's name
    ["S002-STATUS-ERROR", "S003-FORBIDDEN-SCHEMA", "S003-FORBIDDEN-BATCH",
     "S004-AGGREGATE-NO-META-TOOLS", "S001-TIMEOUT", "S001-TOOL-NOT-FOUND"],
)  # fmt: skip
def test_misattributed_facts_are_inferences(fact_id: str) -> None:
    assert SPEC.seed_facts[fact_id].kind == "inference"


def test_the_seed_names_only_ok_and_timeout_sits_in_execution_policies() -> None:
    assert SPEC.seed_facts["S002-STATUS"].value == ["ok"]
    assert SPEC.seed_facts["S001-TOOL-NOT-FOUND"].value == ["TOOL_NOT_FOUND"]
    assert SPEC.seed_facts["S001-TIMEOUT"].section == "Execution Policies"
    assert SPEC.seed_facts["S003-FORBIDDEN"].at == [
        "errors.yaml#codes",
        "profiles.yaml#meta_tools.call.errors",
    ]
