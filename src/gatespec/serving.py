"""What the command line needs before the server layer (and the MCP SDK) is imported."""

from __future__ import annotations

from typing import Final

from gatespec.profiles.registry import SERVED

# The exposure profiles the runtime serves: the registry's rows (gatespec.profiles.registry).
SERVED_PROFILES: Final = SERVED


class ServeError(RuntimeError):
    """Serving could not start (address in use, uvicorn missing): a user-facing message."""


__all__ = ["SERVED_PROFILES", "ServeError"]
