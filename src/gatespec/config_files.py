"""A config file's text read as a document (JSON, or YAML by extension), each failure a
ConfigError that says where: the file, and the line and column of a syntax error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from gatespec.config_reader import ConfigError

__all__ = ["read_document"]


def read_document(source: Path) -> Any:
    """The parsed document of the config file at `source` (validation is config.py's)."""
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(source, "", f"cannot read file: {e.strerror or e}") from e
    except UnicodeDecodeError as e:
        raise ConfigError(source, "", f"file is not UTF-8 text: {e}") from e
    if source.suffix.lower() in (".yaml", ".yml"):
        return _parse_yaml(text, source)
    return _parse_json(text, source)


def _parse_json(text: str, source: Path) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigError(
            source, "", f"invalid JSON at line {e.lineno}, column {e.colno}: {e.msg}"
        ) from e


def _parse_yaml(text: str, source: Path) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        problem = getattr(e, "problem", None) or str(e)
        if mark is not None:
            raise ConfigError(
                source,
                "",
                f"invalid YAML at line {mark.line + 1}, column {mark.column + 1}: {problem}",
            ) from e
        raise ConfigError(source, "", f"invalid YAML: {problem}") from e
