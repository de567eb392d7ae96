"""The places outside spec/ that name the spec version, kept in step with `spec_version`.

The runtime pins the surface distribution it implements (pyproject.toml, twice) and states the
spec major.minor it was written for (`SUPPORTED_SPEC`). A bump that misses one of them leaves a
checkout where pip cannot resolve the pin, or where `gatespec` refuses to import: `bump` rewrites
them all at once and `disagreements` (run by `version-check`) names any that are out of step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

SEMVER = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)")


@dataclass(frozen=True)
class Pin:
    """One statement of the spec version: a file and the pattern holding the version in it.
    `group` of `pattern` is the version text; `render` writes it for a given version."""

    path: str
    pattern: re.Pattern[str]
    render: str  # a format string over major, minor, patch
    label: str


PINS = (
    Pin(
        "spec/surface.yaml",
        re.compile(r"^spec_version: (\S+)$", re.M),
        "{major}.{minor}.{patch}",
        "spec_version",
    ),
    Pin(
        "pyproject.toml",
        re.compile(r'"gatespec-surface\[mcp\]==([^"]+)"'),
        "{major}.{minor}.{patch}",
        "the runtime's pin of gatespec-surface[mcp]",
    ),
    Pin(
        "pyproject.toml",
        re.compile(r'"gatespec-surface\[strategies\]==([^"]+)"'),
        "{major}.{minor}.{patch}",
        "the conformance extra's pin of gatespec-surface[strategies]",
    ),
    Pin(
        "src/gatespec/__init__.py",
        re.compile(r"^SUPPORTED_SPEC = \((\d+, \d+)\)$", re.M),
        "{major}, {minor}",
        "the runtime's SUPPORTED_SPEC",
    ),
)


class PinError(ValueError):
    """A version that is not major.minor.patch, or a file whose pin cannot be found."""


def parse(version: str) -> dict[str, str]:
    match = SEMVER.fullmatch(version)
    if match is None:
        raise PinError(f"{version!r} is not a version of the form MAJOR.MINOR.PATCH")
    return dict(zip(("major", "minor", "patch"), match.groups(), strict=True))


def spec_version(root: Path) -> str:
    return str(yaml.safe_load((root / "spec/surface.yaml").read_text("utf-8"))["spec_version"])


def _present(root: Path) -> list[Pin]:
    """The pins whose files this tree has (a spec folder alone, as in tests, has only one)."""
    return [pin for pin in PINS if (root / pin.path).is_file()]


def _found(root: Path, pin: Pin) -> re.Match[str]:
    match = pin.pattern.search((root / pin.path).read_text("utf-8"))
    if match is None:
        raise PinError(f"{pin.path}: {pin.label} not found (pattern {pin.pattern.pattern})")
    return match


def disagreements(root: Path) -> list[str]:
    """One line per pin that does not state spec/surface.yaml's version."""
    fields = parse(spec_version(root))
    problems = []
    for pin in _present(root):
        stated = _found(root, pin).group(1)
        wanted = pin.render.format(**fields)
        if stated != wanted:
            problems.append(
                f"{pin.path}: {pin.label} is {stated}, spec_version {spec_version(root)} "
                f"needs {wanted} (`python -m generator bump VERSION` keeps them in step)"
            )
    return problems


def bump(root: Path, version: str) -> list[str]:
    """Write `version` into every pin; answers the files changed."""
    fields = parse(version)
    # every pin found before any is written
    matches = [(pin, _found(root, pin)) for pin in _present(root)]
    changed: list[str] = []
    for pin, _ in matches:
        path = root / pin.path
        text = path.read_text("utf-8")
        match = pin.pattern.search(text)
        assert match is not None  # found above; earlier pins in one file keep their places
        new = text[: match.start(1)] + pin.render.format(**fields) + text[match.end(1) :]
        if new != text:
            path.write_text(new, "utf-8")
            if pin.path not in changed:
                changed.append(pin.path)
    return changed
