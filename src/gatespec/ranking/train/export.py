"""The trained query tower as int8 weights beside the shipped model, checked and written.

Only the layers that trained are written: each matrix as the shipped file stores it (int8 and
one scale per output, under the file's own initializer names), biases and layer norms as
float32. gatespec.ranking.learned hands them to onnxruntime in place of the file's own, so
the artifact is a few MB instead of a second model, and the tool side is the shipped model
untouched. Before writing, the exported weights are run through onnxruntime exactly as the
serving path runs them and compared with the torch model on real queries.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gatespec.ranking.train.model import OnnxWeights, quantize
from gatespec.ranking.train.trainer import LAYERS, encode

if TYPE_CHECKING:
    import numpy as np
    import torch

    from gatespec.ranking.encoder import WordPieces

__all__ = ["ARTIFACT", "arrays", "base_model_path", "write"]

ARTIFACT = "query_encoder.npz"
_PREFIX = "inner."
# Queries the export check encodes both ways (any text does; these are everyday ones).
_CHECK = [
    "tell the team in #general that the deploy finished",
    "what time is it in Tokyo",
    "ship the PR #42",
    "find flights from Berlin to Lisbon next Friday",
    "list the open issues assigned to me",
]
MIN_AGREEMENT = 0.99  # cosine between the torch and the exported (int8) query vectors


def base_model_path() -> Path:
    from gatespec.ranking.encoder import _model_file

    return _model_file()[0]


def arrays(model: torch.nn.Module, weights: OnnxWeights, layers: int) -> dict[str, np.ndarray]:
    """ONNX initializer name -> array, for the top `layers` layers of `model`."""
    trained = tuple(f"encoder.layer.{i}." for i in range(LAYERS - layers, LAYERS))
    out: dict[str, np.ndarray] = {}
    for name, tensor in model.state_dict().items():
        if not name.startswith(trained):
            continue
        value = tensor.detach().cpu().numpy().astype("float32")
        _base, stem, transposed = weights.tensors[name]
        if stem is None:
            out[_PREFIX + name] = value
        else:
            q, scale = quantize(value, transposed)
            out[f"{stem}_q"], out[f"{stem}_scale"] = q, scale
    return out


def write(
    model: torch.nn.Module,
    weights: OnnxWeights,
    layers: int,
    out_dir: Path,
    pieces: WordPieces,
) -> dict[str, Any]:
    import numpy as np

    from gatespec.ranking.learned import query_encoder

    data = arrays(model, weights, layers)
    buf = io.BytesIO()
    np.savez_compressed(buf, **data)
    blob = buf.getvalue()
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / ARTIFACT
    path.write_bytes(blob)
    served = query_encoder(path).encode(_CHECK, query=True)
    trained = encode(model, pieces, _CHECK)
    agreement = float((served * trained).sum(axis=1).min())
    if agreement < MIN_AGREEMENT:
        raise SystemExit(f"the exported weights disagree with the trained model ({agreement})")
    return {
        "file": ARTIFACT,
        "bytes": len(blob),
        "sha256": hashlib.sha256(blob).hexdigest(),
        "initializers": len(data),
        "min_cosine_torch_vs_int8": round(agreement, 5),
    }
