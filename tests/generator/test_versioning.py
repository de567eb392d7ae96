"""Version discipline in a throw-away git repository holding a copy of spec/: the lock, a change
without a bump, a compatible change with any bump, a breaking change that needs the breaking
position raised (the minor one below 1.0, the major one from 1.0)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from generator.evolution import semver, versioning
from generator.ir import load_spec

ROOT = Path(__file__).resolve().parents[2]


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid", *args],
        cwd=repo, check=True, capture_output=True,
    )  # fmt: skip


def _set_version(spec: Path, version: str) -> None:
    surface = spec / "surface.yaml"
    text = re.sub(r"(?m)^spec_version: .*$", f"spec_version: {version}", surface.read_text())
    surface.write_text(text)


def _edit(spec: Path, file: str, old: str, new: str) -> None:
    path = spec / file
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _compatible(spec: Path) -> None:
    _edit(spec, "amendments.yaml", "title: The tool_id length cap is the grammar's own maximum, 235",
          "title: The tool_id cap is the longest id the grammar admits, 235")  # fmt: skip


def _breaking(spec: Path) -> None:
    """Paths capped at 200 characters: an input and an output narrowed."""
    _edit(spec, "grammars.yaml", "max_length: 256", "max_length: 200")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    shutil.copytree(
        ROOT / "spec", tmp_path / "spec", ignore=shutil.ignore_patterns(versioning.LOCK)
    )
    _git(tmp_path, "init", "-q")
    return tmp_path


def _locked(repo: Path, version: str) -> Path:
    spec = repo / "spec"
    _set_version(spec, version)
    versioning.write_lock(spec)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", f"spec {version}")
    return spec


def test_the_hash_is_the_one_generated_files_carry() -> None:
    assert versioning.spec_hash(ROOT / "spec") == load_spec(ROOT / "spec").spec_hash


def test_without_a_lock_the_check_fails(repo: Path) -> None:
    outcome = versioning.check(repo / "spec", repo)
    assert not outcome.ok and "no spec/version.lock" in outcome.message


def test_the_locked_spec_passes(repo: Path) -> None:
    spec = _locked(repo, "0.4.0")
    assert yaml.safe_load((spec / versioning.LOCK).read_text())["spec_version"] == "0.4.0"
    outcome = versioning.check(spec, repo)
    assert outcome.ok and "locked 0.4.0" in outcome.message


def test_a_change_without_a_bump_fails(repo: Path) -> None:
    spec = _locked(repo, "0.4.0")
    _compatible(spec)
    outcome = versioning.check(spec, repo)
    assert not outcome.ok and "without a version bump" in outcome.message


def test_a_compatible_change_takes_any_bump(repo: Path) -> None:
    spec = _locked(repo, "0.4.0")
    _compatible(spec)
    _set_version(spec, "0.4.1")
    outcome = versioning.check(spec, repo)
    assert outcome.ok, outcome.message
    assert outcome.report is not None and not outcome.report.breaking


def test_below_one_a_breaking_change_needs_the_minor_position(repo: Path) -> None:
    spec = _locked(repo, "0.4.0")
    _breaking(spec)
    _set_version(spec, "0.4.1")
    outcome = versioning.check(spec, repo)
    assert not outcome.ok
    assert "needs a minor bump (below 1.0" in outcome.message
    assert "grammars.path" in outcome.message
    _set_version(spec, "0.5.0")
    assert versioning.check(spec, repo).ok


def test_from_one_a_breaking_change_needs_the_major_position(repo: Path) -> None:
    spec = _locked(repo, "1.2.0")
    _breaking(spec)
    _set_version(spec, "1.3.0")
    outcome = versioning.check(spec, repo)
    assert not outcome.ok and "needs a major bump." in outcome.message
    _set_version(spec, "2.0.0")
    assert versioning.check(spec, repo).ok


def test_a_version_going_down_fails(repo: Path) -> None:
    spec = _locked(repo, "0.4.0")
    _compatible(spec)
    _set_version(spec, "0.3.9")
    outcome = versioning.check(spec, repo)
    assert not outcome.ok and "below the locked 0.4.0" in outcome.message


def test_an_uncommitted_lock_has_no_locked_spec_to_compare(repo: Path) -> None:
    spec = repo / "spec"
    _set_version(spec, "0.4.0")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "spec without its lock")
    versioning.write_lock(spec)  # never committed
    _compatible(spec)
    _set_version(spec, "0.4.1")
    outcome = versioning.check(spec, repo)
    assert not outcome.ok and "no commit holds spec/version.lock" in outcome.message


def test_the_commands_refuse_to_lock_an_unbumped_change(repo: Path) -> None:
    spec = _locked(repo, "0.4.0")
    _compatible(spec)
    args = ["--spec", str(spec), "--root", str(repo)]
    run = [sys.executable, "-m", "generator"]
    check = subprocess.run([*run, "version-check", *args], cwd=ROOT, capture_output=True, text=True)
    assert check.returncode == 1 and "without a version bump" in check.stderr
    lock = subprocess.run([*run, "lock", *args], cwd=ROOT, capture_output=True, text=True)
    assert lock.returncode == 1 and lock.stderr.startswith("not locked:")
    _set_version(spec, "0.4.1")
    lock = subprocess.run([*run, "lock", *args], cwd=ROOT, capture_output=True, text=True)
    assert lock.returncode == 0 and "locked spec 0.4.1" in lock.stdout


def test_bump_positions() -> None:
    assert semver.bump("0.1.0", "0.2.0") == "minor"
    assert semver.bump("0.1.0", "1.0.0") == "major"
    assert semver.bump("1.2.3", "1.2.4") == "patch"
    assert semver.bump("1.2.3", "1.2.3") == "none"
    assert semver.bump("1.2.3", "1.1.9") == "backwards"
    assert semver.allows_breaking("0.1.0", "0.2.0")
    assert not semver.allows_breaking("0.1.0", "0.1.1")
    assert not semver.allows_breaking("1.1.0", "1.2.0")
    assert semver.allows_breaking("1.1.0", "2.0.0")
