"""The README's context-cost figures are what the code gives at this commit (issue 27: the README
quotes only current figures). The gateway's meta-tool cost is computed the way bench/context.py
counts it; a change to a meta-tool descriptor that moves it fails here until the README says so."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_readme_states_the_current_meta_tool_cost() -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from context import meta_tokens
    finally:
        sys.path.remove(str(ROOT / "bench"))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    stated = re.search(r"the gateway’s three meta-tools cost ([\d,]+)", readme)
    assert stated is not None, "README no longer states the gateway's meta-tool cost"
    assert int(stated.group(1).replace(",", "")) == meta_tokens("gateway")


def test_the_readme_states_the_measured_passthrough_cost() -> None:
    measured = json.loads((ROOT / "bench/results/context.json").read_text(encoding="utf-8"))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    stated = re.search(r"passing every tool\s+through costs ~([\d,]+) tokens", readme)
    assert stated is not None, "README no longer states the passthrough cost"
    tokens = measured["real_catalog"]["passthrough_tokens"]
    assert int(stated.group(1).replace(",", "")) == round(tokens, -4)  # stated to 10,000
