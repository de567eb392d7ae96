"""What the command line needs before the server layer (and the MCP SDK) is imported."""

from __future__ import annotations

from typing import Final

# The exposure profiles the runtime serves (spec/profiles.yaml defines more).
SERVED_PROFILES: Final = ("gateway", "transparent", "search", "aggregate")


class ServeError(RuntimeError):
    """Serving could not start (address in use, uvicorn missing): a user-facing message."""


__all__ = ["SERVED_PROFILES", "ServeError"]
