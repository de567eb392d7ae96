"""Where a figure comes from: the commit it was measured at and the load it ran under, and the
check that bench/results/REPORT.md is not older than the code it describes.

`make bench` (bench/run.py) stamps every benchmark's JSON with `measured_at` (commit, whether
src/ had uncommitted changes, load average before and after) and writes each stamp under its
section of REPORT.md, with a marker this check reads:
`<!-- measured-at NAME COMMIT clean|dirty|reported -->` ("reported": a long run made by its
own make target, shown as last measured and not checked here).

Stale means: a section has no marker, was measured with uncommitted changes under src/, or at
a commit that does not contain the last commit that changed src/. Figures of an older commit
describe code that no longer runs.

Run: `python bench/stamp.py` (or `make bench-check`): exit 1 and the reasons when REPORT.md is
stale, 0 when every section was measured at a commit holding the current src/.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "bench" / "results" / "REPORT.md"
MARKER = re.compile(r"<!-- measured-at (\S+) ([0-9a-f]{7,40}|unknown) (clean|dirty|reported) -->")


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)


def load_average() -> float:
    return round(os.getloadavg()[0], 2)


def current(root: Path = ROOT) -> dict[str, Any]:
    """The commit now checked out and whether src/ differs from it."""
    head = _git(root, "rev-parse", "HEAD")
    dirty = _git(root, "status", "--porcelain", "--", "src")
    return {
        "commit": head.stdout.strip() if head.returncode == 0 else "unknown",
        "dirty": bool(dirty.stdout.strip()) or dirty.returncode != 0,
    }


def stamp(before: dict[str, Any], load_before: float) -> dict[str, Any]:
    """The `measured_at` of a benchmark that started at `before` under `load_before`."""
    return {**before, "load_average": [load_before, load_average()]}


def line(name: str, measured_at: dict[str, Any] | None, checked: bool = True) -> str:
    """The stamp under a report section (with the marker `stale` reads); `checked` False for
    a section `stale` leaves alone."""
    if not measured_at:
        state = "dirty" if checked else "reported"
        return (
            "_Not stamped: measured before figures carried their commit._ "
            f"<!-- measured-at {name} unknown {state} -->"
        )
    commit = measured_at["commit"]
    state = ("dirty" if measured_at["dirty"] else "clean") if checked else "reported"
    load = " → ".join(str(v) for v in measured_at["load_average"])
    note = " with uncommitted changes under src/" if measured_at["dirty"] else ""
    return (
        f"_Measured at commit `{commit[:12]}`{note}, load average {load} "
        f"(1-minute, {os.cpu_count()} cores)._ <!-- measured-at {name} {commit} {state} -->"
    )


def stale(report: str, root: Path = ROOT) -> list[str]:
    """Why `report` (REPORT.md's text) is older than src/ at HEAD; empty when it is not."""
    last = _git(root, "log", "-1", "--format=%H", "--", "src").stdout.strip()
    markers = MARKER.findall(report)
    if not markers:
        return [
            "REPORT.md carries no measured-at stamps (made before `make bench` stamped figures)"
        ]
    reasons = []
    for name, commit, state in markers:
        if state == "reported":
            continue
        if commit == "unknown":
            reasons.append(f"{name}: no commit recorded")
        elif state == "dirty":
            reasons.append(f"{name}: measured with uncommitted changes under src/")
        elif last and _git(root, "merge-base", "--is-ancestor", last, commit).returncode != 0:
            reasons.append(
                f"{name}: measured at {commit[:12]}, which does not hold src/'s last change "
                f"{last[:12]}"
            )
    return reasons


def main() -> int:
    if not REPORT.exists():
        print(f"{REPORT} is missing: run `make bench`", file=sys.stderr)
        return 1
    reasons = stale(REPORT.read_text(encoding="utf-8"))
    for reason in reasons:
        print(f"stale: {reason}", file=sys.stderr)
    if reasons:
        print("bench/results/REPORT.md is older than src/: run `make bench`", file=sys.stderr)
        return 1
    print("bench/results/REPORT.md was measured at a commit holding the current src/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
