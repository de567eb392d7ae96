"""The conformance kit and the runtime stay apart: gatespec is, to the kit, one more
implementation under test (started by its command line), and the runtime never needs the kit."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"


def imported_modules(package: str) -> dict[str, set[str]]:
    """file -> every module its import statements name (relative imports resolved)."""
    out: dict[str, set[str]] = {}
    for path in sorted((SRC / package).rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                names.add(package if node.level else (node.module or ""))
        out[str(path.relative_to(SRC))] = names
    return out


def _under(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_the_runtime_imports_nothing_from_the_kit() -> None:
    found = {
        f: sorted(n for n in names if _under(n, "gatespec_conformance"))
        for f, names in imported_modules("gatespec").items()
    }
    assert {f: n for f, n in found.items() if n} == {}


def test_the_kit_imports_nothing_from_the_runtime() -> None:
    found = {
        f: sorted(n for n in names if _under(n, "gatespec"))
        for f, names in imported_modules("gatespec_conformance").items()
    }
    assert {f: n for f, n in found.items() if n} == {}


@pytest.mark.parametrize(
    ("package", "foreign"),
    [("gatespec_conformance", "gatespec"), ("gatespec", "gatespec_conformance")],
)
def test_importing_every_module_loads_nothing_of_the_other(package: str, foreign: str) -> None:
    modules = sorted(
        ".".join(p.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")
        for p in (SRC / package).rglob("*.py")
        if p.name != "__main__.py"
    )
    script = (
        "import importlib, json, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        f"print(json.dumps(sorted(n for n in sys.modules if n == {foreign!r} "
        f"or n.startswith({foreign + '.'!r}))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout) == []
