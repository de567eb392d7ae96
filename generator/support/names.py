"""Server keys (AM-NAMESPACE-FROM-CONFIG), aggregate names server__tool (seed 004), aggregate
resource URIs server+uri (AM-RESOURCE-URI) and search operations "/namespace/name" (seed 003)."""

from __future__ import annotations

import enum
import re

from .errors import ErrorFactory
from .grammar import Captures, GrammarInfo

_OUTSIDE_KEY = re.compile(r"[^a-z0-9]+")
_DIGIT_PREFIX = "s-"
SEPARATOR = "__"


def _pair(groups: Captures, first: str, second: str) -> tuple[str, str]:
    """Two captures a full match always sets."""
    a, b = groups[first], groups[second]
    assert a is not None and b is not None
    return a, b


class ServerKeys:
    def __init__(self, server_key: GrammarInfo, error: ErrorFactory) -> None:
        self.grammar = server_key
        self.error = error
        if server_key.max_length is None:
            raise ValueError(f"{server_key.name} needs a length cap")
        self.max_length = server_key.max_length

    def from_config_key(self, config_key: str) -> str:
        """Lower-case, runs outside [a-z0-9] become "-", no leading or trailing "-", "s-"
        before a leading digit, at most the grammar's longest. Raises the grammar's error
        (UNKNOWN_SERVER) for a key with no letter or digit."""
        key = _OUTSIDE_KEY.sub("-", config_key.lower()).strip("-")
        if not key:
            message = (
                f"config key {config_key!r} has no letters or digits to make a server key from"
            )
            raise self.error(self.grammar.error, message, config_key)
        if not key[0].isalpha():
            key = _DIGIT_PREFIX + key
        key = key[: self.max_length].rstrip("-")
        self.grammar.match(key, self.error)
        return key


class AggregateNames:
    """server__tool, split once at the boundary. `not_namespaced` is the code for a name with
    no separator at all; every other malformation raises the grammar's error."""

    def __init__(
        self, aggregate_name: GrammarInfo, not_namespaced: enum.StrEnum, error: ErrorFactory
    ) -> None:
        self.grammar = aggregate_name
        self.not_namespaced = not_namespaced
        self.error = error

    def parse(self, value: object) -> tuple[str, str]:
        if isinstance(value, str) and SEPARATOR not in value:
            message = f"tool {value!r} is not namespaced; expected server{SEPARATOR}tool"
            raise self.error(self.not_namespaced, message, value)
        return _pair(self.grammar.match(value, self.error), "server", "tool")

    def format(self, server_key: str, tool_name: str) -> str:
        """Egress: server__tool; raises the grammar's error when the result is malformed."""
        name = f"{server_key}{SEPARATOR}{tool_name}"
        self.grammar.match(name, self.error)
        return name


class ResourceUris:
    """server_key + "+" + the upstream URI (AM-RESOURCE-URI), split at the first "+" (a server
    key holds none). `not_namespaced` is the code for a URI whose scheme holds no "+"; every
    other malformation raises the grammar's error."""

    MARK = "+"

    def __init__(
        self, resource_uri: GrammarInfo, not_namespaced: enum.StrEnum, error: ErrorFactory
    ) -> None:
        self.grammar = resource_uri
        self.not_namespaced = not_namespaced
        self.error = error

    def parse(self, value: object) -> tuple[str, str]:
        """Ingress: (server key, the upstream's URI)."""
        if isinstance(value, str) and self.MARK not in value.partition(":")[0]:
            message = f"resource URI {value!r} is not namespaced; expected server{self.MARK}uri"
            raise self.error(self.not_namespaced, message, value)
        return _pair(self.grammar.match(value, self.error), "server", "uri")

    def format(self, server_key: str, uri: str) -> str:
        """Egress: server+uri; raises the grammar's error when the URI cannot be namespaced."""
        namespaced = f"{server_key}{self.MARK}{uri}"
        self.grammar.match(namespaced, self.error)
        return namespaced


class SearchOperations:
    def __init__(self, search_operation: GrammarInfo, error: ErrorFactory) -> None:
        self.grammar = search_operation
        self.error = error

    def parse(self, value: object) -> tuple[str, str]:
        """ "/namespace/name" -> (namespace, name)."""
        return _pair(self.grammar.match(value, self.error), "namespace", "name")

    def format(self, namespace: str, name: str) -> str:
        op = f"/{namespace}/{name}"
        self.grammar.match(op, self.error)
        return op
