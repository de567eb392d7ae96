"""The report of `generator diff`: the changes grouped by whom they break, as text or JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .diff_rules import B, C, Change
from .semver import needed
from .snapshot import Snapshot


@dataclass
class Report:
    old: Snapshot
    new: Snapshot
    changes: list[Change] = field(default_factory=list)

    @property
    def breaking_clients(self) -> bool:
        return any(c.clients == B for c in self.changes)

    @property
    def breaking_implementations(self) -> bool:
        return any(c.implementations == B for c in self.changes)

    @property
    def breaking(self) -> bool:
        return self.breaking_clients or self.breaking_implementations

    def groups(self) -> dict[str, list[Change]]:
        out: dict[str, list[Change]] = {
            "Breaking for clients and implementations": [],
            "Breaking for clients": [],
            "Breaking for implementations": [],
            "Compatible": [],
        }
        for c in self.changes:
            key = {
                (B, B): "Breaking for clients and implementations",
                (B, C): "Breaking for clients",
                (C, B): "Breaking for implementations",
                (C, C): "Compatible",
            }[(c.clients, c.implementations)]
            out[key].append(c)
        return out

    def _side(self, snap: Snapshot) -> dict[str, Any]:
        return {
            "label": snap.label,
            "spec_version": snap.version,
            "loads": not snap.problems,
            "problems": snap.problems,
        }

    def needed(self) -> str:
        try:
            return needed(self.old.version, self.breaking)
        except ValueError:  # no semantic version to count from
            return "a major bump" if self.breaking else "any bump"

    def as_json(self) -> dict[str, Any]:
        return {
            "old": self._side(self.old),
            "new": self._side(self.new),
            "breaking": {
                "clients": self.breaking_clients,
                "implementations": self.breaking_implementations,
            },
            "needs": self.needed(),
            "counts": {
                "changes": len(self.changes),
                "breaking_clients": sum(c.clients == B for c in self.changes),
                "breaking_implementations": sum(c.implementations == B for c in self.changes),
                "compatible": sum(c.clients == c.implementations == C for c in self.changes),
            },
            "changes": [c.as_json() for c in self.changes],
        }

    def text(self) -> str:
        counts = self.as_json()["counts"]
        lines = [
            f"spec diff {self.old.version} ({self.old.label}) -> {self.new.version} ({self.new.label})"
        ]
        for snap in (self.old, self.new):
            if snap.problems:
                n = len(snap.problems)
                lines.append(
                    f"  note: {snap.label} does not load with this generator ({n} "
                    f"problem{'s' if n > 1 else ''}; first: {snap.problems[0]}); it was read leniently"
                )
        lines.append(
            f"  {counts['changes']} changes: {counts['breaking_clients']} breaking for clients, "
            f"{counts['breaking_implementations']} breaking for implementations, "
            f"{counts['compatible']} compatible; needs {self.needed()}"
        )
        for title, changes in self.groups().items():
            if not changes:
                continue
            lines += ["", f"{title} ({len(changes)})"]
            for c in changes:
                how = f"; {c.method}" if c.method else ""
                lines.append(f"  {c.where}: {c.summary}  [{', '.join(c.kinds)}{how}]")
        return "\n".join(lines) + "\n"
