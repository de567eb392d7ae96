"""`python -m generator --templates DIR`: a file in DIR overrides the built-in template of the
same name (as openapi-python-client's custom templates do); every other file renders as built
in, and `check` judges generated/ against the same overrides."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINE = 'CUSTOM: Final = "from a custom template"'


def _generator(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "generator", *args], cwd=ROOT, capture_output=True, text=True
    )


def _tree(root: Path) -> dict[Path, bytes]:
    return {
        p.relative_to(root): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_a_template_folder_overrides_built_in_templates_by_name(tmp_path: Path) -> None:
    custom = tmp_path / "templates"
    custom.mkdir()
    builtin = (ROOT / "generator" / "templates" / "init.py.j2").read_text(encoding="utf-8")
    (custom / "init.py.j2").write_text(builtin + f"\n{LINE}\n", encoding="utf-8")
    out = tmp_path / "generated"
    proc = _generator("--out", str(out), "--templates", str(custom))
    assert proc.returncode == 0, proc.stderr

    init = Path("gatespec_surface") / "__init__.py"
    assert LINE in (out / init).read_text(encoding="utf-8")
    fresh, built_in = _tree(out), _tree(ROOT / "generated")
    assert fresh.keys() == built_in.keys()
    assert [p for p in fresh if fresh[p] != built_in[p]] == [init]

    assert _generator("check", "--out", str(out), "--templates", str(custom)).returncode == 0
    stale = _generator("check", "--out", str(out))
    assert stale.returncode == 1 and f"-{LINE}" in stale.stdout


def test_templates_must_be_a_folder(tmp_path: Path) -> None:
    proc = _generator("--out", str(tmp_path / "g"), "--templates", str(tmp_path / "missing"))
    assert proc.returncode == 2
    assert "not a folder" in proc.stderr
