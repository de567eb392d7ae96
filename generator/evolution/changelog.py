"""`generator changelog OLD NEW`: a markdown changelog section made from the diff and the
amendments. No date, so the same two specs always give the same text."""

from __future__ import annotations

from .diff_report import Report
from .diff_rules import Change

_AMENDMENT = "amendment."


def _line(c: Change) -> str:
    how = f"; {c.method}" if c.method else ""
    return f"- `{c.where}`: {c.summary} ({', '.join(c.kinds)}{how})"


def section(report: Report) -> str:
    old, new = report.old, report.new
    parties = [
        party
        for party, hit in (
            ("clients", report.breaking_clients),
            ("implementations", report.breaking_implementations),
        )
        if hit
    ]
    verdict = f"breaking for {' and '.join(parties)}" if parties else "compatible"
    lines = [f"## spec {new.version}", "", f"Compared with spec {old.version}: {verdict}."]
    for title, changes in report.groups().items():
        shown = [c for c in changes if not c.kinds[0].startswith(_AMENDMENT)]
        if shown:
            lines += ["", f"### {title}", "", *(_line(c) for c in shown)]
    amendments = [c for c in report.changes if c.kinds[0].startswith(_AMENDMENT)]
    if amendments:
        lines += ["", "### Amendments", ""]
        for c in amendments:
            state = c.kinds[0].removeprefix(_AMENDMENT)
            lines.append(f"- {c.where.removeprefix('amendments.')} ({state}): {c.summary}")
    return "\n".join(lines) + "\n"
