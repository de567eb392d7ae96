"""Issue 12 #3: a config that lists gatespec on itself, directly or through another config,
does not start a chain of gateways: the gatespec that finds its config already up the chain
refuses to start (exit 78), the gateway above reports that upstream as refused, and when the
top-level command ends no process of the chain is left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gatespec.chain import LOOP_EXIT_STATUS
from tests.faults.support import GATESPEC, upstream

pytestmark = [pytest.mark.timeout(120)]

RECORD = str(Path(__file__).with_name("record.py"))


def write(path: Path, servers: dict[str, Any]) -> Path:
    path.write_text(json.dumps({"mcpServers": servers, "gateway": {"connect_timeout": 30}}))
    return path


def gatespec_on(config: Path, log: Path, name: str) -> dict[str, Any]:
    """An mcpServers entry serving `config` with gatespec, recorded in `log` as `name`."""
    return {
        "command": sys.executable,
        "args": [RECORD, str(log), name, GATESPEC, "serve", "--config", str(config)],
    }


def catalog(config: Path) -> dict[str, Any]:
    done = subprocess.run(
        [GATESPEC, "catalog", "--config", str(config), "--json"],
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def processes_under(folder: Path) -> list[str]:
    """Command lines of running processes that mention `folder` (this test's own files)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if str(folder) in cmdline:
            found.append(cmdline)
    return found


def assert_none_left(folder: Path) -> None:
    deadline = time.monotonic() + 10  # a bound on teardown, not a timing claim
    while processes_under(folder) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_under(folder) == []


def events(log: Path) -> list[list[str]]:
    return [line.split(" ") for line in log.read_text().splitlines()]


def test_a_config_listing_gatespec_on_itself_is_refused(tmp_path: Path) -> None:
    log, a = tmp_path / "log", tmp_path / "a.json"
    write(a, {"self": gatespec_on(a, log, "self"), "ok": upstream()})
    listed = catalog(a)
    servers = {s["key"]: s for s in listed["servers"]}
    assert servers["ok"]["state"] == "connected"
    assert servers["self"]["state"] == "failed"
    assert servers["self"]["reason"].startswith("refused: this upstream is gatespec serving")
    assert "refusing to start" in servers["self"]["reason"]  # the refusal's own words
    # one gatespec was started under the top-level one, and it refused at once
    assert [e[:2] for e in events(log)] == [["self", "start"], ["self", "exit"]]
    assert events(log)[1][2] == str(LOOP_EXIT_STATUS)
    assert_none_left(tmp_path)


def test_two_configs_listing_each_other_stop_at_the_third_process(tmp_path: Path) -> None:
    log, a, b = tmp_path / "log", tmp_path / "a.json", tmp_path / "b.json"
    write(a, {"b": gatespec_on(b, log, "b"), "ok": upstream()})
    write(b, {"a": gatespec_on(a, log, "a")})
    listed = catalog(a)
    assert {s["key"]: s["state"] for s in listed["servers"]} == {
        "b": "connected",
        "ok": "connected",
    }
    started = [e for e in events(log) if e[1] == "start"]
    # catalog(a) started b; b started a, which found a in its chain and refused
    assert [e[0] for e in started] == ["b", "a"]
    chain_of_a = started[1][2].split(",")
    assert len(chain_of_a) == 2 and chain_of_a[0] != chain_of_a[1]
    assert ["a", "exit", str(LOOP_EXIT_STATUS)] in events(log)
    assert_none_left(tmp_path)
