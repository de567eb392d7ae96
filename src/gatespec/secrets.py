"""Secrets from the environment never surface (issue 12 #2).

A config's ``${VAR}`` references are expanded from the environment when it is loaded; the
values can be API keys in an upstream's arguments, URL query string, headers or env. Two rules
keep them out of every message the gateway writes (errors an agent sees, `gatespec catalog`,
start-up progress, logs):

- text the gateway composes from a config quotes the config *as written* (`Written`: the
  command, arguments and URL with their ``${VAR}`` references unexpanded), never the expanded
  values;
- text from elsewhere that may quote them (an upstream's stderr, an OS or HTTP error naming
  the command or URL, an upstream's error message) goes through `redact`, which replaces every
  value a ``${VAR}`` expanded to (the exact strings, recorded by the config loader) with the
  reference. `UpstreamError`, `ConfigError` and the log formatter apply it to all they carry.

Text that is cut (the last characters of a long stderr) is redacted before it is cut, never
after (`redact_tail`): a cut inside a value would leave the rest of it unrecognised. Where the
text handed over begins at a cut already (a window read from the end of a file), any suffix
of a value at that start is taken for the value, and any prefix of one at an end cut.

Values shorter than `MIN_SECRET_CHARS` are not recorded: replacing every "1" or "on" in a
message would garble it, and a value that short protects nothing.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Final

__all__ = ["MIN_SECRET_CHARS", "Written", "forget_all", "redact", "redact_tail", "remember"]

MIN_SECRET_CHARS: Final = 4


@dataclass(frozen=True)
class Written:
    """How one upstream is written in its config: what messages may quote."""

    command: str | None = None
    args: tuple[str, ...] = ()
    url: str | None = None

    def target(self) -> str:
        """The URL, or the command line, as written."""
        if self.url is not None:
            return self.url
        return " ".join([self.command or "", *self.args]).strip()


class _Redactor:
    """The expanded values seen so far, each with the reference it came from."""

    def __init__(self) -> None:
        self._names: dict[str, str] = {}
        self._pattern: re.Pattern[str] | None = None
        self._lock = threading.Lock()

    def remember(self, value: str, name: str) -> None:
        if len(value) < MIN_SECRET_CHARS or value in self._names:
            return
        with self._lock:
            self._names[value] = name
            # Longest first, so a value containing another is replaced whole.
            alternatives = sorted(self._names, key=len, reverse=True)
            self._pattern = re.compile("|".join(map(re.escape, alternatives)))

    def redact(self, text: str) -> str:
        pattern = self._pattern
        if pattern is None or not text:
            return text
        return pattern.sub(lambda m: f"${{{self._names[m.group()]}}}", text)

    def pieces(self, text: str, cut_before: bool, cut_after: bool) -> list[tuple[str, bool]]:
        """`text` as (piece, is_a_reference) pieces, every value replaced; a proper suffix
        of a value at its start (cut_before) and a proper prefix at its end (cut_after) too."""
        names, pattern = dict(self._names), self._pattern
        if pattern is None or not text:
            return [(text, False)] if text else []
        head: list[tuple[str, bool]] = []
        tail: list[tuple[str, bool]] = []
        if cut_before:
            for k in range(min(len(text), max(map(len, names)) - 1), 0, -1):
                owner = next((v for v in names if v.endswith(text[:k])), None)
                if owner is not None:
                    head, text = [(f"${{{names[owner]}}}", True)], text[k:]
                    break
        if cut_after:
            for k in range(min(len(text), max(map(len, names)) - 1), 0, -1):
                owner = next((v for v in names if v.startswith(text[-k:])), None)
                if owner is not None:
                    tail, text = [(f"${{{names[owner]}}}", True)], text[:-k]
                    break
        out, at = head, 0
        for match in pattern.finditer(text):
            if match.start() > at:
                out.append((text[at : match.start()], False))
            out.append((f"${{{names[match.group()]}}}", True))
            at = match.end()
        if at < len(text):
            out.append((text[at:], False))
        return out + tail

    def forget_all(self) -> None:
        with self._lock:
            self._names.clear()
            self._pattern = None


_REDACTOR: Final = _Redactor()


def remember(value: str, name: str) -> None:
    """Record that ``${name}`` expanded to `value` (the config loader calls this)."""
    _REDACTOR.remember(value, name)


def redact(text: str) -> str:
    """`text` with every remembered value replaced by its ``${NAME}`` reference."""
    return _REDACTOR.redact(text)


def forget_all() -> None:
    """Forget every remembered value (tests)."""
    _REDACTOR.forget_all()


def redact_tail(text: str, max_chars: int, cut_before: bool = False) -> str:
    """The last `max_chars` characters of `text` once redacted (redact, then cut). A reference
    the cut would split is kept whole. `cut_before`: `text` itself begins at a cut (a window
    of something longer), so a suffix of a value at its start is treated as the value."""
    kept: list[str] = []
    room = max_chars
    for piece, is_reference in reversed(_REDACTOR.pieces(text, cut_before, cut_after=False)):
        if room <= 0:
            break
        if is_reference or len(piece) <= room:
            kept.append(piece)
            room -= len(piece)
        else:
            kept.append(piece[-room:])
            room = 0
    return "".join(reversed(kept))
