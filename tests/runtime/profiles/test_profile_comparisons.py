"""A profile is chosen in one place, the registry (gatespec.profiles.registry): no comparison of
a profile name anywhere else in the runtime (issue 23), so a new profile is one registry row."""

from __future__ import annotations

import re
from pathlib import Path

from gatespec_surface import PROFILE_NAMES

RUNTIME = Path(__file__).resolve().parents[3] / "src" / "gatespec"
REGISTRY = RUNTIME / "profiles" / "registry.py"

_NAME = "|".join(map(re.escape, PROFILE_NAMES))
_QUOTED = rf"[\"'](?:{_NAME})[\"']"
COMPARISONS = re.compile(
    "|".join(
        (
            r"(?<!for )\b\w*profile\s*(?:==|!=|(?:not\s+)?in\b)",  # profile == …, profile in …
            rf"(?:==|!=)\s*{_QUOTED}",  # … == "aggregate"
            rf"{_QUOTED}\s*(?:==|!=)",  # "aggregate" != …
            rf"\bin\s*[(\[{{][^)\]}}]*{_QUOTED}",  # … in ("gateway", "search")
        )
    )
)


def comparisons(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if COMPARISONS.search(line)]


def test_the_pattern_finds_the_comparisons_it_forbids() -> None:
    found = comparisons(
        "if runtime.profile != 'aggregate':\n"
        'lazy = profile != "transparent"\n'
        "if options.profile in SERVED_PROFILES:\n"
        'if "search" == name:\n'
        'if kind in ("gateway", "search"):\n'
        "for profile in PROFILE_NAMES:\n"  # a loop is no comparison
        'profile = "aggregate"\n'  # nor an assignment
    )
    assert len(found) == 5, found


def test_no_profile_comparison_outside_the_registry() -> None:
    files = sorted(p for p in RUNTIME.rglob("*.py") if p != REGISTRY)
    assert len(files) > 50  # the runtime was found
    found = [
        f"{path.relative_to(RUNTIME)}: {line}"
        for path in files
        for line in comparisons(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "choose by the profile's registry row instead:\n" + "\n".join(found)
