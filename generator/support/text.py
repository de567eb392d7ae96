"""Text that reaches a client: one way to make it encodable, one way to cut it, one way to name
a JSON value's type."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

# JSON may carry lone UTF-16 surrogates ("\ud800"), which json.loads keeps; they cannot be
# encoded as UTF-8, so text quoted back to a client is scrubbed first.
_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def scrub(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD, so it always encodes as UTF-8."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def clip(text: str, limit: int, ellipsis: str, *, at_word: bool = False) -> str:
    """`text` scrubbed and cut to at most `limit` characters ending in `ellipsis` when anything
    was cut. at_word: cut at the last white space when that keeps at least four fifths of the
    room (a half word reads worse than a slightly shorter summary)."""
    text = scrub(text)
    if len(text) <= limit:
        return text
    room = limit - len(ellipsis)
    cut = text[:room]
    if at_word:
        space = max(cut.rfind(" "), cut.rfind("\n"), cut.rfind("\t"))
        if space >= room * 4 // 5:
            cut = cut[:space].rstrip()
    return cut + ellipsis


def json_type(value: Any) -> str:
    """The JSON Schema type name of a decoded JSON value (integers are "number", as JSON has
    one number type); other Python values by their class name."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    return type(value).__name__
