"""Session-wide test environment.

Semantic ranking is off unless a test turns it on (tests/runtime/ranking/test_semantic.py does, on
small catalogs): browse results then do not depend on whether the embedding model is
installed, and the suite does not spend minutes encoding large fixture catalogs. Embeddings a
test does make go to a temporary cache, never the user's. Gateways the tests start as
subprocesses inherit both settings.

Hypothesis runs without its per-example deadline: a deadline is a timed assertion, and on a
shared 2-core machine it failed examples that were only slow (speed is measured by `make bench`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("gatespec", deadline=None)
settings.load_profile("gatespec")

os.environ["GATESPEC_SEMANTIC"] = "off"
os.environ["GATESPEC_CACHE_DIR"] = tempfile.mkdtemp(prefix="gatespec-test-cache-")


@pytest.fixture(scope="session")
def fresh_generation(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding generated/ and generated-ts/ rendered afresh from spec/ (under
    PYTHONHASHSEED=0), once for the tests that compare or copy it: they never edit it in place."""
    folder = tmp_path_factory.mktemp("fresh-generation")
    subprocess.run(
        [sys.executable, "-m", "generator", "--out", str(folder / "generated")],
        cwd=Path(__file__).resolve().parents[1],
        env={**os.environ, "PYTHONHASHSEED": "0"},
        check=True,
        capture_output=True,
    )
    return folder
