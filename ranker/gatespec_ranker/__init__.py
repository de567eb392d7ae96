"""gatespec's learned query tower (see MODEL_CARD.md): data only, read by
gatespec.ranking.learned."""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["LEXICAL_WEIGHT", "SHA256", "artifact_path"]

_HERE = Path(__file__).resolve().parent
# The training run's record (choices, fold figures, the artifact's sha256) is the one place
# the digest is written; the loader checks the file against it.
_RECORD = json.loads((_HERE / "training.json").read_text(encoding="utf-8"))
SHA256: str = _RECORD["export"]["sha256"]
# The fusion weight of BM25 chosen with the tower (gatespec.ranking.fusion's lexical_weight).
LEXICAL_WEIGHT: float = _RECORD["choice"]["lexical_weight"]


def artifact_path() -> Path:
    return _HERE / "query_encoder.onnx"
