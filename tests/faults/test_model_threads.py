"""Issue 22 #10: a stdio gateway whose client goes away while the embedding model is being
loaded or is encoding (onnxruntime's worker threads busy) aborted with `terminate called
without an active exception` (exit -6). Now the model's threads are stopped and joined before
the interpreter shuts down, and the exit status is one `gatespec --help` lists."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gatespec.cli import EXIT_STATUSES
from gatespec_conformance.live.access import INITIALIZE as INIT

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
BROWSE = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "tool_browse", "arguments": {"query": "read a file"}},
}


# Six gateways each load the embedding model and encode a catalog (14 s on 2 quiet cores):
# `make test-slow`.
@pytest.mark.slow
@pytest.mark.timeout(180)
def test_the_client_leaving_during_the_first_encode_ends_the_gateway_cleanly(
    tmp_path: Path,
) -> None:
    # The abort needed the exit to come while onnxruntime ran with the GIL released (encoding,
    # after the model has loaded): the client leaves at a few moments after its answer.
    for n, delay in enumerate((0.3, 0.6, 0.9, 1.2, 1.5, 1.8)):
        # A cache of its own each time, so the catalog is encoded again, not read back.
        env = {**os.environ, "GATESPEC_CACHE_DIR": str(tmp_path / f"cache{n}")}
        env["GATESPEC_SEMANTIC"] = "on"  # the suite turns it off (tests/conftest.py)
        proc = subprocess.Popen(
            [sys.executable, "-m", "gatespec.cli", "serve", "--demo"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in (INIT, INITIALIZED)).encode())
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 1
        proc.stdin.write(json.dumps(BROWSE).encode() + b"\n")
        proc.stdin.flush()
        # The answer comes from the lexical ranking while the model loads on its thread:
        # the client has what it wanted and goes away at once.
        assert json.loads(proc.stdout.readline())["id"] == 2
        time.sleep(delay)
        proc.stdin.close()
        assert proc.stderr is not None
        proc.wait(timeout=60)
        err = proc.stderr.read()
        proc.stdout.close()
        proc.stderr.close()
        assert b"terminate called" not in err, err.decode()[-2000:]
        assert proc.returncode in EXIT_STATUSES, proc.returncode
        assert proc.returncode == 0
