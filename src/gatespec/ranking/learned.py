"""The learned query tower: all-MiniLM-L6-v2 with its top layers fine-tuned on tool queries.

`python -m gatespec.ranking.train` fine-tunes the query side only (issue 26): a query is
encoded by the learned weights, a tool by the shipped model as before, so a catalog's cached
tool vectors stay valid and nothing is re-encoded. The artifact is the trained layers alone
(int8 matrices with their scales and float biases, under the shipped ONNX file's initializer
names); onnxruntime runs the shipped file with those in place of its own. It ships in its own
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
from pathlib import Path
from typing import TYPE_CHECKING

from gatespec.ranking.encoder import MiniLmEncoder, _model_file

if TYPE_CHECKING:
    import numpy as np

__all__ = ["OFF_ENV", "LearnedQueries", "artifact", "query_encoder", "switched_off", "with_learned"]

OFF_ENV = "GATESPEC_LEARNED"
_PACKAGE = "gatespec_ranker"

log = logging.getLogger(__name__)


def switched_off() -> bool:
    return os.environ.get(OFF_ENV, "").strip().lower() in ("0", "off", "false", "no")


def artifact() -> tuple[Path, str] | None:
    """The shipped query tower's file and sha256, or None when gatespec-ranker is not
    installed (ValueError when its file does not match the sha256 it pins)."""
    if importlib.util.find_spec(_PACKAGE) is None:
        return None
    import gatespec_ranker as package

    path = package.artifact_path()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != package.SHA256:
        raise ValueError(f"{path} does not match the sha256 its package pins")
    return path, digest


def query_encoder(path: Path, threads: int | None = None) -> MiniLmEncoder:
    """The shipped model with the trained layers of `path` in place of its own."""
    import numpy as np

    with np.load(path) as data:
        overrides = {name: data[name] for name in data.files}
    base_path, base_sha = _model_file()
    encoder = MiniLmEncoder(base_path, base_sha, threads, overrides=overrides)
    encoder.model_id = (
        f"{encoder.model_id}-learned-{hashlib.sha256(path.read_bytes()).hexdigest()[:16]}"
    )
    return encoder


class LearnedQueries(MiniLmEncoder):
    """Tools by the shipped model, queries by the learned tower. Its model_id is the shipped
    model's (the tool vectors it caches are that model's); query_model_id names the tower."""

    def __init__(self, tools: MiniLmEncoder, queries: MiniLmEncoder) -> None:  # noqa: D107
        # No session of its own: both halves are complete encoders.
        self.tools, self.queries = tools, queries
        self.model_id = tools.model_id
        self.query_model_id = queries.model_id

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
    return LearnedQueries(base, tower), "queries by the learned query tower (gatespec-ranker)"
