"""Changes to the spec's records: amendments, requirements, expected answers, the surface
file's titles, and files that changed with no change to the surface at all."""

from __future__ import annotations

from typing import Any

from .diff_rules import MUST_LEVELS, Recorder
from .snapshot import RULE_FILES, Snapshot


def amendments(rec: Recorder) -> None:
    old, new = rec.old.amendments, rec.new.amendments
    for am, data in new.items():
        title = " ".join(str(data.get("title", "")).split())
        if am not in old:
            rec.add(f"amendments.{am}", "amendment.added", title)
        elif old[am] != data:
            fields = ", ".join(
                k for k in dict.fromkeys([*old[am], *data]) if old[am].get(k) != data.get(k)
            )
            rec.add(f"amendments.{am}", "amendment.changed", f"{title} ({fields})")
    for am, data in old.items():
        if am not in new:
            rec.add(
                f"amendments.{am}",
                "amendment.removed",
                " ".join(str(data.get("title", "")).split()),
            )


def requirements(rec: Recorder) -> None:
    old, new = rec.old.requirements, rec.new.requirements
    reworded = []
    for rid, r in new.items():
        must = r.get("level") in MUST_LEVELS
        if rid not in old:
            rec.add(
                f"requirements.{rid}",
                "requirement.added" if must else "requirement.advisory",
                f"added ({r.get('level')})",
            )
            continue
        was = old[rid].get("level") in MUST_LEVELS
        if old[rid].get("level") != r.get("level"):
            kind = (
                "requirement.strengthened"
                if must and not was
                else "requirement.weakened"
                if was and not must
                else "requirement.advisory"
            )
            rec.add(f"requirements.{rid}", kind, f"{old[rid].get('level')} -> {r.get('level')}")
        if " ".join(str(old[rid].get("text")).split()) != " ".join(str(r.get("text")).split()):
            reworded.append(rid)
    for rid, r in old.items():
        if rid not in new:
            must = r.get("level") in MUST_LEVELS
            rec.add(
                f"requirements.{rid}",
                "requirement.removed" if must else "requirement.advisory",
                f"removed ({r.get('level')})",
            )
    if reworded:
        rec.add(
            "requirements",
            "requirement.reworded",
            f"{len(reworded)} reworded: {listed(reworded)}",
        )


def vectors(rec: Recorder) -> None:
    old, new = rec.old.vectors, rec.new.vectors
    layout = rec.old.raw.get("vectors.yaml")
    if not old and isinstance(layout, dict) and layout:
        total = sum(len(cases) for cases in new.values())
        rec.add(
            "vectors",
            "vector.added",
            f"{total} cases in {len(new)} files, all new: {rec.old.label}'s vectors.yaml "
            f"held example tables without expected answers ({listed(list(layout), 3)})",
        )
        return
    for file in dict.fromkeys([*new, *old]):
        cases_old = {str(c.get("name")): c for c in old.get(file) or []}
        cases_new = {str(c.get("name")): c for c in new.get(file) or []}
        where = f"vectors.{file}"
        added = [n for n in cases_new if n not in cases_old]
        removed = [n for n in cases_old if n not in cases_new]
        changed = [
            n
            for n in cases_new
            if n in cases_old
            and any(
                cases_old[n].get(k) != cases_new[n].get(k) for k in ("function", "input", "expect")
            )
        ]
        if changed:
            rec.add(
                where,
                "vector.answer_changed",
                f"expected answers changed ({len(changed)}): {listed(changed)}",
            )
        if added:
            rec.add(where, "vector.added", f"cases added ({len(added)}): {listed(added)}")
        if removed:
            rec.add(where, "vector.removed", f"cases removed ({len(removed)}): {listed(removed)}")


def surface(rec: Recorder) -> None:
    old = rec.old.raw.get("surface.yaml") or {}
    new = rec.new.raw.get("surface.yaml") or {}
    keys = [
        k
        for k in dict.fromkeys([*old, *new])
        if k not in ("spec_version", "files") and old.get(k) != new.get(k)
    ]
    if keys:
        rec.add("surface", "editorial", ", ".join(keys) + " changed")


def bookkeeping(rec: Recorder) -> None:
    """Files that changed without any change above: said, so nothing passes unseen."""
    prefixes = {
        "grammars.yaml": ("grammars.",), "errors.yaml": ("errors.",), "models.yaml": ("models.",),
        "profiles.yaml": ("meta_tools.", "profiles."), "amendments.yaml": ("amendments.",),
        "requirements.yaml": ("requirements",), "vectors.yaml": ("vectors.",),
        "surface.yaml": ("surface",), **{f: ("rules.",) for f in RULE_FILES},
    }  # fmt: skip
    hashes_old, hashes_new = rec.old.file_hashes, rec.new.file_hashes
    bumped_only = unversioned(rec.old) == unversioned(rec.new)
    quiet = [
        f
        for f in dict.fromkeys([*hashes_new, *hashes_old])
        if hashes_old.get(f) != hashes_new.get(f)
        and not (f == "surface.yaml" and bumped_only)
        and not any(c.where.startswith(prefixes.get(f, ("\0",))) for c in rec.changes)
    ]
    if quiet:
        rec.add(
            "files", "bookkeeping", "changed with no change to the surface: " + ", ".join(quiet)
        )


def unversioned(snap: Snapshot) -> Any:
    """surface.yaml without spec_version: a bump alone is no change to report."""
    surface = snap.raw.get("surface.yaml")
    return (
        {k: v for k, v in surface.items() if k != "spec_version"}
        if isinstance(surface, dict)
        else surface
    )


def listed(names: list[str], limit: int = 6) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")
