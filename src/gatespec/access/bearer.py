"""IdentityToken: the SDK's AccessToken carrying the identity a bearer token proves.

A module of its own, apart from the verifiers (gatespec.access.tokens): the server layer checks
every request's user against this class, and a stdio serve must not import PyJWT (~2 MiB
resident) to do so."""

from __future__ import annotations

from mcp.server.auth.provider import AccessToken
from pydantic import ConfigDict

from gatespec.access.identity import Identity

__all__ = ["IdentityToken"]


class IdentityToken(AccessToken):
    """An AccessToken that carries the identity it proves (the SDK hands it to handlers as
    request.user.access_token)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    identity: Identity
