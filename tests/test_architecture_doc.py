"""docs/architecture.md names every runtime module, so a newcomer finds each concern from the
map (issue 23: the map had fallen behind the tree twice). Training code is listed as a folder."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_runtime_module_is_on_the_map() -> None:
    doc = (ROOT / "docs/architecture.md").read_text(encoding="utf-8")
    src = ROOT / "src/gatespec"
    unnamed = [
        str(path.relative_to(src))
        for path in sorted(src.rglob("*.py"))
        if path.name != "__init__.py"
        and "train" not in path.relative_to(src).parts
        and f"{path.name}`" not in doc
        and f"{path.name} " not in doc
    ]
    assert unnamed == [], f"docs/architecture.md does not name: {unnamed}"
