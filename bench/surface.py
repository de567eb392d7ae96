"""Benchmarks of the generated surface (issue: spec, generator and generated surface).

- full regeneration time (`python -m generator` into a temporary folder, fresh process);
- parse_tool_id throughput, and ChoiceCard validation throughput, each against validating the
  same inputs with the `jsonschema` library in the same run.

Run: `python bench/surface.py --out bench/results/surface.json` (also part of `make bench`).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import jsonschema
from harness import write_result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gatespec_surface import grammars, parsers, strategies
from gatespec_surface.schemas import MODEL_SCHEMAS
from gatespec_surface.validators import choice_card_violations

ROOT = Path(__file__).resolve().parents[1]


def _draw(strategy: st.SearchStrategy[Any], n: int) -> list[Any]:
    out: list[Any] = []

    @settings(
        max_examples=n, database=None, suppress_health_check=list(HealthCheck), derandomize=True
    )
    @given(strategy)
    def collect(value: Any) -> None:
        out.append(value)

    collect()
    return out


def _rate(fn, inputs: list[Any], repeat: int = 5) -> float:
    """Best-of-`repeat` items per second."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        for item in inputs:
            fn(item)
        best = min(best, time.perf_counter() - started)
    return len(inputs) / best


def regeneration_seconds(runs: int = 3) -> list[float]:
    times = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            started = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "generator", "--out", str(Path(tmp) / "g")],
                cwd=ROOT,
                check=True,
                capture_output=True,
            )
            times.append(time.perf_counter() - started)
    return times


def parse_benchmark() -> dict[str, Any]:
    valid = _draw(strategies.valid("tool_id"), 1500)
    invalid = _draw(strategies.invalid("tool_id"), 500)
    schema = {
        "type": "string",
        "pattern": grammars.TOOL_ID_JSON_PATTERN,
        "maxLength": grammars.TOOL_ID_MAX_LENGTH,
    }
    validator = jsonschema.Draft202012Validator(schema)

    def ours(value: str) -> None:
        try:
            parsers.parse_tool_id(value)
        except Exception:
            pass

    out: dict[str, Any] = {
        "agreement": sum(grammars.is_tool_id(v) == validator.is_valid(v) for v in valid + invalid)
        / len(valid + invalid)
    }
    for label, ids in (("valid", valid), ("invalid", invalid), ("mixed", valid + invalid)):
        ours_rate, theirs_rate = _rate(ours, ids), _rate(validator.is_valid, ids)
        out[label] = {
            "inputs": len(ids),
            "mean_length": round(sum(map(len, ids)) / len(ids), 1),
            "parse_tool_id_per_s": round(ours_rate),
            "jsonschema_per_s": round(theirs_rate),
            "ratio": round(ours_rate / theirs_rate, 1),
        }
    return out


def card_benchmark() -> dict[str, Any]:
    valid = _draw(strategies.valid_choice_card(), 1000)
    invalid = [card for _, card in _draw(strategies.invalid_choice_card(), 1000)]
    cards = valid + invalid
    validator = jsonschema.Draft202012Validator(MODEL_SCHEMAS["ChoiceCard"])
    ours_rate = _rate(choice_card_violations, cards)
    theirs_rate = _rate(validator.is_valid, cards)
    # jsonschema cannot state the rules (sorted tags, banned stringified fields, ...), so it
    # accepts some cards we reject; count them to show what the ratio buys.
    only_ours = sum(bool(choice_card_violations(c)) and validator.is_valid(c) for c in cards)
    return {
        "inputs": len(cards),
        "validate_card_per_s": round(ours_rate),
        "jsonschema_per_s": round(theirs_rate),
        "ratio": round(ours_rate / theirs_rate, 1),
        "rejected_only_by_rules": only_ours,
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "surface.json")
    args = parser.parse_args()
    regen = regeneration_seconds()
    result = {
        "machine": {"python": platform.python_version(), "cpus": __import__("os").cpu_count()},
        "regeneration_s": {
            "runs": [round(t, 3) for t in regen],
            "median": round(statistics.median(regen), 3),
            "goal": 2.0,
        },
        "parse_tool_id": parse_benchmark(),
        "choice_card": card_benchmark(),
    }
    write_result(args.out, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
