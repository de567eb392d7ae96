"""The spec version's pins outside spec/ move with it (`bump`) and a stale one is named."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator.evolution import pins

ROOT = Path(__file__).resolve().parents[2]
FILES = ("spec/surface.yaml", "pyproject.toml", "src/gatespec/__init__.py")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for name in FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / name, tmp_path / name)
    return tmp_path


def test_this_checkout_states_one_spec_version() -> None:
    assert pins.disagreements(ROOT) == []


def test_bump_rewrites_every_pin(tree: Path) -> None:
    changed = pins.bump(tree, "7.3.1")
    assert sorted(changed) == sorted(FILES)
    assert pins.spec_version(tree) == "7.3.1"
    project = (tree / "pyproject.toml").read_text()
    assert '"gatespec-surface[mcp]==7.3.1"' in project
    assert '"gatespec-surface[strategies]==7.3.1"' in project
    assert "SUPPORTED_SPEC = (7, 3)\n" in (tree / "src/gatespec/__init__.py").read_text()
    assert pins.disagreements(tree) == []


def test_a_patch_bump_leaves_the_supported_major_minor_alone(tree: Path) -> None:
    major, minor, patch = pins.spec_version(tree).split(".")
    changed = pins.bump(tree, f"{major}.{minor}.{int(patch) + 1}")
    assert "src/gatespec/__init__.py" not in changed


def test_a_hand_edited_version_names_each_stale_pin(tree: Path) -> None:
    surface = tree / "spec/surface.yaml"
    old = pins.spec_version(tree)
    surface.write_text(surface.read_text().replace(f"spec_version: {old}", "spec_version: 9.0.0"))
    problems = pins.disagreements(tree)
    assert len(problems) == 3, problems
    assert any("pyproject.toml" in p and "gatespec-surface[mcp]" in p for p in problems)
    assert any("SUPPORTED_SPEC" in p and "needs 9, 0" in p for p in problems)


@pytest.mark.parametrize("bad", ["1.2", "v1.2.3", "1.02.3", "1.2.3-rc1", ""])
def test_bump_refuses_what_is_not_a_version(tree: Path, bad: str) -> None:
    before = {name: (tree / name).read_text() for name in FILES}
    with pytest.raises(pins.PinError, match="MAJOR.MINOR.PATCH"):
        pins.bump(tree, bad)
    assert before == {name: (tree / name).read_text() for name in FILES}


def test_version_check_fails_on_a_stale_pin(tree: Path) -> None:
    project = tree / "pyproject.toml"
    version = pins.spec_version(tree)
    project.write_text(project.read_text().replace(f"[mcp]=={version}", "[mcp]==0.0.1"))
    run = subprocess.run(
        [sys.executable, "-m", "generator", "version-check", "--root", str(tree)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 1
    assert "gatespec-surface[mcp] is 0.0.1" in run.stderr
