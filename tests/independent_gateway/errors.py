"""The seed-002 error shape, plus this implementation's own `retryable` flag.

Codes: seed 002's six, seed 003's FORBIDDEN and seed 001's "Tool not found".
"""

from __future__ import annotations

from typing import Any

CODES = (
    "PATH_INVALID",
    "PATH_NOT_FOUND",
    "ARGS_INVALID",
    "UPSTREAM_ERROR",
    "HYDRATE_FAILED",
    "VIEW_FAILED",
    "FORBIDDEN",
    "TOOL_NOT_FOUND",
)


class GatewayError(Exception):
    """Raised inside the gateway, turned into an isError result at the MCP boundary."""

    def __init__(
        self,
        code: str,
        message: str,
        path: str = "",
        details: dict[str, Any] | None = None,
        retryable: bool = False,
    ) -> None:
        assert code in CODES, code
        super().__init__(message)
        self.code = code
        self.message = message
        self.path = path
        self.details = details or {}
        self.retryable = retryable

    def payload(self) -> dict[str, Any]:
        return {
            "error": self.code,
            "message": self.message,
            "path": self.path,
            "details": self.details,
            "retryable": self.retryable,
        }
