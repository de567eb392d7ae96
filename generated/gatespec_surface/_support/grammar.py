# Copied from generator/support/grammar.py by `make generate`; do not edit.
"""A compiled grammar of the surface: full-match acceptance within the length cap, and errors
that say what was wrong with a rejected value."""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from .errors import ErrorFactory

Captures = dict[str, str | None]
Matcher = Callable[[object], Captures]

_SHOWN_MAX = 80


@dataclass(frozen=True)
class GrammarInfo:
    """One grammar: its patterns, length bounds, error code and named captures. `alphabet`
    holds every character the grammar can use (None when a negated class makes it open)."""

    name: str
    summary: str
    syntax: str
    pattern: str  # Python regex with named captures; use with fullmatch
    json_pattern: str  # portable JSON-Schema pattern
    min_length: int
    max_length: int | None
    error: enum.StrEnum
    captures: tuple[str, ...]
    alphabet: str | None = None
    regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "regex", re.compile(self.pattern))

    def accepts(self, value: object) -> bool:
        """True when `value` is a string the grammar matches in full, within its length cap."""
        return (
            isinstance(value, str)
            and (self.max_length is None or len(value) <= self.max_length)
            and self.regex.fullmatch(value) is not None
        )

    def match(self, value: object, error: ErrorFactory) -> Captures:
        """The named captures of a full match; raises the grammar's error naming what was
        wrong."""
        if not isinstance(value, str):
            message = f"{self.name} must be a string, not {type(value).__name__}"
            raise error(self.error, message, repr(value)[:_SHOWN_MAX])
        m = None
        if self.max_length is None or len(value) <= self.max_length:
            m = self.regex.fullmatch(value)
        if m is None:
            raise error(self.error, self.explain(value), value)
        return m.groupdict()

    def matcher(self, error: ErrorFactory) -> Matcher:
        """`match` bound to an error factory: the generated `match_NAME` functions."""

        def match(value: object) -> Captures:
            return self.match(value, error)

        match.__name__ = f"match_{self.name}"
        match.__doc__ = f"The named captures of a full {self.name}; raises {self.error}."
        return match

    def explain(self, value: str) -> str:
        """What is wrong with a value the grammar rejects, as precisely as is cheap."""
        shown = value if len(value) <= _SHOWN_MAX else value[: _SHOWN_MAX - 3] + "..."
        if value == "":
            return f"{self.name} is empty; expected {self.syntax}"
        if self.max_length is not None and len(value) > self.max_length:
            return (
                f"{self.name} {shown!r} is {len(value)} characters; the limit is {self.max_length}"
            )
        if len(value) < self.min_length:
            return f"{self.name} {shown!r} is {len(value)} characters; the minimum is {self.min_length}"
        if value[-1] in "\n\r":
            return f"{self.name} {shown!r} ends with a line break"
        if self.alphabet is not None:
            for i, ch in enumerate(value):
                if ch not in self.alphabet:
                    return (
                        f"{self.name} {shown!r} has {ch!r} at position {i}, which it never allows"
                    )
        return f"{self.name} {shown!r} does not match {self.syntax}"
