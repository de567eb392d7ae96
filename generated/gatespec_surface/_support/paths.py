# Copied from generator/support/paths.py by `make generate`; do not edit.
"""Browse paths (§3.2, AM-PATH-BOUNDS): "/" or "/ns/segment/...", optionally ending in "*"."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import ErrorFactory
from .grammar import GrammarInfo


@dataclass(frozen=True)
class PathParts:
    """A parsed browse path: its segments below the root and whether it ends in "*"."""

    segments: tuple[str, ...]
    star: bool

    @property
    def is_root(self) -> bool:
        return not self.segments


class Paths:
    def __init__(self, path: GrammarInfo, error: ErrorFactory) -> None:
        self.grammar = path
        self.error = error

    def parse(self, value: object) -> PathParts:
        """Raises the path grammar's error (PATH_INVALID) naming what was wrong."""
        self.grammar.match(value, self.error)
        assert isinstance(value, str)
        segments = [s for s in value.split("/") if s]
        star = bool(segments) and segments[-1] == "*"
        if star:
            segments.pop()
        return PathParts(tuple(segments), star)

    def format(self, parts: PathParts) -> str:
        text = "/" + "/".join([*parts.segments, *(["*"] if parts.star else [])])
        self.grammar.match(text, self.error)
        return text
