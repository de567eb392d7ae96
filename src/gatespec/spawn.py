"""Starting stdio upstream processes, also before the MCP SDK is imported.

Importing the SDK costs ~0.8 s, about what a stdio upstream takes to start. `spawn_early`
starts the stdio upstreams of a config at once, before that import, the way the SDK's stdio
client would (same argv, environment, working directory, a session of their own, stderr to a
`StderrTail`); the first connection of each upstream then adopts its process (`take`) instead of
spawning one, so the gateway's own start-up overlaps its upstreams'. Nothing here imports the
SDK: that is the point of the module.

A stdio server's stderr goes to a `StderrTail`, an unlinked temporary file in append mode, so a
start failure or crash can be reported with the server's last words.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, TextIO, cast

from gatespec.config import ServerConfig

# What the SDK's stdio client passes on from the environment (mcp.client.stdio
# DEFAULT_INHERITED_ENV_VARS on POSIX; tests/runtime/test_spawn.py checks they agree).
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

    def tail(self, max_chars: int = 800) -> str:
        try:
            fd = self.file.fileno()
            size = os.fstat(fd).st_size
            data = os.pread(fd, max_chars * 4, max(0, size - max_chars * 4))
        except (OSError, ValueError):
            return ""
        text = data.decode("utf-8", errors="replace").strip()
        return text[-max_chars:]

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
    return env | dict(config.env)


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


def spawn_early(servers: Iterable[ServerConfig], limit: int) -> dict[str, EarlyProcess]:
    """Start up to `limit` stdio upstreams now (the pool connects that many at a time) and
    return them by key. A spawn that fails is left to the connection, which reports it the
    usual way."""
    started: dict[str, EarlyProcess] = {}
    if sys.platform == "win32":  # the SDK makes Job Objects there; keep to its own path
        return started
    for config in [c for c in servers if c.transport == "stdio" and c.command][:limit]:
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
            )
        except (OSError, ValueError):
            tail.close()
            continue
        started[config.key] = _EARLY[config.key] = EarlyProcess(config, process, tail)
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
