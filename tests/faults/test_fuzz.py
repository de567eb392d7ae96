"""Generated invalid inputs to every meta-tool: every one answered with a typed error the spec
lists for that meta-tool (tests/faults/fuzzing.py; bench/fuzz.py runs 100,000 of each)."""

from __future__ import annotations

import pytest

from tests.faults.fuzzing import meta_tools, run

pytestmark = [pytest.mark.timeout(300)]


@pytest.mark.parametrize(("profile", "tool"), meta_tools())
def test_every_generated_invalid_input_gets_a_typed_answer(profile: str, tool: str) -> None:
    tally = run(profile, tool, 100)
    assert tally.inputs == 100
    assert tally.crashes == [] and tally.unanswered == 0
    assert tally.typed == tally.inputs
