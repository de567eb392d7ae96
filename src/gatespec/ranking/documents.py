"""What the ranker knows about one tool, and the text each half of it reads.

The lexical index reads the fields of :class:`Document` separately (each has its own weight);
the sentence-embedding model reads one string, :func:`embedding_text`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Document", "embedding_text", "schema_fields", "schema_text"]

# Enough property text to tell tools apart; a schema with hundreds of documented properties
# must not make its tool dominate every query (or make the index build slow).
_SCHEMA_TEXT_MAX_CHARS = 2000
_NAME_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


@dataclass(frozen=True)
class Document:
    """One searchable tool."""

    id: str  # opaque, e.g. "github:create_issue#3a91c7d2"; must be unique within an index
    name: str  # upstream tool name, e.g. "create_issue"
    description: str  # may be empty or non-English
    fields: tuple[str, ...] = ()  # input-schema property names
    namespace: str = ""  # server key, e.g. "github"
    field_text: str = ""  # input-schema property descriptions (schema_text)

    @classmethod
    def of_tool(
        cls, id: str, name: str, description: str, namespace: str, input_schema: object
    ) -> Document:
        schema = input_schema if isinstance(input_schema, Mapping) else None
        return cls(
            id=id,
            name=name,
            description=description,
            fields=schema_fields(schema),
            namespace=namespace,
            field_text=schema_text(schema),
        )


def _properties(input_schema: Mapping[str, Any] | None) -> Mapping[str, Any]:
    if not isinstance(input_schema, Mapping):
        return {}
    props = input_schema.get("properties")
    return props if isinstance(props, Mapping) else {}


def schema_fields(input_schema: Mapping[str, Any] | None) -> tuple[str, ...]:
    """Top-level property names of a tool's JSON input schema, in schema order."""
    return tuple(str(p) for p in _properties(input_schema))


def schema_text(input_schema: Mapping[str, Any] | None) -> str:
    """The descriptions and enum values of the top-level properties, in schema order, cut to a
    bound. Users describe what they want in the words tools use for their arguments ("the
    city", "in Celsius"), which names alone rarely carry."""
    parts: list[str] = []
    size = 0
    for prop in _properties(input_schema).values():
        if not isinstance(prop, Mapping):
            continue
        words = []
        if isinstance(prop.get("description"), str):
            words.append(prop["description"])
        if isinstance(prop.get("enum"), list):
            words.extend(str(v) for v in prop["enum"][:20])
        for text in words:
            parts.append(text)
            size += len(text) + 1
            if size >= _SCHEMA_TEXT_MAX_CHARS:
                return " ".join(parts)[:_SCHEMA_TEXT_MAX_CHARS]
    return " ".join(parts)


def embedding_text(doc: Document) -> str:
    """The one string the sentence-embedding model reads for a tool: namespace, the name as
    words ("get_current_time" -> "get current time"), description, property names.

    Chosen on bench/retrieval.py's dev sets against name + description alone and against
    adding property descriptions (see bench/results/retrieval.md)."""
    words = " ".join(w.lower() for w in _NAME_WORDS.findall(doc.name)) or doc.name
    text = f"{doc.namespace}: {words}: {doc.description}".strip()
    if doc.fields:
        text += f" ({', '.join(doc.fields)})"
    return text
