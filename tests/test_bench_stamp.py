"""bench/stamp.py, the check that bench/results/REPORT.md is not older than src/: on a real
git repository made here, a report measured at a commit that holds src/'s last change passes,
and one measured before it, with uncommitted src/ changes, or never stamped, is stale."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def load_stamp() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_stamp", ROOT / "bench" / "stamp.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_stamp", module)
    spec.loader.exec_module(module)
    return module


def git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env |= {"GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, env=env
    )
    return done.stdout.strip()


def commit(repo: Path, path: str, text: str) -> str:
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(text)
    git(repo, "add", path)
    git(repo, "commit", "-q", "-m", f"change {path}")
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """An empty git repository."""
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q")
    return path


def test_a_report_is_stale_once_src_changes_after_it(repo: Path) -> None:
    stamp = load_stamp()
    measured = commit(repo, "src/a.py", "x = 1\n")
    at = stamp.current(repo)
    assert at == {"commit": measured, "dirty": False}
    report = "## A (`bench/a.py`)\n\n" + stamp.line("a", {**at, "load_average": [1.0, 2.0]})
    assert stamp.stale(report, repo) == []

    later = commit(repo, "docs/readme.md", "docs only\n")  # not src/: still fresh
    assert later != measured and stamp.stale(report, repo) == []

    commit(repo, "src/a.py", "x = 2\n")
    reasons = stamp.stale(report, repo)
    assert len(reasons) == 1 and reasons[0].startswith(f"a: measured at {measured[:12]}")

    (repo / "src" / "a.py").write_text("x = 3\n")
    assert stamp.current(repo)["dirty"] is True


def test_a_dirty_or_unstamped_section_is_stale_and_a_reported_one_is_not(repo: Path) -> None:
    stamp = load_stamp()
    head = commit(repo, "src/a.py", "x = 1\n")
    dirty = stamp.line("a", {"commit": head, "dirty": True, "load_average": [1.0, 1.0]})
    assert stamp.stale(dirty, repo) == ["a: measured with uncommitted changes under src/"]
    assert stamp.stale(stamp.line("b", None), repo) == ["b: no commit recorded"]
    assert stamp.stale("# no stamps at all\n", repo) != []
    old = {"commit": "0" * 40, "dirty": False, "load_average": [1.0, 1.0]}
    assert stamp.stale(stamp.line("fuzz", old, checked=False), repo) == []
