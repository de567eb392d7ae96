"""The conformance kit's layer 1 against the TypeScript surface's adapter (issue 25), at both
levels. At --level spec nothing fails and nothing is skipped (every function is answered). At --level seed the TypeScript surface fails only
checks that the Python surface (gatespec's reference adapter) fails too, for the same cause:
the two are one spec's surface, and a spec that departs from a seed departs in both."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gatespec_conformance import cli

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "generated-ts"
NODE = shutil.which("node")
PYTHON_ADAPTER = [sys.executable, "-m", "gatespec.adapter"]

pytestmark = [pytest.mark.slow, pytest.mark.skipif(NODE is None, reason="node is not on PATH")]


@pytest.fixture(scope="module")
def adapter() -> list[str]:
    """The package compiled now (tsc --strict), so the kit judges the committed sources."""
    subprocess.run(
        [str(ROOT / "node_modules" / ".bin" / "tsc"), "-p", str(PACKAGE)], check=True, cwd=ROOT
    )
    assert NODE is not None
    return [NODE, str(PACKAGE / "dist" / "src" / "adapter.js")]


def _kit(tmp: Path, level: str, command: list[str], select: list[str] = ()) -> dict[str, Any]:
    report = tmp / f"report-{level}-{len(list(tmp.iterdir()))}.json"
    argv = ["functions", "--level", level, "-q", "--format", "json", "-o", str(report)]
    for pattern in select:
        argv += ["--select", pattern]
    cli.main([*argv, "--", *command])
    return json.loads(report.read_text())


def _names(report: dict[str, Any], outcome: str) -> dict[str, str]:
    return {c["name"]: c.get("reason", "") for c in report["checks"] if c["outcome"] == outcome}


def test_spec_level(adapter: list[str], tmp_path: Path) -> None:
    report = _kit(tmp_path, "spec", adapter)
    assert _names(report, "fail") == {}
    assert _names(report, "pass")
    assert _names(report, "skip") == {}


def test_seed_level_fails_only_where_the_python_surface_does(
    adapter: list[str], tmp_path: Path
) -> None:
    report = _kit(tmp_path, "seed", adapter)
    assert _names(report, "pass")
    failed = _names(report, "fail")
    if failed:
        python = _names(_kit(tmp_path, "seed", PYTHON_ADAPTER, sorted(failed)), "fail")
        assert python == failed
