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
import tempfile

from hypothesis import settings

settings.register_profile("gatespec")
settings.load_profile("gatespec")

os.environ["GATESPEC_SEMANTIC"] = "off"
os.environ["GATESPEC_CACHE_DIR"] = tempfile.mkdtemp(prefix="gatespec-test-cache-")
