"""The distributions: gatespec-surface on its own, gatespec depending on it at the spec's
version, hypothesis only behind the `conformance` extra, and serving that never imports
hypothesis or the surface's test-only modules (real processes: the official MCP client, the
gateway over stdio, the kit's fixture upstream). `make dist` builds and smoke-tests the wheels.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import gatespec_surface
from gatespec_surface import SPEC_VERSION

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ROOT / "tools" / "smoke_stdio.py"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
SURFACE = tomllib.loads((ROOT / "generated" / "pyproject.toml").read_text(encoding="utf-8"))[
    "project"
]

# Needed only by the conformance kit and property tests, never to serve.
TEST_ONLY = ("hypothesis", "gatespec_conformance", "gatespec_surface.strategies",
             "gatespec_surface.requirements", "gatespec_surface.seed_facts",
             "gatespec_surface.vectors",
             # training the learned query tower (the `train` extra), never serving
             "torch", "transformers", "onnx", "gatespec.ranking.train")  # fmt: skip


def _name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9_.-]+", requirement)
    assert match is not None
    return match.group(0).lower()


def test_the_surface_is_its_own_distribution_at_the_spec_version() -> None:
    assert SURFACE["name"] == "gatespec-surface"
    assert SURFACE["version"] == SPEC_VERSION == gatespec_surface.SPEC_VERSION
    assert [_name(r) for r in SURFACE["dependencies"]] == ["pydantic"]
    assert [_name(r) for r in SURFACE["optional-dependencies"]["strategies"]] == ["hypothesis"]


def test_gatespec_pins_the_surface_of_its_spec_and_keeps_hypothesis_in_an_extra() -> None:
    assert f"gatespec-surface[mcp]=={SPEC_VERSION}" in PROJECT["dependencies"]
    assert "hypothesis" not in [_name(r) for r in PROJECT["dependencies"]]
    assert PROJECT["optional-dependencies"]["conformance"] == [
        f"gatespec-surface[strategies]=={SPEC_VERSION}"
    ]


@pytest.mark.timeout(120)
def test_serving_imports_neither_hypothesis_nor_test_only_modules(tmp_path: Path) -> None:
    """`python -X importtime` logs every module the gateway process imports, also lazily
    while it answers tools/list, tool_browse and tool_execute."""
    log = tmp_path / "gateway-stderr.txt"
    command = [sys.executable, "-X", "importtime", "-m", "gatespec"]
    done = subprocess.run(
        [sys.executable, str(SMOKE), "--errlog", str(log), "--", *command],
        capture_output=True,
        text=True,
        timeout=100,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr + log.read_text()
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in log.read_text().splitlines()
        if line.startswith("import time:") and "|" in line
    }
    # The log saw the serving path (else the assertion below could not fail).
    assert {"gatespec.runtime", "gatespec.server", "mcp", "gatespec_surface.budgets"} <= imported
    leaked = sorted(
        m for m in imported if m.split(".")[0] in ("hypothesis", "torch") or m in TEST_ONLY
    )
    assert leaked == []


def _without_hypothesis(tmp_path: Path) -> dict[str, str]:
    """An environment where `import hypothesis` fails as in an install without the extra."""
    package = tmp_path / "blocked" / "hypothesis"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'hypothesis'\", name='hypothesis')\n"
    )
    # The blocker first, then the code under test when PYTHONPATH names it (a worktree).
    paths = [str(package.parent), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {"PYTHONPATH": os.pathsep.join(paths), "PATH": str(Path(sys.executable).parent)}


@pytest.mark.parametrize(
    "argv", [["vectors", "export", "OUT"], ["conformance", "functions", "--list"]]
)
def test_the_kit_without_its_extra_says_how_to_install_it(argv: list[str], tmp_path: Path) -> None:
    argv = [str(tmp_path / "out") if a == "OUT" else a for a in argv]
    done = subprocess.run(
        [sys.executable, "-m", "gatespec", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        env=_without_hypothesis(tmp_path),
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr == (
        'gatespec-conformance: error: the conformance kit needs hypothesis: pip install "gatespec[conformance]"\n'
    )


def _fixture_help(env: dict[str, str], columns: int) -> str:
    """`gatespec fixture-upstream --help` at a terminal `columns` wide, with every whitespace
    character removed: argparse wraps anywhere (at spaces, hyphens, inside a long path), so only
    text without whitespace compares the same at every width and from every path."""
    done = subprocess.run(
        [sys.executable, "-m", "gatespec", "fixture-upstream", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**env, "COLUMNS": str(columns)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return "".join(done.stdout.split())


def _squeezed(text: str) -> str:
    return "".join(text.split())


def test_the_fixture_upstream_and_help_need_no_hypothesis(tmp_path: Path) -> None:
    # Issue 22 #20: the docs path is compared unwrapped, at any terminal width, from any
    # checkout path (argparse wraps help at the terminal's width).
    from gatespec_conformance import docs_path

    env = _without_hypothesis(tmp_path)
    for columns in (40, 80, 300):
        text = _fixture_help(env, columns)
        assert _squeezed(f"documentation (docs/conformance.md): {docs_path()}") in text


def test_the_help_check_holds_from_a_long_checkout_path(tmp_path: Path) -> None:
    """Issue 22 #20: the same check from a copy of the runtime under a path of over 200
    characters (a clone at 44 characters used to fail it): no test depends on the path."""
    root = Path(__file__).resolve().parents[1]
    long_root = tmp_path / ("a-deliberately-long-checkout-folder-name-" * 5)
    for part in ("src", "generated"):
        shutil.copytree(root / part, long_root / part, ignore=shutil.ignore_patterns("__pycache__"))
    (long_root / "docs").mkdir()
    shutil.copy(root / "docs" / "conformance.md", long_root / "docs" / "conformance.md")
    assert len(str(long_root)) > 200
    env = _without_hypothesis(tmp_path)
    paths = [env["PYTHONPATH"].split(os.pathsep)[0], str(long_root / "src")]
    env["PYTHONPATH"] = os.pathsep.join([*paths, str(long_root / "generated")])
    text = _fixture_help(env, 80)
    docs = long_root / "docs" / "conformance.md"
    assert _squeezed(f"documentation (docs/conformance.md): {docs}") in text
