"""The spec-evolution commands of `python -m generator`:

diff OLD [NEW]       every change from OLD to NEW, classified (generator/diff.py); OLD and NEW
                     are spec folders or git refs (NEW defaults to spec/); --format text|json
changelog OLD [NEW]  the same as a markdown changelog section (generator/changelog.py)
lock                 record spec/'s version and hash in spec/version.lock
version-check        fail when spec/ changed since the lock without the bump it needs
                     (generator/versioning.py)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..errors import SpecError, SpecErrors
from ..spec_refs import RefError, materialise
from . import changelog, versioning
from .diff import diff
from .diff_report import Report
from .snapshot import read_snapshot

COMMANDS = ("diff", "changelog", "lock", "version-check")


def _report(refs: list[str], spec_dir: Path, repo: Path) -> Report:
    if not 1 <= len(refs) <= 2:
        raise RefError("expected OLD and optionally NEW (spec folders or git refs)")
    old_ref, new_ref = refs[0], refs[1] if len(refs) == 2 else str(spec_dir)
    with materialise(old_ref, repo) as (folder, label):
        old = read_snapshot(folder, label)
    with materialise(new_ref, repo) as (folder, label):
        new = read_snapshot(folder, label)
    return diff(old, new)


def run(command: str, refs: list[str], fmt: str, spec_dir: Path, repo: Path) -> int:
    try:
        if command == "diff":
            report = _report(refs, spec_dir, repo)
            if fmt == "json":
                print(json.dumps(report.as_json(), indent=1, ensure_ascii=False))
            else:
                sys.stdout.write(report.text())
            return 0
        if command == "changelog":
            sys.stdout.write(changelog.section(_report(refs, spec_dir, repo)))
            return 0
        if refs:
            raise RefError(f"{command} takes no OLD/NEW arguments")
        if command == "lock":
            outcome = versioning.check(spec_dir, repo)
            if versioning.read_lock(spec_dir) is not None and not outcome.ok:
                print(f"not locked: {outcome.message}", file=sys.stderr)
                return 1
            lock = versioning.write_lock(spec_dir)
            print(
                f"locked spec {lock.spec_version} ({lock.spec_hash[:12]}) in {spec_dir / versioning.LOCK}"
            )
            return 0
        outcome = versioning.check(spec_dir, repo)
        print(outcome.message, file=sys.stdout if outcome.ok else sys.stderr)
        return 0 if outcome.ok else 1
    except RefError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (SpecError, SpecErrors) as exc:
        print(f"spec error:\n{exc}", file=sys.stderr)
        return 2
