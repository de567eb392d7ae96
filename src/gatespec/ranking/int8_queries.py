"""Queries encoded in int8 arithmetic (opt-in: ``GATESPEC_QUERY_INT8=on``).

The shipped model's weights are int8 but its arithmetic is float32: onnxruntime folds each
weight back to float32 at load, and a query of ~30 word pieces costs ~9 ms of CPU in those
float32 products, most of a warm tool_browse(query) at 10,000 tools (bench/startup.py). The
same model with its MatMuls quantised dynamically (onnxruntime.quantization: int8 weights per
output channel, activations quantised per run; VNNI / AMX on recent x86) encodes a query in
~4 ms. Its vectors are not the shipped model's (cosine >= 0.988 to them on the MCP dev
queries; through `gatespec rank` on every dev set of bench/retrieval.py, hit@5 moved by at
most half a point, up on some sets and down on others),
so it encodes queries only: tools keep the shipped model's cached vectors, as with the
learned query tower (gatespec.ranking.learned), and the shipped model itself is loaded only
when a tool's vector is not in the cache (`LazyToolEncoder`).

The quantised file is built once from the shipped one (a few seconds of CPU, on the worker
thread that loads the model, while queries are ranked lexically) and kept in the user's
cache directory beside the vectors. Building needs the ``onnx`` package (the
``gatespec[int8-queries]`` extra); without it the shipped model encodes queries and the
status line says why.
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from gatespec.ranking.encoder import MiniLmEncoder
from gatespec.ranking.vector_cache import cache_dir

if TYPE_CHECKING:
    import numpy as np

__all__ = ["ON_ENV", "LazyToolEncoder", "int8_query_encoder", "quantized_file", "switched_on"]

ON_ENV = "GATESPEC_QUERY_INT8"
_MODELS = "models"


def switched_on() -> bool:
    return os.environ.get(ON_ENV, "").strip().lower() in ("1", "on", "true", "yes")


def quantized_file(model: Path, model_sha256: str, directory: Path | None = None) -> Path:
    """The int8-arithmetic copy of `model`, built on first use and cached (written aside,
    then renamed: a concurrent builder or an interrupted build leaves no partial file)."""
    folder = (directory or cache_dir()) / _MODELS
    target = folder / f"all-MiniLM-L6-v2-{model_sha256[:16]}-dynamic-int8.onnx"
    if target.is_file():
        return target
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        # Fold the shipped file's int8 -> float32 weight casts first: the quantiser then sees
        # plain float32 MatMuls.
        folded = Path(tmp) / "folded.onnx"
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        options.log_severity_level = 3
        ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        built = Path(tmp) / "int8.onnx"
        quantize_dynamic(
            folded,
            built,
            weight_type=QuantType.QInt8,
            per_channel=True,  # per tensor, some query vectors moved to cosine 0.90
            # Gather: the word-piece embedding table stays int8 too (it is most of the file:
            # 47 MB in float32); the session then adds ~47 MB, not ~82.
            op_types_to_quantize=["MatMul", "Gather"],
        )
        os.replace(built, target)
    return target


class LazyToolEncoder(MiniLmEncoder):
    """The shipped model for tool texts, loaded on the first tool that has no cached vector:
    with queries in int8 arithmetic, a gateway whose catalog is cached never loads it (~110
    MB of float32 session)."""

    def __init__(self, model: Path, model_sha256: str) -> None:
        # No session until needed: the loaded encoder is made on the first encode.
        self._args = (model, model_sha256)
        self._loaded: MiniLmEncoder | None = None
        self._lock = threading.Lock()
        self.model_id = self.query_model_id = MiniLmEncoder.id_for(model_sha256)

    @property
    def loaded(self) -> bool:
        return self._loaded is not None

    def encode(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        with self._lock:
            if self._loaded is None:
                self._loaded = MiniLmEncoder(*self._args)
        return self._loaded.encode(texts, query=query)


def int8_query_encoder(
    model: Path, model_sha256: str, directory: Path | None = None
) -> MiniLmEncoder:
    """An encoder running the int8-arithmetic copy of `model` (for queries only)."""
    import hashlib

    path = quantized_file(model, model_sha256, directory)
    with path.open("rb") as fh:
        digest = hashlib.file_digest(fh, "sha256").hexdigest()
    encoder = MiniLmEncoder(path, digest)
    encoder.model_id = f"all-MiniLM-L6-v2-dynamic-int8-{digest[:16]}"
    return encoder
