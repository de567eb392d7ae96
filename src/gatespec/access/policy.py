"""The access policy (AM-ACCESS-CONTROL): what each identity may see and call.

Identities, groups and JWT claims contribute `Rules` (models.yaml AccessRules): allow and deny
lists of selectors (models.yaml AccessSelector). For one identity and one subject (a tool, or
an aggregate prompt or resource):

* a deny selector of any rules that apply to the identity matches the subject: hidden;
* else, when any rules that apply carry an allow list: visible only when an allow selector
  matches;
* else: visible.

An identity no rules apply to is unrestricted (it sees everything, and gets TOOL_NOT_FOUND for
unknown tools; a restricted one gets FORBIDDEN for anything it cannot see, AM-ACCESS-NO-LEAK).

This module is the policy API every profile's server calls (`AccessPolicy.visible(identity, subject)`
with `Subject.tool/prompt/resource`), the aggregate profile's prompts and resources included.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from gatespec.access.identity import Identity
from gatespec_surface.errors import ErrorCode, GatewayError

__all__ = [
    "ANNOTATION_DEFAULTS",
    "FORBIDDEN_MESSAGE",
    "AccessPolicy",
    "ClaimRule",
    "Rules",
    "Selector",
    "Subject",
    "forbidden",
]

# MCP's defaults for a hint a tool does not declare (ToolAnnotations).
ANNOTATION_DEFAULTS: Final[Mapping[str, bool]] = MappingProxyType(
    {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True}
)

# AM-ACCESS-NO-LEAK: one answer for every name a restricted caller may not see.
FORBIDDEN_MESSAGE: Final = "forbidden: this caller may not see or call that tool"


def forbidden(name: str) -> GatewayError:
    """The FORBIDDEN answer: the fixed message, the caller's own input, no details."""
    return GatewayError(ErrorCode.FORBIDDEN, FORBIDDEN_MESSAGE, name)


@dataclass(frozen=True)
class Subject:
    """What a policy decides about: its namespace (server key), an id the tool globs match
    (a tool_id; "server_key:name" for a prompt, "server_key:uri" for a resource) and its
    MCP annotations (tools only)."""

    namespace: str
    id: str
    annotations: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def tool(cls, namespace: str, tool_id: str, annotations: object = None) -> Subject:
        hints = annotations if isinstance(annotations, Mapping) else {}
        return cls(namespace, tool_id, MappingProxyType(dict(hints)))

    @classmethod
    def prompt(cls, namespace: str, name: str) -> Subject:
        return cls(namespace, f"{namespace}:{name}")

    @classmethod
    def resource(cls, namespace: str, uri: str) -> Subject:
        return cls(namespace, f"{namespace}:{uri}")

    def hint(self, name: str) -> bool:
        """A hint's value as MCP reads it: the declared boolean, else its default;
        destructiveHint only counts for a tool that is not read-only."""
        if name == "destructiveHint" and self.hint("readOnlyHint"):
            return False
        value = self.annotations.get(name)
        return value if isinstance(value, bool) else ANNOTATION_DEFAULTS.get(name, False)


@dataclass(frozen=True)
class Selector:
    """One AccessSelector: every field given must match."""

    namespaces: frozenset[str] | None = None
    tools: tuple[str, ...] | None = None  # fnmatch globs over the subject's id
    annotations: tuple[tuple[str, bool], ...] | None = None

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> Selector:
        """From a mapping valid against models.yaml AccessSelector."""
        namespaces = raw.get("namespaces")
        tools = raw.get("tools")
        hints = raw.get("annotations")
        return cls(
            frozenset(namespaces) if namespaces is not None else None,
            tuple(tools) if tools is not None else None,
            tuple(sorted(hints.items())) if hints is not None else None,
        )

    def matches(self, subject: Subject) -> bool:
        if self.namespaces is not None and subject.namespace not in self.namespaces:
            return False
        if self.tools is not None and not any(
            fnmatch.fnmatchcase(subject.id, glob) for glob in self.tools
        ):
            return False
        return self.annotations is None or all(
            subject.hint(name) == value for name, value in self.annotations
        )


@dataclass(frozen=True)
class Rules:
    """One AccessRules: allow None means no allow list (it allows everything not denied)."""

    allow: tuple[Selector, ...] | None = None
    deny: tuple[Selector, ...] = ()

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> Rules:
        """From a mapping valid against models.yaml AccessRules."""
        allow = raw.get("allow")
        return cls(
            tuple(Selector.of(s) for s in allow) if allow is not None else None,
            tuple(Selector.of(s) for s in raw.get("deny", ())),
        )

    @property
    def empty(self) -> bool:
        return self.allow is None and not self.deny


@dataclass(frozen=True)
class ClaimRule:
    """Rules for JWT identities whose claim `claim` equals `value` (or, for a list claim,
    contains it)."""

    claim: str
    value: str | int | bool
    rules: Rules

    def applies(self, claims: Mapping[str, Any]) -> bool:
        found = claims.get(self.claim)
        if isinstance(found, list):
            return any(_same(item, self.value) for item in found)
        return _same(found, self.value)


def _same(a: object, b: object) -> bool:
    # True == 1 in Python; a claim's JSON type is part of its value.
    return type(a) is type(b) and a == b


Check = Callable[[Subject], bool]


class AccessPolicy:
    """Rules by identity name, group and claim; immutable once built."""

    def __init__(
        self,
        identities: Mapping[str, Rules] | None = None,
        groups: Mapping[str, Rules] | None = None,
        claims: Sequence[ClaimRule] = (),
    ) -> None:
        self.identities = MappingProxyType(dict(identities or {}))
        self.groups = MappingProxyType(dict(groups or {}))
        self.claims = tuple(claims)

    @classmethod
    def open(cls) -> AccessPolicy:
        """No rules at all: every identity is unrestricted."""
        return cls()

    def rules_for(self, identity: Identity) -> tuple[Rules, ...]:
        """The non-empty rules that apply to `identity`, in a fixed order (its own, its
        groups', then matching claim rules)."""
        found: list[Rules] = []
        own = self.identities.get(identity.name)
        if own is not None:
            found.append(own)
        found += [self.groups[g] for g in identity.groups if g in self.groups]
        if identity.claims:
            found += [c.rules for c in self.claims if c.applies(identity.claims)]
        return tuple(r for r in found if not r.empty)

    def restricted(self, identity: Identity) -> bool:
        return bool(self.rules_for(identity))

    @property
    def restricts_anyone(self) -> bool:
        """Some identity, group or claim has rules (else every caller sees everything)."""
        every = [*self.identities.values(), *self.groups.values(), *(c.rules for c in self.claims)]
        return any(not r.empty for r in every)

    def check(self, identity: Identity) -> Check:
        """The visibility test for one identity, rules looked up once."""
        return _check(self.rules_for(identity))

    def visible(self, identity: Identity, subject: Subject) -> bool:
        return self.check(identity)(subject)

    def visible_of(self, identity: Identity, subjects: Iterable[Subject]) -> list[Subject]:
        check = self.check(identity)
        return [s for s in subjects if check(s)]


def _check(rules: tuple[Rules, ...]) -> Check:
    deny = [s for r in rules for s in r.deny]
    allow_lists = [r.allow for r in rules if r.allow is not None]
    allow = [s for lst in allow_lists for s in lst]

    def visible(subject: Subject) -> bool:
        if any(s.matches(subject) for s in deny):
            return False
        return not allow_lists or any(s.matches(subject) for s in allow)

    return visible
