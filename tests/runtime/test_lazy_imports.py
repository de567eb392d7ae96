"""A serve imports only what it uses (issue 27, memory): a fresh interpreter builds what
`gatespec serve` builds before its first request, and the heavy packages a stdio serve needs
only later (or never) must not be in sys.modules yet. Each check is followed by the use that
does need the module, which must then import it: the probe sees an import when one happens."""

from __future__ import annotations

import json
import os
import subprocess
import sys

# What a stdio serve in front of upstreams builds before its first request: config, profile
# runtime, server, the ranking line, the tracing switch and the (unset) observation port.
_SERVED = """
import json, sys
from gatespec import cli, tokens
from gatespec.catalog import Catalog
from gatespec.config import parse_config
from gatespec.observe import tracing
from gatespec.observe.port import observe_port
from gatespec.profiles import registry
from gatespec.rank_cli import ranking_status
from gatespec.server import transports

HEAVY = ("numpy", "jwt", "snowballstemmer", "onnxruntime", "tokenizers", "opentelemetry.sdk",
         "redis", "gatespec.browse", "gatespec.ranking.bm25", "gatespec.ranking.ranker")
seen = {}
def probe(label):
    seen[label] = sorted(m for m in HEAVY if m in sys.modules)

config = parse_config({"mcpServers": {}, "gateway": {}}, environ={})
runtime = registry.profile_named(PROFILE).runtime(config, PROFILE)
server = registry.build_server(runtime, fallback_session="stdio")
ranking_status()
with tracing.traced(config.options.tracing), observe_port(server, "127.0.0.1", None):
    pass
probe("served")
seen["encoder loaded"] = tokens._encoding is not None
tools = {"files": [{"name": "read_file", "description": "Read a text file.",
                    "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}}]}
from gatespec.snapshot import build_snapshot
built = build_snapshot(Catalog.build(tools))
built.browser.browse(path="/files")
probe("path browsed")
built.browser.browse(query="read a file")
probe("query browsed")
print(json.dumps(seen))
"""


def _served(profile: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "GATESPEC_SEMANTIC": "0"}
    code = f"PROFILE = {profile!r}\n{_SERVED}"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_served_gateway_defers_browse_ranking_jwt_and_the_encoder() -> None:
    seen = _served("gateway")
    assert seen["served"] == []
    assert seen["encoder loaded"] is False
    # A path browse builds the tree (and loads the encoder) but no lexical index: neither numpy
    # nor the Snowball stemmer; the first query builds it.
    assert "gatespec.browse" in seen["path browsed"]
    assert not {"numpy", "snowballstemmer"} & set(seen["path browsed"])
    assert {"numpy", "snowballstemmer"} <= set(seen["query browsed"])


def test_the_transparent_profile_lists_cards_without_the_lexical_index() -> None:
    seen = _served("transparent")
    # Its listing needs the cards (so the browse tree) from the start, never PyJWT; a snapshot
    # of a real catalog (what its listing builds) has no lexical index, so no numpy.
    assert "gatespec.browse" in seen["served"]
    assert not {"numpy", "snowballstemmer", "jwt", "onnxruntime"} & set(seen["served"])
    assert not {"numpy", "snowballstemmer"} & set(seen["path browsed"])
