"""Semantic versions of the spec: which position a bump raised, and which one a breaking change
must raise. Semantic versioning lets a 0.x version break at the minor position (0.1.0 -> 0.2.0),
so below 1.0 the minor position is the breaking one; from 1.0 it is the major one."""

from __future__ import annotations

import re

from ..ir import SEMVER


def parse(version: str) -> tuple[int, int, int]:
    if not SEMVER.fullmatch(version):
        raise ValueError(f"{version!r} is not a semantic version")
    core = re.match(r"(\d+)\.(\d+)\.(\d+)", version)
    assert core is not None
    major, minor, patch = (int(x) for x in core.groups())
    return major, minor, patch


def bump(old: str, new: str) -> str:
    """The position raised from old to new: major, minor, patch, none or backwards."""
    a, b = parse(old), parse(new)
    if b == a:
        return "none" if old == new else "patch"  # a pre-release tag changed
    if b < a:
        return "backwards"
    return ("major", "minor", "patch")[next(i for i in range(3) if a[i] != b[i])]


def breaking_position(version: str) -> str:
    """The position a breaking change must raise, starting from `version`."""
    return "major" if parse(version)[0] >= 1 else "minor"


def allows_breaking(old: str, new: str) -> bool:
    kind = bump(old, new)
    return kind == "major" or (kind == "minor" and breaking_position(old) == "minor")


def needed(old: str, breaking: bool) -> str:
    """The bump a change from `old` needs, in words."""
    if not breaking:
        return "any bump (nothing breaks)"
    position = breaking_position(old)
    below = ", the breaking position below 1.0" if position == "minor" else ""
    return f"a {position} bump from {old}{below}"
