"""Bearer-token verification for HTTP (AM-ACCESS-CONTROL), plugged into the MCP SDK's server
auth (`mcp.server.auth`: its BearerAuthBackend calls `verify_token`, its RequireAuthMiddleware
answers 401 with the WWW-Authenticate challenge).

Two verifiers, tried in order:

* static tokens from the config, kept only as sha256 digests: a presented token is hashed once
  and compared with every digest in constant time (hmac.compare_digest, no early exit), so
  neither the match nor its position shows in the timing;
* JWTs, verified with PyJWT against a JWKS file, a JWKS URL (remote_jwks: key rotation, an
  unknown kid refetched at most once per interval) or a PEM public key: signature (asymmetric
  algorithms only), issuer, audience, expiry (and not-before) are checked, and the identity is
  the configured claim (sub by default).

The SDK binds a session to the token's principal (client_id, issuer, subject), so a session
opened by one identity is "not found" to every other.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

import jwt
from mcp.server.auth.provider import AccessToken

from gatespec.access.bearer import IdentityToken
from gatespec.access.identity import Identity
from gatespec.access.remote_jwks import RemoteJwks

__all__ = [
    "ASYMMETRIC_ALGORITHMS",
    "GatewayTokenVerifier",
    "IdentityToken",
    "JwtVerifier",
    "StaticTokens",
    "token_digest",
]

log = logging.getLogger(__name__)

# Public-key algorithms only: a shared-secret (HS*) or "none" JWT cannot be checked against a
# published key without opening the algorithm-confusion hole.
ASYMMETRIC_ALGORITHMS: Final = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)
STATIC_ISSUER: Final = "gatespec:static"


def token_digest(token: str) -> bytes:
    """The sha256 digest a static token is stored as ("sha256:" + its hex in the config)."""
    return hashlib.sha256(token.encode("utf-8")).digest()


class StaticTokens:
    """Static bearer tokens: identity by sha256 digest."""

    def __init__(self, digests: Mapping[str, Sequence[bytes]], identities: Mapping[str, Identity]):
        self._table: tuple[tuple[bytes, Identity], ...] = tuple(
            (digest, identities[name]) for name, ds in digests.items() for digest in ds
        )

    def __len__(self) -> int:
        return len(self._table)

    def verify(self, token: str) -> Identity | None:
        presented = token_digest(token)
        found: Identity | None = None
        for digest, identity in self._table:  # every entry compared: no early exit
            if hmac.compare_digest(digest, presented):
                found = identity
        return found


@dataclass(frozen=True)
class JwtVerifier:
    """JWTs signed by a configured key: `keys` is a PyJWKSet (JWKS file), a RemoteJwks (a JWKS
    URL: use verify_async) or one public key."""

    keys: jwt.PyJWKSet | Any
    issuer: str
    audience: str | tuple[str, ...]
    algorithms: tuple[str, ...] = ASYMMETRIC_ALGORITHMS
    identity_claim: str = "sub"
    groups_claim: str = "groups"
    leeway: float = 0.0

    def _key(self, token: str) -> Any:
        if isinstance(self.keys, RemoteJwks):
            raise jwt.InvalidTokenError("keys fetched from a URL are selected by verify_async")
        if not isinstance(self.keys, jwt.PyJWKSet):
            return self.keys
        kid = jwt.get_unverified_header(token).get("kid")
        if kid is None:
            if len(self.keys.keys) != 1:
                raise jwt.InvalidTokenError("the token names no key (kid) and the JWKS has several")
            return self.keys.keys[0]
        return self.keys[kid]  # KeyError-like PyJWKSetError for an unknown kid

    async def verify_async(self, token: str) -> tuple[Identity, int | None] | None:
        """verify, with the key selected from a JWKS fetched from its URL (remote_jwks) when
        the keys are configured so."""
        if not isinstance(self.keys, RemoteJwks):
            return self.verify(token)
        try:
            key = await self.keys.key(jwt.get_unverified_header(token).get("kid"))
        except jwt.InvalidTokenError as exc:
            log.info("bearer JWT refused: %s", exc)
            return None
        return self.verify(token, key)

    def verify(self, token: str, key: Any = None) -> tuple[Identity, int | None] | None:
        """(the identity, the expiry) of a valid token, else None (the reason is logged);
        `key`: the key already selected for it."""
        try:
            claims = jwt.decode(
                token,
                self._key(token) if key is None else key,
                algorithms=list(self.algorithms),
                audience=list(self.audience) if isinstance(self.audience, tuple) else self.audience,
                issuer=self.issuer,
                leeway=self.leeway,
                options={"require": ["exp", "iss", "aud", self.identity_claim]},
            )
        except (jwt.InvalidTokenError, jwt.PyJWKError, KeyError) as exc:
            log.info("bearer JWT refused: %s", exc)
            return None
        name = claims.get(self.identity_claim)
        if not isinstance(name, str) or not name:
            log.info("bearer JWT refused: claim %r is not a non-empty string", self.identity_claim)
            return None
        raw_groups = claims.get(self.groups_claim, [])
        if not isinstance(raw_groups, list) or not all(isinstance(g, str) for g in raw_groups):
            # Fail closed: read as "no groups", a string or a mixed list would drop the
            # groups' deny rules and allow lists, leaving the caller less restricted.
            log.warning(
                "bearer JWT refused: claim %r is not a list of strings (got %s); the token "
                "gives no access",
                self.groups_claim,
                type(raw_groups).__name__,
            )
            return None
        groups = tuple(raw_groups)
        exp = claims.get("exp")
        identity = Identity(name, "jwt", groups, MappingProxyType(dict(claims)))
        return identity, exp if isinstance(exp, int) else None


class GatewayTokenVerifier:
    """The SDK's TokenVerifier over the static tokens and the JWT verifier."""

    def __init__(self, static: StaticTokens | None, jwt_verifier: JwtVerifier | None) -> None:
        self.static = static
        self.jwt = jwt_verifier

    async def verify_token(self, token: str) -> AccessToken | None:
        shown = hashlib.sha256(token.encode("utf-8")).hexdigest()[:16]  # never the token itself
        if self.static is not None:
            identity = self.static.verify(token)
            if identity is not None:
                return _access_token(shown, identity, STATIC_ISSUER, None)
        if self.jwt is not None:
            verified = await self.jwt.verify_async(token)
            if verified is not None:
                identity, expires = verified
                return _access_token(shown, identity, str(identity.claims.get("iss")), expires)
        return None


def _access_token(shown: str, identity: Identity, issuer: str, expires: int | None) -> AccessToken:
    return IdentityToken(
        token=shown,
        client_id=identity.key,
        scopes=[],
        expires_at=expires,
        subject=identity.name,
        claims={"iss": issuer},
        identity=identity,
    )
