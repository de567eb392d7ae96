"""Issue 12 #3: stopping the gateway during start-up leaves no upstream behind: SIGTERM and
SIGINT while an upstream's handshake hangs, and the death of the process that started a stdio
gateway (its client), each end the gateway with every upstream process gone. And a stop that
arrives while the SDK is imported is never lost (cli.signals.held)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gatespec.cli.signals import Terminated, held, terminable
from tests.faults.support import GATESPEC, upstream

pytestmark = [pytest.mark.timeout(120)]


def hanging_config(tmp_path: Path) -> tuple[Path, Path]:
    pid_file, path = tmp_path / "upstream.pid", tmp_path / "gateway.json"
    servers = {"hang": upstream("--pid-file", str(pid_file), "--hang")}
    path.write_text(json.dumps({"mcpServers": servers, "gateway": {"connect_timeout": 60}}))
    return path, pid_file


def wait_for(path: Path) -> int:
    deadline = time.monotonic() + 30
    while not (path.exists() and path.read_text()):
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)
    return int(path.read_text())


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat").read_text().split()[2]
    return status != "Z"  # a zombie has exited; only its parent's wait is missing


def assert_gone(pid: int) -> None:
    deadline = time.monotonic() + 10  # a bound on teardown, not a timing claim
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid), f"process {pid} was left running"


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_during_start_up_leaves_no_upstream(
    tmp_path: Path, sig: signal.Signals, status: int
) -> None:
    path, pid_file = hanging_config(tmp_path)
    gateway = subprocess.Popen(
        [GATESPEC, "serve", "--config", str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        hung = wait_for(pid_file)  # the handshake hangs: start-up is waiting for it
        gateway.send_signal(sig)
        assert gateway.wait(30) == status
        assert_gone(hung)
    finally:
        gateway.kill()
        gateway.communicate()


def test_the_death_of_the_client_ends_a_stdio_gateway_and_its_upstreams(tmp_path: Path) -> None:
    path, pid_file = hanging_config(tmp_path)
    client = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys, time\n"
            f"p = subprocess.Popen([{GATESPEC!r}, 'serve', '--config', {str(path)!r}],"
            " stdin=subprocess.PIPE, stdout=subprocess.PIPE)\n"
            "print(p.pid, flush=True)\n"
            "time.sleep(3600)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert client.stdout is not None
        gateway = int(client.stdout.readline())
        hung = wait_for(pid_file)
        client.kill()  # SIGKILL: the client has no chance to clean up
        client.wait()
        assert_gone(gateway)
        assert_gone(hung)
    finally:
        client.kill()
        client.wait()


@pytest.mark.parametrize(
    ("sig", "raised"), [(signal.SIGINT, KeyboardInterrupt), (signal.SIGTERM, Terminated)]
)
def test_a_signal_during_a_held_block_is_raised_as_the_block_ends(
    sig: signal.Signals, raised: type[BaseException]
) -> None:
    # Inside the block nothing is raised: a handler's exception could land where Python
    # drops it (the import machinery's weakref callbacks) and the stop would be lost.
    with terminable():  # as in the CLI: SIGTERM raises Terminated outside the held block
        before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
        ran_on: list[str] = []
        with pytest.raises(raised):
            with held():
                os.kill(os.getpid(), sig)
                time.sleep(0.1)  # the handler runs in here
                ran_on.append("after the signal")
        assert ran_on == ["after the signal"]
        assert {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)} == before
