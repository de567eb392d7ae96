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

Values shorter than `MIN_SECRET_CHARS` are not recorded: replacing every "1" or "on" in a
message would garble it, and a value that short protects nothing.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Final

__all__ = ["MIN_SECRET_CHARS", "Written", "forget_all", "redact", "remember"]

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
