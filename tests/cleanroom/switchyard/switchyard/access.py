"""Identities and `AccessControl` (seed 003, Decision 5).

Callers are identified by static bearer tokens from the config file; each
identity may be restricted to operations matching a list of globs
(`fnmatch`-style, `*` also matches `/`).  An identity without `allow` may call
every operation.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from fnmatch import fnmatchcase

from .config import Config

SCOPE_KEY = "switchyard.identity"


@dataclass(frozen=True)
class Identity:
    name: str
    allow: tuple[str, ...] | None  # None = unrestricted

    def may_call(self, operation: str) -> bool:
        if self.allow is None:
            return True
        return any(fnmatchcase(operation, pattern) for pattern in self.allow)


# Over stdio there is no bearer token; the operator who launched the process
# gets full access unless `stdioIdentity` names a configured identity.
LOCAL_OPERATOR = Identity("local", None)
# Used when an HTTP request somehow reaches a handler without an identity: no access.
NOBODY = Identity("anonymous", ())


class AccessControl:
    def __init__(self, config: Config):
        self._by_token: list[tuple[bytes, Identity]] = []
        self.identities: dict[str, Identity] = {}
        for spec in config.identities.values():
            ident = Identity(spec.name, spec.allow)
            self.identities[spec.name] = ident
            for token in spec.tokens:
                self._by_token.append((token.encode(), ident))
        self.stdio_identity = self.identities[config.stdio_identity] if config.stdio_identity else LOCAL_OPERATOR

    @property
    def has_identities(self) -> bool:
        return bool(self._by_token)

    def authenticate(self, token: str | None) -> Identity | None:
        """Map a bearer token to its identity (constant-time comparisons)."""
        if not token:
            return None
        presented = token.encode()
        found: Identity | None = None
        for known, ident in self._by_token:
            if hmac.compare_digest(known, presented):
                found = ident
        return found

    @staticmethod
    def check(identity: Identity, operation: str) -> bool:
        """`AccessControl::check(identity)` for one operation."""
        return identity.may_call(operation)


def bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()
