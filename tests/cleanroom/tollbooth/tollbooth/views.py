"""Artifact store and ``tool_view(handle, selector)`` drilldown.

Seed 000 §4.2 names tool_view only to fix the gateway's meta-tool count
("Specified in #34"); seed 002 adds the ``VIEW_FAILED`` code.  The selector
language below is this implementation's choice (README "Readings").

Selectors (``selector`` may be omitted, ``""`` or ``"*"`` for the whole artifact):

* ``chars:START-END``  0-based, END exclusive, either side optional (``chars:100-``)
* ``lines:START-END``  1-based, inclusive, either side optional (``lines:5-9``)
* ``/json/pointer``    RFC 6901 pointer into a JSON artifact (``/items/0/name``)
* ``keys``             top-level keys of a JSON object artifact (or array length)

Textual results are capped at ``VIEW_MAX_CHARS`` characters; a capped view
says ``"truncated": true`` and gives the ``next`` ``chars:`` selector.
Binary artifacts (non-text media types) are returned base64-encoded whole.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

from .errors import VIEW_FAILED, GatewayError
from .results import Binaries

VIEW_MAX_CHARS = 4000
_RANGE = re.compile(r"(chars|lines):(\d*)-(\d*)")


def is_textual(media_type: str) -> bool:
    mt = media_type.split(";")[0].strip().lower()
    return mt.startswith("text/") or mt == "application/json" or mt.endswith("+json") or mt.endswith("/xml")


def is_json(media_type: str) -> bool:
    mt = media_type.split(";")[0].strip().lower()
    return mt == "application/json" or mt.endswith("+json")


class ArtifactStore:
    """In-memory, per-session handle -> (bytes, media_type, label) store."""

    def __init__(self) -> None:
        self._items: Binaries = {}

    def put_all(self, binaries: Binaries) -> None:
        self._items.update(binaries)

    def get(self, handle: str) -> tuple[bytes, str, str]:
        try:
            return self._items[handle]
        except KeyError:
            raise GatewayError(VIEW_FAILED, f"unknown artifact handle {handle!r}", path=handle) from None

    def __contains__(self, handle: object) -> bool:
        return handle in self._items

    def __len__(self) -> int:
        return len(self._items)


def _pointer(doc: Any, pointer: str, handle: str) -> Any:
    cur = doc
    for raw in pointer.split("/")[1:]:
        tok = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(cur, dict) and tok in cur:
            cur = cur[tok]
        elif isinstance(cur, list) and tok.isdigit() and int(tok) < len(cur):
            cur = cur[int(tok)]
        else:
            raise GatewayError(VIEW_FAILED, f"JSON pointer {pointer!r} does not resolve", path=handle)
    return cur


def _cap(text: str, offset: int, handle: str, selector: str, media_type: str, total: int) -> dict[str, Any]:
    view: dict[str, Any] = {
        "handle": handle,
        "selector": selector,
        "media_type": media_type,
        "total_chars": total,
        "content": text[:VIEW_MAX_CHARS],
        "truncated": len(text) > VIEW_MAX_CHARS,
    }
    if view["truncated"]:
        view["next"] = f"chars:{offset + VIEW_MAX_CHARS}-"
    return view


def view_artifact(store: ArtifactStore, handle: str, selector: str = "") -> dict[str, Any]:
    """Resolve *selector* against artifact *handle*.  Raises
    :class:`GatewayError` ``VIEW_FAILED`` for unknown handles, selectors that
    do not parse, do not apply to the media type, or do not resolve."""
    raw, media_type, label = store.get(handle)
    selector = (selector or "").strip()
    if not is_textual(media_type):
        if selector not in ("", "*"):
            raise GatewayError(VIEW_FAILED, "binary artifacts only support the whole-artifact selector", path=handle)
        return {
            "handle": handle,
            "selector": selector,
            "media_type": media_type,
            "label": label,
            "size_bytes": len(raw),
            "encoding": "base64",
            "content": base64.b64encode(raw).decode("ascii"),
            "truncated": False,
        }
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise GatewayError(VIEW_FAILED, "artifact is not valid UTF-8", path=handle) from None
    total = len(text)
    if selector in ("", "*"):
        return _cap(text, 0, handle, selector, media_type, total)
    m = _RANGE.fullmatch(selector)
    if m:
        unit, a, b = m.group(1), m.group(2), m.group(3)
        if unit == "chars":
            start = int(a) if a else 0
            end = int(b) if b else total
            if start > end or start > total:
                raise GatewayError(VIEW_FAILED, f"empty or out-of-range selector {selector!r}", path=handle)
            return _cap(text[start:end], start, handle, selector, media_type, total)
        lines = text.splitlines()
        first = int(a) if a else 1
        last = int(b) if b else len(lines)
        if first < 1 or first > last or first > len(lines):
            raise GatewayError(VIEW_FAILED, f"empty or out-of-range selector {selector!r}", path=handle)
        chunk = "\n".join(lines[first - 1 : last])
        view = _cap(chunk, 0, handle, selector, media_type, total)
        view.pop("next", None)
        return view
    if selector == "keys" or selector.startswith("/"):
        if not is_json(media_type):
            raise GatewayError(VIEW_FAILED, f"selector {selector!r} needs a JSON artifact", path=handle)
        try:
            doc = json.loads(text)
        except ValueError:
            raise GatewayError(VIEW_FAILED, "artifact is not valid JSON", path=handle) from None
        if selector == "keys":
            value: Any = list(doc.keys()) if isinstance(doc, dict) else {"length": len(doc)} if isinstance(doc, list) else None
            if value is None:
                raise GatewayError(VIEW_FAILED, "'keys' needs a JSON object or array", path=handle)
        else:
            value = _pointer(doc, selector, handle)
        rendered = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        view = _cap(rendered, 0, handle, selector, media_type, total)
        view.pop("next", None)
        return view
    raise GatewayError(VIEW_FAILED, f"unrecognised selector {selector!r}", path=handle, details={"selector": selector})
