# Copied from generator/support/selectors.py by `make generate`; do not edit.
"""tool_view selectors: "all", "lines:A-B", "bytes:A-B" and "json:POINTER"."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import ErrorFactory
from .grammar import GrammarInfo


@dataclass(frozen=True)
class ViewSelector:
    """A parsed selector. kind: all | lines | bytes | json. Line numbers are 1-based and
    inclusive; byte offsets 0-based and inclusive; end None means "to the end"."""

    kind: str
    start: int | None = None
    end: int | None = None
    pointer: str | None = None


class ViewSelectors:
    def __init__(self, view_selector: GrammarInfo, error: ErrorFactory) -> None:
        self.grammar = view_selector
        self.error = error

    def parse(self, value: object) -> ViewSelector:
        """Raises the grammar's error (ARGS_INVALID) for a malformed selector, a line 0 or a
        range that ends before it starts."""
        groups = self.grammar.match(value, self.error)
        assert isinstance(value, str)
        if value == "all":
            return ViewSelector("all")
        if groups["pointer"] is not None:
            return ViewSelector("json", pointer=groups["pointer"])
        kind, unit = ("lines", "line") if groups["line_start"] is not None else ("bytes", "byte")
        start_text, end_text = groups[f"{unit}_start"], groups[f"{unit}_end"]
        assert start_text is not None
        start = int(start_text)
        end = None if value.endswith("-") else (int(end_text) if end_text else start)
        if kind == "lines" and start < 1:
            raise self.error(self.grammar.error, f"selector {value!r}: lines start at 1", value)
        if end is not None and end < start:
            message = f"selector {value!r}: the range ends before it starts"
            raise self.error(self.grammar.error, message, value)
        return ViewSelector(kind, start, end)
