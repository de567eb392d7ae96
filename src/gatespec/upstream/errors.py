"""Typed upstream failures: every failure names the server key, a kind, and a human reason."""

from __future__ import annotations

from typing import Final, Literal, get_args

from gatespec.secrets import redact
from gatespec_surface.errors import ErrorCode

ErrorKind = Literal[
    "unknown_server",
    "start_failed",
    "unavailable",
    "timeout",
    "call_failed",
    "protocol",
    "loop",
    "too_large",
]
ERROR_KINDS: Final[tuple[str, ...]] = get_args(ErrorKind)
# How an upstream failure surfaces to the client (seed 002 UPSTREAM_ERROR for the rest; seed
# 001 timeout; seed 004 unknown and unavailable servers).
_CODES: Final[dict[str, ErrorCode]] = {
    "unknown_server": ErrorCode.UNKNOWN_SERVER,
    "timeout": ErrorCode.TIMEOUT,
    "unavailable": ErrorCode.SERVER_UNAVAILABLE,
    "start_failed": ErrorCode.SERVER_UNAVAILABLE,
    "loop": ErrorCode.SERVER_UNAVAILABLE,
}


class UpstreamError(Exception):
    """A failure talking to one upstream MCP server.

    kind:
      unknown_server no upstream is configured under that key (seed 004 "Unknown server")
      start_failed  the server could not be started or reached (command not found, exited during
                    the handshake, connection refused, HTTP error on connect)
      unavailable   the upstream is configured but not connected (never started, crashed, closed)
      timeout       no answer in time (handshake or call); the request was cancelled
      call_failed   the server answered the request with a JSON-RPC error
      protocol      the server answered with something that is not valid MCP
      loop          the server is gatespec on a config already up this chain (gatespec.chain)
      too_large     the server's answer is over the spec's size cap (budgets
                    MAX_UPSTREAM_RESULT_BYTES); the connection stays usable
    """

    def __init__(self, key: str, kind: ErrorKind, reason: str) -> None:
        if kind not in ERROR_KINDS:  # a typo here would silently change how callers react
            raise ValueError(f"unknown UpstreamError kind {kind!r}")
        self.key = key
        self.kind: ErrorKind = kind
        # A reason may quote stderr, a command line or an HTTP error: never a secret's value.
        reason = redact(reason)
        self.reason = reason
        super().__init__(f"upstream {key!r}: {reason}")

    @property
    def code(self) -> ErrorCode:
        """The spec error code a client is answered with for this failure."""
        return _CODES.get(self.kind, ErrorCode.UPSTREAM_ERROR)

    def __reduce__(self) -> tuple[type[UpstreamError], tuple[str, ErrorKind, str]]:
        return (type(self), (self.key, self.kind, self.reason))
