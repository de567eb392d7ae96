"""The generated package carries the support library verbatim, depends on nothing the
support library may not, and importing it never imports hypothesis."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = ROOT / "generator" / "support"
COPY = ROOT / "generated" / "gatespec_surface" / "_support"
MODULES = sorted(p.name for p in SUPPORT.glob("*.py"))


@pytest.mark.parametrize("name", MODULES)
def test_the_package_holds_a_verbatim_copy(name: str) -> None:
    copied = (COPY / name).read_text(encoding="utf-8")
    note, _, body = copied.partition("\n")
    assert note.startswith(f"# Copied from generator/support/{name}")
    assert body == (SUPPORT / name).read_text(encoding="utf-8")


def test_nothing_else_is_in_the_copy() -> None:
    assert sorted(p.name for p in COPY.glob("*.py")) == MODULES


@pytest.mark.parametrize("name", MODULES)
def test_support_depends_on_the_stdlib_pydantic_and_hypothesis_only(name: str) -> None:
    """The decision for generator/support: the standard library, pydantic where needed, and
    hypothesis in the strategies module alone."""
    allowed = set(sys.stdlib_module_names) | {"pydantic"}
    if name == "strategies.py":
        allowed.add("hypothesis")
    tree = ast.parse((SUPPORT / name).read_text(encoding="utf-8"))
    imported = {
        alias.name.split(".")[0]
        for n in ast.walk(tree)
        if isinstance(n, ast.Import)
        for alias in n.names
    } | {
        n.module.split(".")[0]
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and n.level == 0 and n.module
    }
    assert imported <= allowed, imported - allowed


def test_importing_the_surface_never_imports_hypothesis() -> None:
    modules = [
        "grammars", "parsers", "budgets", "render", "validators", "schemas", "descriptors",
        "requirements", "seed_facts", "errors", "models", "records", "vectors",
    ]  # fmt: skip
    code = "import sys\n" + "".join(f"import gatespec_surface.{m}\n" for m in modules)
    code += "assert 'hypothesis' not in sys.modules, 'hypothesis imported'\n"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
