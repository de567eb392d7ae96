"""Copies of spec/ with one file edited, for tests of what the generator makes of an edit."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]


def edited_spec(tmp_path: Path, file: str, change: Callable[[Any], None]) -> Path:
    """spec/ copied under tmp_path, with `change` applied to `file`'s YAML (comments dropped)."""
    spec = tmp_path / "spec"
    shutil.copytree(ROOT / "spec", spec)
    data = yaml.safe_load((spec / file).read_text(encoding="utf-8"))
    change(data)
    (spec / file).write_text(
        yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8"
    )
    return spec
