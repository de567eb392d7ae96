"""Reading a config document's values: typed accessors that know the file, name the key path
of every problem and expand ``${VAR}`` (gatespec.config says the rules).

`Reader` is the one reader of config values: gatespec.config reads the ``mcpServers`` entries
and the ``gateway`` block with it, gatespec.access.config and gatespec.state.config the
blocks they own.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from gatespec import secrets

__all__ = ["ConfigError", "Reader", "expand_env", "kind_of", "suggest"]

_VAR: Final = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class ConfigError(ValueError):
    """A configuration problem; the message names the file, the key path and what is wrong."""

    def __init__(self, source: Path | str | None, path: str, problem: str) -> None:
        self.source = source
        self.path = path
        problem = secrets.redact(problem)  # it may quote an expanded value
        self.problem = problem
        where = str(source) if source is not None else "<config>"
        super().__init__(f"{where}: {path}: {problem}" if path else f"{where}: {problem}")


def expand_env(
    value: str, environ: Mapping[str, str], *, source: Path | None = None, path: str = ""
) -> str:
    """Expand ``${VAR}`` and ``${VAR:-default}`` in one string; unset VAR without default: error."""

    def substitute(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        current = environ.get(name)
        if current:
            secrets.remember(current, name)  # never quoted again (gatespec.secrets)
            return current
        if default is not None:
            return default
        if current is not None:  # set but empty, no default: keep the (empty) value
            return current
        raise ConfigError(
            source,
            path,
            f"environment variable {name} is not set (use ${{{name}:-default}} for a default)",
        )

    return _VAR.sub(substitute, value)


def kind_of(value: Any) -> str:
    """How a problem message names the JSON kind of `value` ("a string", "an array"...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


class Reader:
    """Typed accessors that know the file and expand the environment; one per parse."""

    def __init__(self, source: Path | None, environ: Mapping[str, str]) -> None:
        self.source = source
        self.environ = environ
        self.base = source.parent if source is not None else Path.cwd()

    def error(self, path: str, problem: str) -> ConfigError:
        return ConfigError(self.source, path, problem)

    def string(self, value: Any, path: str, *, allow_empty: bool = False) -> str:
        if not isinstance(value, str):
            raise self.error(path, f"expected a string, got {kind_of(value)}")
        expanded = expand_env(value, self.environ, source=self.source, path=path)
        if not expanded and not allow_empty:
            raise self.error(path, "must not be empty")
        return expanded

    def string_map(self, value: Any, path: str) -> dict[str, str]:
        if not isinstance(value, dict):
            raise self.error(path, f"expected an object of strings, got {kind_of(value)}")
        out: dict[str, str] = {}
        for k, v in value.items():
            if not isinstance(k, str) or not k:
                raise self.error(f"{path}.{k!r}", "a key must be a non-empty string")
            out[k] = self.string(v, f"{path}.{k}", allow_empty=True)
        return out

    def number(self, value: Any, path: str, *, allow_zero: bool = False) -> float:
        """A positive finite number of seconds (or 0 with allow_zero); a string (e.g. from
        ${VAR}) is parsed."""
        if isinstance(value, str):
            text = self.string(value, path)
            try:
                value = float(text)
            except ValueError:
                raise self.error(path, f"expected a number of seconds, got {text!r}") from None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(path, f"expected a number of seconds, got {kind_of(value)}")
        if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
            wanted = "zero or a positive" if allow_zero else "a positive"
            raise self.error(path, f"must be {wanted} number of seconds, got {value!r}")
        return float(value)

    def boolean(self, value: Any, path: str) -> bool:
        if isinstance(value, str):
            text = self.string(value, path).strip().lower()
            if text in ("true", "1", "yes"):
                return True
            if text in ("false", "0", "no"):
                return False
            raise self.error(path, f"expected true or false, got {text!r}")
        if not isinstance(value, bool):
            raise self.error(path, f"expected true or false, got {kind_of(value)}")
        return value

    def path(self, value: Any, path: str) -> Path:
        p = Path(self.string(value, path)).expanduser()
        return p if p.is_absolute() else self.base / p

    def count(self, value: Any, path: str, minimum: int = 1) -> int:
        """A whole number of at least `minimum` (a string from ${VAR} is parsed)."""
        if isinstance(value, str):
            text = self.string(value, path).strip()
            value = int(text) if text.isdigit() else text
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.error(path, f"expected a whole number of at least {minimum}, got {value!r}")
        return value

    def globs(self, value: Any, path: str) -> tuple[str, ...]:
        if not isinstance(value, list):
            raise self.error(path, f"expected an array of glob patterns, got {kind_of(value)}")
        return tuple(self.string(v, f"{path}[{i}]") for i, v in enumerate(value))

    def port(self, value: Any, path: str) -> int:
        if isinstance(value, str):
            text = self.string(value, path).strip()
            if not text.isdigit():
                raise self.error(path, f"expected a port number 1-65535, got {text!r}")
            value = int(text)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(path, f"expected a port number 1-65535, got {kind_of(value)}")
        if not 1 <= value <= 65535:
            raise self.error(path, f"expected a port number 1-65535, got {value}")
        return value


def suggest(key: str, known: frozenset[str]) -> str:
    """A 'did you mean' hint for a near-miss key (case-insensitive or one edit away)."""
    import difflib

    lowered = {k.lower(): k for k in known}
    if key.lower() in lowered:
        return f" (did you mean {lowered[key.lower()]!r}?)"
    close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.75)
    return f" (did you mean {close[0]!r}?)" if close else ""
