"""Where a version of the spec comes from: a spec folder, or a git ref of the repository.

A ref is read with `git show REF:spec/<file>` into a temporary folder: surface.yaml first, then
the files it lists (the spec's own file list, so an older layout comes back whole).
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml

from .errors import SpecError

SPEC_DIR = "spec"
SURFACE = "surface.yaml"
LOCK = "version.lock"  # generator/evolution/versioning.py


class RefError(Exception):
    """A ref that git cannot read, or a repository without the history asked for."""


def _git(repo: Path, *args: str) -> bytes:
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False)
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RefError(f"git {' '.join(args)}: {message[-1] if message else 'failed'}")
    return proc.stdout


def _show(repo: Path, ref: str, path: str) -> bytes:
    return _git(repo, "show", f"{ref}:{path}")


def spec_files(surface_text: bytes, where: str) -> list[str]:
    """surface.yaml and the files it lists, in its order."""
    try:
        surface = yaml.safe_load(surface_text)
    except yaml.YAMLError as exc:
        raise SpecError(SURFACE, "", f"invalid YAML ({where}): {exc}") from None
    files = surface.get("files") if isinstance(surface, dict) else None
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise SpecError(SURFACE, "files", f"expected a list of file names ({where})")
    return [SURFACE, *files]


def describe(repo: Path, ref: str) -> str:
    """`ref` with its short commit id, for report headings (e.g. "v0.1 (b68695f)")."""
    commit = _git(repo, "rev-parse", "--short", f"{ref}^{{commit}}").decode().strip()
    return ref if ref == commit else f"{ref} ({commit})"


@contextmanager
def materialise(spec: str, repo: Path, spec_path: str = SPEC_DIR) -> Iterator[tuple[Path, str]]:
    """(a spec folder, a label) for `spec`: the folder itself when it is one, otherwise the
    spec at `spec_path` of git ref `spec` in `repo`, written into a temporary folder for the
    duration (surface.yaml, the files it lists, and the version lock when there is one)."""
    folder = Path(spec)
    if folder.is_dir():
        try:  # a folder of the repository is named from its root ("spec")
            label = folder.resolve().relative_to(repo.resolve()).as_posix()
        except ValueError:
            label = str(spec)
        yield folder, label
        return
    label = describe(repo, spec)  # fails clearly for a ref git does not know
    with tempfile.TemporaryDirectory(prefix="gatespec-spec-") as tmp:
        out = Path(tmp) / SPEC_DIR
        out.mkdir()
        surface = _show(repo, spec, f"{spec_path}/{SURFACE}")
        for name in [*spec_files(surface, f"{spec}:{spec_path}/{SURFACE}"), LOCK]:
            try:
                data = _show(repo, spec, f"{spec_path}/{name}")
            except RefError:
                continue  # a listed file the ref lacks: loading the spec says so
            (out / name).write_bytes(data)
        yield out, label


def last_commit_changing(repo: Path, path: str) -> str | None:
    """The last commit that changed `path` (relative to the repository), or None."""
    out = _git(repo, "log", "-1", "--format=%H", "--", path).decode().strip()
    return out or None
