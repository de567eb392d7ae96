"""Tool ranking for tool_browse(query) and the search profile: BM25F over a tool's fields fused
with a small sentence-embedding model (see ranker.py).

The names below load on first use (PEP 562): a serve imports gatespec.ranking.loading at start
to say which ranking it offers, and importing this package must not bring the BM25 index, the
stemmer and the ranker with it (~5 MiB resident that a serve needs on its first browse, if
ever)."""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gatespec.ranking.bm25 import DEFAULT_FIELD_WEIGHTS, FIELDS, Bm25Index
    from gatespec.ranking.documents import Document, embedding_text, schema_fields, schema_text
    from gatespec.ranking.fusion import DEFAULT_PARAMS, FusionParams
    from gatespec.ranking.ranker import Ranker
    from gatespec.ranking.text import tokenize

_HOME = {
    "DEFAULT_FIELD_WEIGHTS": "bm25",
    "FIELDS": "bm25",
    "Bm25Index": "bm25",
    "Document": "documents",
    "embedding_text": "documents",
    "schema_fields": "documents",
    "schema_text": "documents",
    "DEFAULT_PARAMS": "fusion",
    "FusionParams": "fusion",
    "Ranker": "ranker",
    "tokenize": "text",
}

__all__ = [
    "DEFAULT_FIELD_WEIGHTS",
    "DEFAULT_PARAMS",
    "FIELDS",
    "Bm25Index",
    "Document",
    "FusionParams",
    "Ranker",
    "embedding_text",
    "schema_fields",
    "schema_text",
    "tokenize",
]


def __getattr__(name: str) -> Any:
    # One import statement per home, never a computed module name: the runtime's imports stay
    # visible to linters and to the guard that it never imports the generator or the kit.
    home = _HOME.get(name)
    module: ModuleType
    if home == "bm25":
        from gatespec.ranking import bm25 as module
    elif home == "documents":
        from gatespec.ranking import documents as module
    elif home == "fusion":
        from gatespec.ranking import fusion as module
    elif home == "ranker":
        from gatespec.ranking import ranker as module
    elif home == "text":
        from gatespec.ranking import text as module
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(module, name)
