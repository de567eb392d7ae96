"""How a `gatespec` command ends: its exit statuses, and which errors are the user's to fix
(printed as one line) rather than bugs (a traceback)."""

from __future__ import annotations

import signal

from gatespec import chain
from gatespec.config import ConfigError
from gatespec.serving import ServeError

EXIT_UPSTREAMS_DOWN = 3
EXIT_PIPE_CLOSED = 141  # 128 + SIGPIPE, what a C program killed by the closed pipe reports
EXIT_TERMINATED = 128 + signal.SIGTERM
EXIT_STATUSES = {
    0: "done",
    1: "serving could not start (address in use, uvicorn missing)",
    2: "usage or configuration error",
    EXIT_UPSTREAMS_DOWN: "every configured upstream is unavailable (catalog)",
    chain.LOOP_EXIT_STATUS: "the config is already served by a gatespec above this one",
    130: "interrupted",
    EXIT_TERMINATED: "terminated (SIGTERM, or a stdio gateway's client is gone)",
    EXIT_PIPE_CLOSED: "stdout was closed before the output ended (e.g. piped into head)",
}


class UsageError(Exception):
    """A user error: printed as one line, exit status `status`."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


def is_broken_pipe(exc: BaseException) -> bool:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return isinstance(exc, BrokenPipeError)


def user_error(exc: BaseException) -> tuple[str, int] | None:
    """(message, exit status) for an error the user can fix, also inside a task group."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    if isinstance(exc, ConfigError):
        return str(exc), 2
    if isinstance(exc, UsageError):
        return str(exc), exc.status
    if isinstance(exc, ServeError):
        return str(exc), 1
    if isinstance(exc, chain.ChainLoop):
        return str(exc), chain.LOOP_EXIT_STATUS
    return None


def exit_statuses() -> str:
    """The table `gatespec --help` ends with."""
    return "exit statuses:\n" + "\n".join(f"  {n:<4} {what}" for n, what in EXIT_STATUSES.items())
