"""`gatespec spec …` forwards to the generator in a repository checkout, says what it needs
anywhere else, and the runtime never imports the generator by itself."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from gatespec import cli
from gatespec.cli import spec as spec_tool

ROOT = Path(__file__).resolve().parents[2]


def test_spec_diff_runs_the_generator_in_a_checkout(
    monkeypatch: pytest.MonkeyPatch, capfd: Any
) -> None:
    monkeypatch.chdir(ROOT)
    assert cli.main(["spec", "diff", "spec", "spec", "--format", "json"]) == 0
    doc = json.loads(capfd.readouterr().out)  # the generator's own process wrote it
    assert doc["changes"] == [] and doc["breaking"] == {"clients": False, "implementations": False}


def test_outside_a_checkout_it_says_what_it_needs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(spec_tool, "checkouts", lambda: [tmp_path])
    for name in [m for m in sys.modules if m == "generator" or m.startswith("generator.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "generator", None)  # not importable, as from a wheel
    assert cli.main(["spec", "diff", "v0.1", "spec"]) == 2
    err = capsys.readouterr().err
    assert "spec tooling needs the gatespec repository" in err and "Traceback" not in err


def test_the_runtime_never_imports_the_generator_or_the_kit() -> None:
    """Not by an import statement, nor by name at run time (importlib.import_module,
    __import__), which import linters cannot see: the CLI runs them as programs
    (gatespec.cli.delegate)."""
    for path in sorted((ROOT / "src" / "gatespec").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )
            imported = {n.split(".")[0] for n in names}
            assert not imported & {"generator", "gatespec_conformance"}, path
            called = node.func if isinstance(node, ast.Call) else None
            name = (
                called.attr
                if isinstance(called, ast.Attribute)
                else called.id
                if isinstance(called, ast.Name)
                else ""
            )
            assert name not in {"import_module", "__import__"}, f"{path}:{node.lineno}"


def test_the_generators_exit_status_is_the_commands(
    monkeypatch: pytest.MonkeyPatch, capfd: Any
) -> None:
    monkeypatch.chdir(ROOT)
    assert cli.main(["spec", "diff", "spec", "spec", "--format", "yaml"]) == 2  # argparse's
    assert "invalid choice: 'yaml'" in capfd.readouterr().err


@pytest.mark.timeout(60)
def test_in_a_checkout_without_the_generators_extras_it_says_what_to_install() -> None:
    """Issue 22 #18: `gatespec spec diff --help` inside a checkout, from an install without
    the generator's extras (jinja2 not importable), ended in a ModuleNotFoundError traceback."""
    import subprocess

    code = (
        "import sys; sys.modules['jinja2'] = None; sys.modules['datamodel_code_generator'] = None\n"
        "from gatespec.cli import main; sys.exit(main(['spec', 'diff', '--help']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert "gatespec[generator]" in done.stderr and "jinja2" in done.stderr
