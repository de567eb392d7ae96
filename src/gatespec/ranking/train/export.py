"""The trained query tower as an ONNX file: the shipped int8 file with the trained layers'
weights in place of its own.

Each trained matrix goes under the file's own initializer names, as float16 where the file
has int8 (its scales set to 1), biases and layer norms as float32; the graph is the shipped
one untouched, the untrained weights (the embeddings) stay int8. (Handing onnxruntime only the changed initializers does not work: the
int8 weights feed Cast/Mul nodes that its constant folding computes from the file's own
values, and folding cannot be turned off without making a query ~10x slower.) Before writing,
the file is run through onnxruntime exactly as the serving path runs it and compared with the
torch model on real queries.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gatespec.ranking.train.model import OnnxWeights
from gatespec.ranking.train.trainer import LAYERS, encode

if TYPE_CHECKING:
    import numpy as np
    import torch

    from gatespec.ranking.encoder import WordPieces

__all__ = ["ARTIFACT", "arrays", "base_model_path", "onnx_bytes", "write"]

ARTIFACT = "query_encoder.onnx"
_PREFIX = "inner."
# Queries the export check encodes both ways (any text does; these are everyday ones).
_CHECK = [
    "tell the team in #general that the deploy finished",
    "what time is it in Tokyo",
    "ship the PR #42",
    "find flights from Berlin to Lisbon next Friday",
    "list the open issues assigned to me",
]
MIN_AGREEMENT = 0.99  # cosine between the torch and the exported query vectors


def base_model_path() -> Path:
    from gatespec.ranking.encoder import _model_file

    return _model_file()[0]


def arrays(model: torch.nn.Module, weights: OnnxWeights, layers: int) -> dict[str, np.ndarray]:
    """ONNX initializer name -> array, for the top `layers` layers of `model`."""
    import numpy as np

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
            # float16 in place of int8 (the graph's Cast to float takes either): re-quantising
            # trained weights to int8 cost cosine 0.966 to the trained model on real queries
            # (the shipped int8 weights lie on their grid; trained ones do not), float16 keeps
            # it above 0.999 at twice the size of those layers.
            layout = value.T if transposed else value
            out[f"{stem}_q"] = np.ascontiguousarray(layout, dtype=np.float16)
            rows, cols = layout.shape
            shape = (1, cols) if transposed else (rows, 1)  # the file's: one scale per output
            out[f"{stem}_scale"] = np.ones(shape, dtype=np.float32)
    return out


def onnx_bytes(data: dict[str, np.ndarray]) -> bytes:
    """The shipped ONNX file with `data` in place of its initializers of the same names."""
    import onnx
    from onnx import numpy_helper

    proto = onnx.load(str(base_model_path()))
    replaced = 0
    for init in proto.graph.initializer:
        if init.name in data:
            init.CopyFrom(numpy_helper.from_array(data[init.name], init.name))
            replaced += 1
    if replaced != len(data):
        raise ValueError(f"only {replaced} of {len(data)} trained weights are in the base file")
    blob: bytes = proto.SerializeToString()
    return blob


def write(
    model: torch.nn.Module,
    weights: OnnxWeights,
    layers: int,
    out_dir: Path,
    pieces: WordPieces,
) -> dict[str, Any]:
    from gatespec.ranking.learned import query_encoder

    data = arrays(model, weights, layers)
    blob = onnx_bytes(data)
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
        "initializers_replaced": len(data),
        "min_cosine_torch_vs_int8": round(agreement, 5),
    }
