"""The learned query tower: all-MiniLM-L6-v2 with its top layers fine-tuned on tool queries.

`python -m gatespec.ranking.train` fine-tunes the query side only (issue 26): a query is
encoded by the learned weights, a tool by the shipped model as before, so a catalog's cached
tool vectors stay valid and nothing is re-encoded. The artifact is the shipped int8 ONNX file with the
trained layers' weights in place of its own (gatespec.ranking.train.export), run by
onnxruntime as the shipped model is. It ships in its own
distribution, ``gatespec-ranker`` (ranker/ in the repository; its model card says what it was
trained on and how it measured), and nothing is downloaded at run time.

Used when that package is installed and its file matches the sha256 it pins, unless
``GATESPEC_LEARNED=off`` (or `gatespec rank --no-learned`): then queries are encoded by the
shipped model, exactly as before.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from gatespec.ranking.encoder import MiniLmEncoder
from gatespec.ranking.fusion import DEFAULT_PARAMS, FusionParams

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "OFF_ENV",
    "LearnedQueries",
    "artifact",
    "fusion_for",
    "query_encoder",
    "switched_off",
    "with_learned",
]

OFF_ENV = "GATESPEC_LEARNED"
_PACKAGE = "gatespec_ranker"

log = logging.getLogger(__name__)


def switched_off() -> bool:
    return os.environ.get(OFF_ENV, "").strip().lower() in ("0", "off", "false", "no")


def artifact() -> tuple[Path, float] | None:
    """The shipped query tower's file and the fusion weight chosen with it, or None when
    gatespec-ranker is not installed (ValueError when its file does not match the sha256 it
    pins)."""
    if importlib.util.find_spec(_PACKAGE) is None:
        return None
    import gatespec_ranker as package

    path = package.artifact_path()
    if hashlib.sha256(path.read_bytes()).hexdigest() != package.SHA256:
        raise ValueError(f"{path} does not match the sha256 its package pins")
    return path, float(package.LEXICAL_WEIGHT)


def query_encoder(path: Path, threads: int | None = None) -> MiniLmEncoder:
    """The learned tower: an int8 ONNX file of the shipped model's graph with trained
    weights, run as the shipped model is run."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    encoder = MiniLmEncoder(path, digest, threads)
    encoder.model_id = f"all-MiniLM-L6-v2-int8-learned-{digest[:16]}"
    return encoder


class LearnedQueries(MiniLmEncoder):
    """Tools by the shipped model, queries by another encoder into the same space: the
    learned tower, or the shipped model in int8 arithmetic (gatespec.ranking.int8_queries).
    Its model_id is the shipped model's (the tool vectors it caches are that model's);
    query_model_id names the query encoder."""

    def __init__(
        self, tools: MiniLmEncoder, queries: MiniLmEncoder, lexical_weight: float | None = None
    ) -> None:
        # No session of its own: both halves are complete encoders.
        self.tools, self.queries = tools, queries
        self.model_id = tools.model_id
        self.query_model_id = queries.model_id
        self.lexical_weight = lexical_weight  # the fusion weight chosen with the tower

    def encode(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        return (self.queries if query else self.tools).encode(texts, query=query)


def with_learned(base: MiniLmEncoder) -> tuple[MiniLmEncoder, str]:
    """`base`, or it with the learned query tower, and a few words saying which."""
    if switched_off():
        return base, f"queries by the shipped model ({OFF_ENV}=off)"
    try:
        found = artifact()
        if found is None:
            return base, "queries by the shipped model (gatespec-ranker is not installed)"
        tower = query_encoder(found[0])
    except Exception as exc:  # a broken artifact costs the learned part, not the model
        log.warning("the learned query tower is unavailable", exc_info=True)
        return base, f"queries by the shipped model: the learned query tower failed ({exc})"
    return (
        LearnedQueries(base, tower, found[1]),
        "queries by the learned query tower (gatespec-ranker)",
    )


def fusion_for(params: FusionParams, encoder: MiniLmEncoder) -> FusionParams:
    """`params`, with the fusion weight chosen with the learned tower when it encodes the
    queries and `params` are the defaults (a caller's own choice stands)."""
    weight = encoder.lexical_weight if isinstance(encoder, LearnedQueries) else None
    if weight is None or params != DEFAULT_PARAMS:
        return params
    return replace(params, lexical_weight=weight)
