"""Tool ranking for tool_browse(query) and the search profile: BM25F over a tool's fields fused
with a small sentence-embedding model (see ranker.py)."""

from gatespec.ranking.bm25 import DEFAULT_FIELD_WEIGHTS, FIELDS, Bm25Index
from gatespec.ranking.documents import Document, embedding_text, schema_fields, schema_text
from gatespec.ranking.fusion import DEFAULT_PARAMS, FusionParams
from gatespec.ranking.ranker import Ranker
from gatespec.ranking.text import tokenize

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
