"""`make generate` rewrites only what changed: an unchanged file keeps its modification time, so
the install stamp (which depends on generated/pyproject.toml) survives a spec edit."""

from __future__ import annotations

import os
from pathlib import Path

from generator.emit import replace_tree


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_only_changed_files_are_written_and_stale_ones_go(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    _write(old, {"same.txt": "a", "changed.txt": "b", "pkg/stale.py": "x", "gone/only.py": "y"})
    _write(new, {"same.txt": "a", "changed.txt": "B", "pkg/added.py": "z"})
    for path in old.rglob("*.txt"):
        os.utime(path, (1_000_000, 1_000_000))
    replace_tree(new, old)
    files = {str(p.relative_to(old)): p.read_text() for p in old.rglob("*") if p.is_file()}
    assert files == {"same.txt": "a", "changed.txt": "B", "pkg/added.py": "z"}
    assert (old / "same.txt").stat().st_mtime == 1_000_000
    assert (old / "changed.txt").stat().st_mtime != 1_000_000
    assert not (old / "gone").exists()


def test_an_absent_destination_is_created(tmp_path: Path) -> None:
    _write(tmp_path / "src", {"a/b.txt": "1"})
    replace_tree(tmp_path / "src", tmp_path / "dest")
    assert (tmp_path / "dest/a/b.txt").read_text() == "1"


def test_the_surface_pyproject_carries_no_spec_hash() -> None:
    # The stamp of `make install` depends on this file: a hash in it would rerun pip after
    # every spec edit.
    text = (Path(__file__).resolve().parents[2] / "generated/pyproject.toml").read_text()
    header = "".join(line for line in text.splitlines(True) if line.startswith("#"))
    assert "sha256" not in header and "spec " in header
