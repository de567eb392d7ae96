"""The official MCP conformance suite through gatespec's unprefixed aggregate profile
(gateway.unprefixed, AM-AGGREGATE-UNPREFIXED) in front of the suite's reference server.

The npm package ships no server; official/reference_server.py is the server its scenarios
describe. The suite runs (--suite all) against that server directly over Streamable HTTP, and
against gatespec serving it as its one unprefixed upstream (stdio), with gatespec's upstream
session in each protocol era (the server answering server/discover, so gatespec's auto mode
speaks 2026-07-28 to it, or not, so it falls back to the handshake). Every scenario that passes
directly must pass through gatespec; the ones that fail both ways are listed, with the reason,
in official/unprefixed_baseline.yml. Slow: `make test-slow`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conformance.mutants.harness import free_port
from tests.conformance.test_official_suite import NODE, ROOT, SUITE, _listed, _outcomes, listening

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

OFFICIAL = Path(__file__).resolve().parent / "official"
REFERENCE = OFFICIAL / "reference_server.py"
BASELINE = OFFICIAL / "unprefixed_baseline.yml"
ERAS = {"2026-07-28": [], "legacy": ["legacy"]}


def _suite(url: str, out: Path) -> dict[str, set[str]]:
    argv = [str(NODE), str(SUITE), "server", "--url", url, "-o", str(out), "--suite", "all"]
    argv += ["--expected-failures", str(BASELINE)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=out.parent)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    return _outcomes(out)


def _passed(results: dict[str, set[str]]) -> set[str]:
    return {s for s, statuses in results.items() if "FAILURE" not in statuses}


def test_every_scenario_the_reference_server_passes_passes_through_gatespec(
    tmp_path: Path,
) -> None:
    if not NODE.exists() or not SUITE.exists():
        pytest.skip("the conformance suite or Node 22 is not installed (run `make install`)")
    port = free_port()
    reference = [sys.executable, str(REFERENCE), "http", str(port)]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT / "generated")]),
    }
    with listening(reference, port, tmp_path / "reference.err", env) as url:
        direct = _suite(url, tmp_path / "direct")
    assert len(direct) == 32
    passed_directly = _passed(direct)
    assert set(direct) - passed_directly == _listed(BASELINE)
    for era, extra in ERAS.items():
        upstream = {"command": sys.executable, "args": [str(REFERENCE), "stdio", *extra]}
        config = {
            "mcpServers": {"reference": upstream},
            "gateway": {"profile": "aggregate", "unprefixed": "reference"},
        }
        path = tmp_path / f"gatespec-{era}.json"
        path.write_text(json.dumps(config))
        port = free_port()
        argv = [sys.executable, "-m", "gatespec.cli", "serve", "--config", str(path)]
        argv += ["--transport", "http", "--port", str(port)]
        with listening(argv, port, tmp_path / f"gatespec-{era}.err", env) as url:
            through = _suite(url, tmp_path / era)
        assert set(through) == set(direct), era
        assert _passed(through) == passed_directly, era
