"""Session-wide test environment.

Semantic ranking is off unless a test turns it on (tests/runtime/ranking/test_semantic.py does, on
small catalogs): browse results then do not depend on whether the embedding model is
installed, and the suite does not spend minutes encoding large fixture catalogs. Embeddings a
test does make go to a temporary cache, never the user's. Gateways the tests start as
subprocesses inherit both settings.
"""

from __future__ import annotations

import os
import tempfile

os.environ["GATESPEC_SEMANTIC"] = "off"
os.environ["GATESPEC_CACHE_DIR"] = tempfile.mkdtemp(prefix="gatespec-test-cache-")
