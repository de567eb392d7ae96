"""Starting stdio upstream processes, also before the MCP SDK is imported.

Importing the SDK costs ~0.8 s, about what a stdio upstream takes to start. `spawn_early`
starts the stdio upstreams of a config at once, before that import, the way the SDK's stdio
client would (same argv, environment, working directory, a session of their own, stderr to a
`StderrTail`); the first connection of each upstream then adopts its process (`take`) instead of
spawning one, so the gateway's own start-up overlaps its upstreams'. Nothing here imports the
SDK: that is the point of the module.

A stdio server's stderr goes to a `StderrTail`, an unlinked temporary file in append mode, so a
start failure or crash can be reported with the server's last words.

Every stdio upstream is started here (`start`), later reconnects included, so that each runs
the same way: in a session (process group) of its own, which the gateway stops as a whole; with
the chain of gatespec configs above it in its environment (gatespec.chain), so a config that
lists gatespec itself is refused instead of spawning a chain; and, when the gateway has no other
threads yet, with PR_SET_PDEATHSIG, so it gets SIGTERM should the gateway be killed outright.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final, TextIO, cast

from gatespec import chain, secrets
from gatespec.config import ServerConfig

# What the SDK's stdio client passes on from the environment (mcp.client.stdio
# DEFAULT_INHERITED_ENV_VARS on POSIX; tests/runtime/upstream/test_spawn.py checks they agree).
INHERITED_ENV: Final = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")

_STDERR_CAP: Final = 1 << 20  # keep the stderr file under ~1 MiB...
_STDERR_KEEP: Final = 16 << 10  # ...by cutting it down to its last 16 KiB when it grows past


class StderrTail:
    """A stdio server's stderr, kept in an unlinked temp file; `tail()` reads its end cheaply.

    Append mode matters: the child shares the file description, so after `trim()` truncates
    the file the child's next write lands at the new end instead of leaving a hole.
    """

    def __init__(self) -> None:
        self.file = cast(
            TextIO, tempfile.TemporaryFile(mode="a+", encoding="utf-8", errors="replace")
        )
        self.trimmed = False

    def tail(self, max_chars: int = 800) -> str:
        """The last `max_chars` characters, redacted before they are cut (a cut inside a
        secret would leave the rest of it unrecognised: gatespec.secrets.redact_tail)."""
        try:
            fd = self.file.fileno()
            size = os.fstat(fd).st_size
            start = max(0, size - max_chars * 4)
            data = os.pread(fd, max_chars * 4, start)
        except (OSError, ValueError):
            return ""
        text = data.decode("utf-8", errors="replace").strip()
        # The window begins at a cut when it starts past the file's start, or when trim()
        # once cut the file's own start away.
        return secrets.redact_tail(text, max_chars, cut_before=start > 0 or self.trimmed)

    def trim(self) -> None:
        """Bound the file for long-lived chatty servers (called now and then, cheap)."""
        try:
            fd = self.file.fileno()
            size = os.fstat(fd).st_size
            if size <= _STDERR_CAP:
                return
            keep = os.pread(fd, _STDERR_KEEP, size - _STDERR_KEEP)
            os.ftruncate(fd, 0)
            os.write(fd, keep)
            self.trimmed = True
        except (OSError, ValueError):
            pass

    def close(self) -> None:
        self.file.close()


def spawn_environment(config: ServerConfig) -> dict[str, str]:
    """The environment the SDK's stdio client gives a server: the safe inherited variables
    (shell functions skipped), then the configured ones."""
    env = {
        key: value
        for key in INHERITED_ENV
        if (value := os.environ.get(key)) is not None and not value.startswith("()")
    }
    return env | dict(config.env) | chain.child_environment()


_PR_SET_PDEATHSIG: Final = 1  # <linux/prctl.h>


def _death_signal() -> Callable[[], None] | None:
    """A preexec_fn that asks the kernel to SIGTERM the child when the gateway dies, or None.

    Only while the gateway has a single thread: code run between fork and exec can deadlock on
    a lock another thread held at the fork (the subprocess documentation's warning). The
    libc function is looked up here, before the fork. One syscall through ctypes: the PyPI
    wrappers for prctl are unmaintained, and this is all of it the gateway needs.
    """
    if not sys.platform.startswith("linux") or threading.active_count() != 1:
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def set_death_signal() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)

    return set_death_signal


@dataclass
class EarlyProcess:
    """A stdio upstream started before its connection: the process and its stderr tail."""

    config: ServerConfig
    process: subprocess.Popen[bytes]
    stderr: StderrTail

    def discard(self) -> None:
        """Stop a process no connection adopted (its whole session, like the SDK would)."""
        try:
            os.killpg(self.process.pid, 15)
        except OSError:
            pass
        try:
            self.process.wait(2)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(self.process.pid, 9)
            except OSError:
                pass
            self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()
        self.stderr.close()


_EARLY: dict[str, EarlyProcess] = {}


def start(config: ServerConfig) -> EarlyProcess:
    """Start one stdio upstream (see the module docstring); OSError/ValueError when it cannot."""
    tail = StderrTail()
    try:
        process = subprocess.Popen(
            [cast(str, config.command), *config.args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=tail.file,
            env=spawn_environment(config),
            cwd=config.cwd,
            start_new_session=True,
            preexec_fn=_death_signal(),  # noqa: PLW1509 - only while single-threaded
        )
    except BaseException:
        tail.close()
        raise
    return EarlyProcess(config, process, tail)


def spawn_early(servers: Iterable[ServerConfig], limit: int) -> dict[str, EarlyProcess]:
    """Start up to `limit` stdio upstreams now (the pool connects that many at a time) and
    return them by key. A spawn that fails is left to the connection, which reports it the
    usual way."""
    started: dict[str, EarlyProcess] = {}
    if sys.platform == "win32":  # the SDK makes Job Objects there; keep to its own path
        return started
    for config in [c for c in servers if c.kind.local_process and c.command][:limit]:
        try:
            early = start(config)
        except (OSError, ValueError):
            continue
        started[config.key] = _EARLY[config.key] = early
    return started


def take(config: ServerConfig) -> EarlyProcess | None:
    """The early process started for exactly this config, once; None otherwise."""
    early = _EARLY.get(config.key)
    if early is None or early.config != config:
        return None
    del _EARLY[config.key]
    return early


def discard_early() -> None:
    """Stop every early process that no connection took."""
    while _EARLY:
        _, early = _EARLY.popitem()
        early.discard()
