"""What the command line needs before the server layer (and the MCP SDK) is imported. The
profiles it serves are the registry's (gatespec.profiles.registry.SERVED)."""

from __future__ import annotations


class ServeError(RuntimeError):
    """Serving could not start (address in use, uvicorn missing): a user-facing message."""


__all__ = ["ServeError"]
