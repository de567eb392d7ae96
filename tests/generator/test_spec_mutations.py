"""Every seed-breaking spec edit of the mutation catalogue is refused by generation, with an
error that names what was broken (generator/mutations.py; `make report` prints the score)."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.mutations import MUTATIONS, run

ROOT = Path(__file__).resolve().parents[2]


def test_the_catalogue_is_large_and_unique() -> None:
    assert len(MUTATIONS) >= 25
    assert len({m.id for m in MUTATIONS}) == len(MUTATIONS)


@pytest.mark.parametrize("mutation", MUTATIONS, ids=[m.id for m in MUTATIONS])
def test_mutation_is_caught(mutation) -> None:  # type: ignore[no-untyped-def]
    outcome = run(mutation, ROOT / "spec", ROOT)
    assert outcome.caught, f"{mutation.what}: {outcome.detail}"


def test_an_edit_that_breaks_no_seed_is_not_counted() -> None:
    """The harness can say MISSED: a prose edit generates fine, and an edit that fails for an
    unrelated reason does not count as caught."""
    from generator.mutations import Mutation

    harmless = Mutation(
        "prose", "a reworded summary", "errors.yaml",
        # (TIMEOUT's summary would not do: seed 001 pins it to a cancelled call)
        lambda d: d["codes"]["CATALOG_ERROR"].update(summary="A catalog invariant broke."),
        "CATALOG_ERROR",
    )  # fmt: skip
    assert run(harmless, ROOT / "spec", ROOT).detail == "generation succeeded"
    unrelated = Mutation(
        "unrelated", "breaks something else", "grammars.yaml",
        lambda d: d["grammars"]["namespace"].update(syntax=[]), "S000-GRAMMAR-NAME",
    )  # fmt: skip
    outcome = run(unrelated, ROOT / "spec", ROOT)
    assert not outcome.caught and outcome.detail.startswith("failed for another reason")
