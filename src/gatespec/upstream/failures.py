"""What a failed connection to an upstream is called: the error kind and the one-line reason
the operator reads (never a secret: the config is shown as written)."""

from __future__ import annotations

import errno
import subprocess
from typing import Final

import anyio
import httpx2
import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from gatespec import chain
from gatespec.config import ServerConfig
from gatespec.upstream.errors import ErrorKind

LOOP_REASON: Final = (
    "refused: this upstream is gatespec serving a config that a gatespec above it already "
    "serves (it would start itself again); remove it from the config"
)


class HandshakeClosed(Exception):
    """The connection closed during an auto-mode handshake (maybe killed by the probe)."""


def refused_as_loop(process: subprocess.Popen[bytes] | None) -> bool:
    """Whether the connection's process is a gatespec that refused to join a loop."""
    return process is not None and process.poll() == chain.LOOP_EXIT_STATUS


def classify(exc: BaseException, config: ServerConfig, handshake: bool) -> tuple[ErrorKind, str]:
    """Turn a connection failure (often an exception group) into a kind and a reason."""
    leaf = root_cause(exc)
    shown = config.written  # never the expanded values (gatespec.secrets)
    target = shown.target()
    start: ErrorKind = "start_failed" if handshake else "unavailable"
    if isinstance(leaf, FileNotFoundError):
        # POSIX spawn reports a bad cwd with the executable as filename: look ourselves.
        if config.cwd is not None and not config.cwd.is_dir():
            return "start_failed", f"working directory not found: {config.cwd}"
        return "start_failed", f"command not found: {shown.command}"
    if isinstance(leaf, PermissionError):
        return "start_failed", f"cannot execute {shown.command}: permission denied"
    if isinstance(leaf, httpx2.HTTPStatusError):
        status = leaf.response.status_code
        return start, f"{shown.url} answered HTTP {status} {leaf.response.reason_phrase}"
    if isinstance(leaf, httpx2.TimeoutException):
        return "timeout", f"{shown.url}: HTTP timeout ({describe(leaf)})"
    if isinstance(leaf, httpx2.ConnectError):
        return start, f"cannot connect to {shown.url}: {describe(leaf)} (connection refused?)"
    if isinstance(leaf, httpx2.HTTPError):
        return start, f"{shown.url}: {describe(leaf)}"
    if isinstance(leaf, MCPError):
        if leaf.code == types.CONNECTION_CLOSED:
            what = "server exited" if config.kind.local_process else "connection closed"
            phase = "during the MCP handshake" if handshake else ""
            return start, f"{what} {phase}".strip() + f" ({target})"
        if leaf.code == types.REQUEST_TIMEOUT:
            return "timeout", f"handshake timed out: {leaf.message}"
        return start, f"handshake rejected: error {leaf.code}: {leaf.message}"
    if isinstance(leaf, ValidationError):
        return "protocol", f"invalid handshake result: {_first_line(leaf)}"
    if isinstance(leaf, OSError):
        detail = errno.errorcode.get(leaf.errno or 0, "")
        return (
            "start_failed",
            f"cannot start {target}: {leaf.strerror or leaf} {detail}".strip(),
        )
    if isinstance(leaf, RuntimeError) and "protocol version" in str(leaf):
        return "protocol", str(leaf)
    return start, f"{type(leaf).__name__}: {leaf}"


def root_cause(exc: BaseException) -> BaseException:
    """The most telling leaf of a (possibly nested) exception group, skipping cancellations."""
    cancelled = anyio.get_cancelled_exc_class()
    while isinstance(exc, BaseExceptionGroup):
        leaves = [e for e in exc.exceptions if not isinstance(e, cancelled)]
        exc = leaves[0] if leaves else exc.exceptions[0]
    if isinstance(exc, HandshakeClosed) and exc.__cause__ is not None:
        return exc.__cause__
    return exc


def describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _first_line(exc: BaseException) -> str:
    lines = str(exc).splitlines()
    return " ".join(lines[:3]) if lines else type(exc).__name__
