"""Tool ranking for the gateway's ``tool_browse(query)`` meta-tool."""

from gatespec.ranking.bm25 import (
    DEFAULT_FIELD_WEIGHTS,
    FIELDS,
    MAX_QUERY_CHARS,
    Bm25Index,
    Document,
    schema_fields,
)
from gatespec.ranking.text import tokenize

__all__ = [
    "DEFAULT_FIELD_WEIGHTS",
    "FIELDS",
    "MAX_QUERY_CHARS",
    "Bm25Index",
    "Document",
    "schema_fields",
    "tokenize",
]
