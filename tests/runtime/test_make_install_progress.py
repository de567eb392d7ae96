"""`make install` says on stderr what it is doing before each long step (issue 24: a first
`make run` was silent for minutes). Run for real with pip and npm replaced by `true`, into a
stamp file of the test's own, so nothing is installed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
def test_install_announces_each_long_step_on_stderr(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            "make",
            "-s",
            "install",
            f"STAMP={tmp_path / 'installed'}",
            f"VENV={tmp_path / 'venv'}",
            f"PY={shutil.which('true')}",
            f"PYTHON={shutil.which('true')}",
            f"NPM={shutil.which('true')}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # `make run`'s stdout is the MCP channel
    lines = done.stderr.splitlines()
    assert [line.split(" (")[0] for line in lines] == [
        f"gatespec: installing Python packages into {tmp_path / 'venv'}",
        "gatespec: installing the npm test servers into node_modules",
        "gatespec: installed",
    ]
    assert (tmp_path / "installed").exists()
