"""Who is calling: an identity, proven by a bearer token over HTTP or named by the config over
stdio (AM-ACCESS-CONTROL). The policy decides what an identity may see by its name, its groups
and (for JWT identities) its claims."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal

__all__ = ["LOCAL", "Identity", "IdentitySource"]

IdentitySource = Literal["local", "config", "token", "jwt"]


@dataclass(frozen=True)
class Identity:
    """One caller's identity. Equal identities share the visible catalog; state (artifacts,
    seen cards) is scoped by `key` and the session."""

    name: str
    source: IdentitySource = "config"
    groups: tuple[str, ...] = ()
    # A JWT identity's verified claims (read only); empty for the others.
    claims: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def key(self) -> str:
        """What scopes per-caller state: a JWT subject never shares state with a config
        identity of the same name."""
        return f"{self.source}:{self.name}"


# The operator of a stdio gateway (or an HTTP gateway without access control): the policy
# decides what it sees like anyone's; with no rules for it, everything.
LOCAL: Final = Identity("local", "local")
