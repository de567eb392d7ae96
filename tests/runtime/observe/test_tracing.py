"""The tracing tests (tracing_cases.py) in a process of their own.

OpenTelemetry's API takes one global tracer provider per process, and the tracers resolved
while it is set (the MCP SDK's among them) keep it after it is reset: run in the suite's
process, the in-memory provider of those tests went on stamping `traceparent` into the
`_meta` of later tests' upstream requests, whose assertions then failed. So the cases run in
a child pytest, and this test passes when all of them do.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CASES = Path(__file__).with_name("tracing_cases.py")
ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.timeout(300)
def test_tracing_cases_pass_in_their_own_process() -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT / "generated"), str(ROOT)]),
    }
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(CASES)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and " failed" not in run.stdout
