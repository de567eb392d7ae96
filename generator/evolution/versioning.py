"""Version discipline: spec/version.lock records the released spec_version and the spec hash it
was locked at; `version-check` fails when spec/ has changed since without a bump, or in a
breaking way (generator/diff_rules.py) without a bump of the breaking position.

Which bump a breaking change needs is generator/semver.py's (the minor position below 1.0).

No CI base ref is needed: when the spec differs from the lock, the locked spec is read from git
as of the last commit that changed spec/version.lock (`lock` is committed with the spec it
locks).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..ir import load_spec
from ..spec_refs import LOCK, SPEC_DIR, RefError, last_commit_changing, materialise, spec_files
from .diff import diff
from .diff_report import Report
from .semver import allows_breaking, breaking_position, bump
from .snapshot import read_snapshot

_LOCK_HEADER = (
    "# The released spec: its version and the spec hash it was locked at. Written by\n"
    "# `python -m generator lock`; `python -m generator version-check` (make check-generated)\n"
    "# compares spec/ with it. Commit it with the spec it locks.\n"
)


@dataclass(frozen=True)
class Lock:
    spec_version: str
    spec_hash: str


def spec_hash(folder: Path) -> str:
    """The spec hash load_spec stamps into generated files, computed from the bytes alone (a
    locked spec from an older layout need not load with this generator)."""
    digest = hashlib.sha256()
    for name in spec_files((folder / "surface.yaml").read_bytes(), str(folder)):
        data = (folder / name).read_bytes() if (folder / name).exists() else b""
        digest.update(name.encode() + b"\0" + data + b"\0")
    return digest.hexdigest()


def read_lock(spec_dir: Path) -> Lock | None:
    path = spec_dir / LOCK
    if not path.exists():
        return None
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return Lock(str(data.get("spec_version", "")), str(data.get("spec_hash", "")))


def lock_text(lock: Lock) -> str:
    return f"{_LOCK_HEADER}spec_version: {lock.spec_version}\nspec_hash: {lock.spec_hash}\n"


def write_lock(spec_dir: Path) -> Lock:
    spec = load_spec(spec_dir)
    lock = Lock(spec.surface.spec_version, spec.spec_hash)
    (spec_dir / LOCK).write_text(lock_text(lock), encoding="utf-8")
    return lock


# ---------------------------------------------------------------- the check


@dataclass
class Outcome:
    ok: bool
    message: str
    report: Report | None = None


def _relative(spec_dir: Path, repo: Path) -> str:
    try:
        return spec_dir.resolve().relative_to(repo.resolve()).as_posix()
    except ValueError:
        raise RefError(f"{spec_dir} is not inside the repository {repo}") from None


def locked_report(spec_dir: Path, repo: Path, lock: Lock) -> Report:
    """The diff from the locked spec (read from git) to spec_dir. Raises RefError."""
    rel = _relative(spec_dir, repo)
    commit = last_commit_changing(repo, f"{rel}/{LOCK}")
    if commit is None:
        raise RefError(
            f"no commit holds {rel}/{LOCK}: commit the lock with the spec it locks (a shallow "
            "clone may also lack it: fetch more history)"
        )
    with materialise(commit, repo, rel) as (folder, label):
        committed = read_lock(folder)
        if committed != lock:
            raise RefError(
                f"{rel}/{LOCK} differs from the one committed in {label}: commit the lock"
            )
        if spec_hash(folder) != lock.spec_hash:
            raise RefError(
                f"the spec committed with the lock in {label} is not the one it locks (hash "
                f"{spec_hash(folder)[:12]}, locked {lock.spec_hash[:12]}): run `python -m "
                "generator lock` and commit the lock with its spec"
            )
        old = read_snapshot(folder, f"locked {lock.spec_version}, {label}")
    return diff(old, read_snapshot(spec_dir, str(spec_dir)))


def check(spec_dir: Path, repo: Path) -> Outcome:
    lock = read_lock(spec_dir)
    if lock is None:
        return Outcome(False, f"no {SPEC_DIR}/{LOCK}: run `python -m generator lock` and commit it")
    spec = load_spec(spec_dir)
    version = spec.surface.spec_version
    if spec.spec_hash == lock.spec_hash:
        return Outcome(True, f"spec/ is the locked {lock.spec_version}")
    if version == lock.spec_version:
        try:
            since = last_commit_changing(repo, f"{_relative(spec_dir, repo)}/{LOCK}") or "LOCKED"
        except RefError:
            since = "LOCKED"  # no history to name the locked commit by
        return Outcome(
            False,
            f"spec/ changed without a version bump: it is no longer the spec locked as "
            f"{version}. Raise spec_version in spec/surface.yaml ({breaking_position(version)} "
            f"for a breaking change; `python -m generator diff {since[:12]}` shows what "
            f"changed), then `make generate`.",
        )
    kind = bump(lock.spec_version, version)
    if kind == "backwards":
        return Outcome(False, f"spec_version {version} is below the locked {lock.spec_version}")
    try:
        report = locked_report(spec_dir, repo, lock)
    except RefError as exc:
        return Outcome(False, f"cannot read the locked spec {lock.spec_version}: {exc}")
    if report.breaking and not allows_breaking(lock.spec_version, version):
        position = breaking_position(lock.spec_version)
        below = " (below 1.0 the minor position is the breaking one)" if position == "minor" else ""
        breaking = [c for c in report.changes if "breaking" in (c.clients, c.implementations)]
        listed = "\n".join(f"  {c.where}: {c.summary}" for c in breaking[:20])
        return Outcome(
            False,
            f"{lock.spec_version} -> {version} is a {kind} bump, but the changes since the lock "
            f"break clients or implementations: a breaking change needs a {position} bump"
            f"{below}.\n{listed}",
            report,
        )
    n = len(report.changes)
    verdict = "breaking" if report.breaking else "none breaking"
    return Outcome(
        True, f"{lock.spec_version} -> {version} ({kind}): {n} changes, {verdict}", report
    )
