"""Boundary namespacing for the aggregate profile (seed 004, "Core Principles").

This module is the ONLY place that knows the `__` separator (seed 004,
"Protocol Boundary Layer": "This is the ONLY layer that understands the `__`
separator").  Everything else works with `(server, clean_name)` pairs.

* names (tools, prompts): `server__name`.  A clean name that itself contains
  `__` cannot be namespaced unambiguously (seed 004, "Parse Failures":
  "Multiple __ separators ... Invalid namespace format"), so `apply_name`
  returns None for it and the item is left out of the aggregated list.
* resource URIs / URI templates: `server__<original uri>`; parsed by splitting
  at the FIRST `__` (server keys never contain `__`), because URIs routinely
  contain `__` in their paths.
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import SERVER_KEY_RE

SEPARATOR = "__"


@dataclass(frozen=True)
class Parsed:
    server: str
    name: str


class NamespaceError(Exception):
    """A boundary parse failure; `kind` selects the seed-004 error text."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind  # "missing" | "invalid"
        self.message = message


def apply_name(server: str, name: str) -> str | None:
    """Namespace a clean tool/prompt name, or None when it cannot be namespaced."""
    if not name or SEPARATOR in name:
        return None
    return f"{server}{SEPARATOR}{name}"


def parse_name(qualified: str, what: str = "Tool") -> Parsed:
    """Parse a namespaced tool/prompt name exactly once, at ingress.

    Raises NamespaceError("missing") when there is no separator at all (seed
    004, "Missing Server Context" / "ValueError: Tool 'read_file' is not
    namespaced") and NamespaceError("invalid") when there are several
    separators or an empty half (seed 004, "Invalid Namespace").
    """
    if SEPARATOR not in qualified:
        raise NamespaceError(
            "missing",
            f"No server specified for non-broadcast request: {what} '{qualified}' is not namespaced",
        )
    server, _, name = qualified.partition(SEPARATOR)
    if not server or not name or SEPARATOR in name or not SERVER_KEY_RE.match(server):
        raise NamespaceError("invalid", f"Invalid namespace format: '{qualified}'")
    return Parsed(server, name)


def apply_uri(server: str, uri: str) -> str:
    return f"{server}{SEPARATOR}{uri}"


def parse_uri(qualified: str) -> Parsed:
    """Parse a namespaced resource URI: `server__<upstream uri>`."""
    if SEPARATOR not in qualified:
        raise NamespaceError(
            "missing",
            f"No server specified for non-broadcast request: Resource '{qualified}' is not namespaced",
        )
    server, _, uri = qualified.partition(SEPARATOR)
    if not SERVER_KEY_RE.match(server or "-/"):
        raise NamespaceError(
            "missing",
            f"No server specified for non-broadcast request: Resource '{qualified}' is not namespaced",
        )
    if not uri:
        raise NamespaceError("invalid", f"Invalid namespace format: '{qualified}'")
    return Parsed(server, uri)
