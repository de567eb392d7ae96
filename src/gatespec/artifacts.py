"""In-memory artifact store behind tool_execute's artifacts and tool_view (seed 000 §4.2, seed 002).

The result firewall puts everything large or binary here and hands the agent an ArtifactRef;
tool_view reads a slice back through a selector. The store is bounded (total bytes and entry
count, and bytes per identity) and evicts least-recently-used artifacts, from the identity that
holds the most of the store; an evicted handle gives a VIEW_FAILED that
says so. Handle and selector syntax, the view cap and the error codes come from
gatespec_surface.

What a view returns (`ViewResult`):
  content     the selected slice as text. Text artifacts (a textual media type whose bytes are
              UTF-8) give text; "bytes:A-B" on a text artifact decodes the slice as UTF-8,
              replacing a sequence cut at either edge with U+FFFD. Binary artifacts give
              base64 (standard alphabet, padded) for "all" and "bytes:A-B"; "lines:" does not
              apply to them. "json:/pointer" gives the addressed value as compact JSON.
              Content longer than budgets.VIEW_MAX_CHARS is cut there (base64 at a multiple
              of 4 characters, so the prefix still decodes) and `truncated` is true.
  total_size  the whole artifact's size in bytes (the ArtifactRef's size_bytes), whatever the
              selector: with `truncated` it tells the agent how to page with "bytes:A-B".
Ranges follow HTTP range semantics: a start past the end is VIEW_FAILED (naming what exists),
an end past the end is clamped to the end.
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from gatespec_surface.budgets import VIEW_MAX_CHARS
from gatespec_surface.errors import ErrorCode, GatewayError
from gatespec_surface.grammars import ARTIFACT_HANDLE, is_artifact_handle
from gatespec_surface.parsers import ViewSelector, parse_view_selector
from gatespec_surface.schemas import MODEL_SCHEMAS
from gatespec_surface.text import clip, scrub

_REF: Final = MODEL_SCHEMAS["ArtifactRef"]["properties"]
MEDIA_TYPE_MAX_CHARS: Final[int] = _REF["media_type"]["maxLength"]
LABEL_MAX_CHARS: Final[int] = _REF["label"]["maxLength"]
URI_MAX_CHARS: Final[int] = _REF["uri"]["maxLength"]

HANDLE_PREFIX: Final = "art_"
# The handle grammar fixes the length; the random part is whatever follows the prefix.
_HANDLE_HEX_CHARS: Final = ARTIFACT_HANDLE.min_length - len(HANDLE_PREFIX)

# Not spec bounds: memory policy of this process (configurable per store).
DEFAULT_MAX_TOTAL_BYTES: Final = 64 * 1024 * 1024
DEFAULT_MAX_ARTIFACTS: Final = 4096
# How many evicted handles are remembered, to tell "evicted" from "never existed".
_EVICTED_MEMORY: Final = 4096
_DECODE_ERROR_MAX: Final = 200  # the parser's own words about a document that is not JSON

OCTET_STREAM: Final = "application/octet-stream"
_TEXT_APPLICATION_TYPES: Final = frozenset(
    {
        "application/json",
        "application/ld+json",
        "application/x-ndjson",
        "application/xml",
        "application/javascript",
        "application/ecmascript",
        "application/x-javascript",
        "application/yaml",
        "application/x-yaml",
        "application/toml",
        "application/sql",
        "application/graphql",
        "application/x-sh",
        "application/x-python",
        "application/csv",
    }
)


def view_error(message: str, path: str, details: dict[str, Any] | None = None) -> GatewayError:
    """VIEW_FAILED with message and path within the ErrorPayload bounds."""
    return GatewayError(ErrorCode.VIEW_FAILED, message, path, details)


def clean_media_type(value: object) -> str:
    """A media type an ArtifactRef accepts: upstream strings are untrusted, so anything empty,
    over the cap or not a string becomes application/octet-stream."""
    if isinstance(value, str):
        value = value.strip()
        if 0 < len(value) <= MEDIA_TYPE_MAX_CHARS and value.isprintable():
            return value
    return OCTET_STREAM


def is_textual_media_type(media_type: str) -> bool:
    base = media_type.split(";", 1)[0].strip().lower()
    return (
        base.startswith("text/")
        or base.endswith("+json")
        or base.endswith("+xml")
        or base in _TEXT_APPLICATION_TYPES
    )


@dataclass(frozen=True)
class Artifact:
    handle: str
    data: bytes
    media_type: str
    label: str
    uri: str | None
    # Decided once at put: a textual media type and bytes that decode as UTF-8.
    is_text: bool
    # Who may read it (a caller's scope: its identity and session); None: anyone.
    owner: str | None = None

    @property
    def size(self) -> int:
        return len(self.data)

    def ref(self) -> dict[str, Any]:
        """The ArtifactRef (models.yaml) for this artifact."""
        return {
            "handle": self.handle,
            "media_type": self.media_type,
            "label": self.label,
            "size_bytes": self.size,
            "uri": self.uri,
        }

    def text(self) -> str:
        return self.data.decode("utf-8") if self.is_text else ""


def share_of(owner: str | None) -> str | None:
    """The share an owner's artifacts count against: its identity. An owner is a caller's
    scope, "<identity key>|<session>" (runtime_contract.Caller.scope); the session part is the last, as an
    identity key may hold "|" itself (a JWT subject such as "auth0|1234")."""
    return None if owner is None else owner.rpartition("|")[0] or owner


class ArtifactStore:
    """Bounded, thread-safe, least-recently-used artifact store, shared fairly between
    identities. Reads (get, view) refresh an artifact's recency. A put first keeps its own
    identity within `max_share_bytes` (evicting that identity's least recently used
    artifacts), then, while the store is over a bound, evicts the least recently used artifact
    of the identity holding the most of it (bytes, or artifacts for the count bound; the
    incoming artifact counted to its own identity): so one identity's flood evicts its own
    artifacts, never those of an identity holding less than it (issue 22 item 6)."""

    def __init__(
        self,
        max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
        max_artifacts: int = DEFAULT_MAX_ARTIFACTS,
        max_share_bytes: int | None = None,
    ) -> None:
        if max_total_bytes < 0 or max_artifacts < 1:
            raise ValueError("max_total_bytes must be >= 0 and max_artifacts >= 1")
        self.max_total_bytes = max_total_bytes
        self.max_artifacts = max_artifacts
        self.max_share_bytes = min(
            max_total_bytes, max_total_bytes if max_share_bytes is None else max_share_bytes
        )
        self._items: OrderedDict[str, Artifact] = OrderedDict()
        self._evicted: OrderedDict[str, str | None] = OrderedDict()  # handle -> its owner
        self._total = 0
        # share -> [bytes, artifacts] held
        self._shares: dict[str | None, list[int]] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ bookkeeping

    @property
    def total_bytes(self) -> int:
        return self._total

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, handle: object) -> bool:
        return isinstance(handle, str) and handle in self._items

    def fits(self, size: int) -> bool:
        """Whether an artifact of `size` bytes can be stored at all (evicting everything else
        of its identity's)."""
        return size <= self.max_share_bytes

    # ------------------------------------------------------------------ put / get

    def put(
        self,
        data: bytes,
        media_type: str,
        label: str,
        uri: str | None = None,
        owner: str | None = None,
    ) -> dict[str, Any]:
        """Store `data` and return its ArtifactRef. The media type is cleaned and the label cut
        to the ArtifactRef bounds. With `owner`, only reads by that owner find it (to anyone
        else the handle is unknown, AM-ACCESS-NO-LEAK). Raises ValueError (a caller bug, not
        bad input) when the data alone exceeds the store or the uri is over its cap: check
        `fits` first."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"artifact data must be bytes, not {type(data).__name__}")
        if not self.fits(len(data)):
            raise ValueError(
                f"artifact of {len(data)} bytes exceeds the store's {self.max_share_bytes} "
                "bytes for one identity"
            )
        with self._lock:
            artifact = new_artifact(data, media_type, label, uri, owner, self._taken)
            share = share_of(owner)
            self._evict_for(artifact.size, share)
            self._items[artifact.handle] = artifact
            self._total += artifact.size
            held = self._shares.setdefault(share, [0, 0])
            held[0] += artifact.size
            held[1] += 1
        return artifact.ref()

    def get(self, handle: object, owner: str | None = None) -> Artifact:
        """The artifact behind `handle`; VIEW_FAILED naming the handle when it is malformed,
        unknown or evicted. An artifact that has an owner other than `owner` is unknown, in
        the very words of a handle that never existed."""
        handle = check_handle(handle)
        with self._lock:
            artifact = self._items.get(handle)
            if artifact is not None and artifact.owner in (None, owner):
                self._items.move_to_end(handle)
                return artifact
            evicted = handle in self._evicted and self._evicted[handle] in (None, owner)
        if evicted:
            raise view_error(
                f"artifact {handle} was evicted to keep the store within "
                f"{self.max_total_bytes} bytes / {self.max_artifacts} artifacts; "
                "run the tool again to get a new one",
                handle,
            )
        raise view_error(f"no artifact {handle}: the handle is unknown or has expired", handle)

    # ------------------------------------------------------------------ view

    def view(
        self, handle: object, selector: object = "all", owner: str | None = None
    ) -> dict[str, Any]:
        """tool_view: the ViewResult for `selector` on `handle` (read as `owner`, see get).
        ARGS_INVALID for a malformed selector; VIEW_FAILED for a bad handle or a selector that
        addresses nothing."""
        parse_view_selector(selector)  # ARGS_INVALID naming what was wrong, before the lookup
        return render_view(self.get(handle, owner), selector)

    # ------------------------------------------------------------------ internals

    def _taken(self, handle: str) -> bool:
        return handle in self._items or handle in self._evicted

    def _evict_for(self, incoming: int, share: str | None) -> None:
        """Make room for `incoming` bytes of `share` (the class docstring's order)."""
        own = self._shares.get(share, [0, 0])
        while own[0] + incoming > self.max_share_bytes and own[1]:
            self._evict_oldest_of(share)
        while self._items:
            over_bytes = self._total + incoming > self.max_total_bytes
            if not over_bytes and len(self._items) < self.max_artifacts:
                return
            column = 0 if over_bytes else 1

            def held(s: str | None, column: int = column) -> int:
                mine = (incoming, 1)[column] if s == share else 0
                return self._shares[s][column] + mine

            self._evict_oldest_of(max(self._shares, key=held))

    def _evict_oldest_of(self, share: str | None) -> None:
        handle = next(h for h, a in self._items.items() if share_of(a.owner) == share)
        old = self._items.pop(handle)
        self._total -= old.size
        held = self._shares[share]
        held[0] -= old.size
        held[1] -= 1
        if not held[1]:
            del self._shares[share]
        self._evicted[handle] = old.owner
        if len(self._evicted) > _EVICTED_MEMORY:
            self._evicted.popitem(last=False)


def new_handle(taken: Callable[[str], bool] = lambda _: False) -> str:
    """A fresh artifact handle. Random, not sequential: a handle must not let one caller guess
    another's artifacts."""
    while True:
        handle = HANDLE_PREFIX + secrets.token_hex(_HANDLE_HEX_CHARS // 2)
        if not taken(handle):
            assert is_artifact_handle(handle)
            return handle


def new_artifact(
    data: bytes | bytearray | memoryview,
    media_type: str,
    label: str,
    uri: str | None = None,
    owner: str | None = None,
    taken: Callable[[str], bool] = lambda _: False,
) -> Artifact:
    """An Artifact with a fresh handle, its media type cleaned and its label cut to the
    ArtifactRef bounds (what every store keeps). ValueError when the uri is over its cap."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"artifact data must be bytes, not {type(data).__name__}")
    data = bytes(data)
    uri = None if uri is None else scrub(uri)
    if uri is not None and len(uri) > URI_MAX_CHARS:
        raise ValueError(f"artifact uri is {len(uri)} characters; the cap is {URI_MAX_CHARS}")
    media = clean_media_type(media_type)
    is_text = False
    if is_textual_media_type(media):
        try:
            data.decode("utf-8")
            is_text = True
        except UnicodeDecodeError:
            pass
    return Artifact(
        new_handle(taken), data, media, clip(label, LABEL_MAX_CHARS), uri, is_text, owner
    )


def check_handle(handle: object) -> str:
    """`handle` when it is a well-formed artifact handle; VIEW_FAILED naming it otherwise."""
    if not is_artifact_handle(handle):
        shown = handle if isinstance(handle, str) else repr(handle)
        raise view_error(
            f"{shown[:80]!r} is not an artifact handle; expected {ARTIFACT_HANDLE.syntax}",
            shown,
        )
    assert isinstance(handle, str)
    return handle


def render_view(artifact: Artifact, selector: object) -> dict[str, Any]:
    """The ViewResult (module docstring) for `selector` on `artifact`: ARGS_INVALID for a
    malformed selector; VIEW_FAILED for one that addresses nothing."""
    parsed = parse_view_selector(selector)  # ARGS_INVALID naming what was wrong
    assert isinstance(selector, str)
    if artifact.size == 0 and artifact.uri is not None:
        raise view_error(
            f"artifact {artifact.handle} holds no bytes: it refers to {artifact.uri!r}, "
            "which the gateway does not fetch",
            artifact.handle,
        )
    content, truncated = _select(artifact, parsed, selector)
    return {
        "handle": artifact.handle,
        "selector": selector,
        "content": content,
        "total_size": artifact.size,
        "truncated": truncated,
        # Binary artifacts come back base64 for "all" and "bytes:" (see _select).
        "encoding": "text" if artifact.is_text or parsed.kind in ("lines", "json") else "base64",
    }


def view_cut_note(result: dict[str, Any]) -> str:
    """What a cut tool_view answer tells its reader (AM-TRANSPARENT-VIEW): how much it shows and
    the selector that reads on."""
    shown = len(result["content"])
    if result["encoding"] == "base64":
        read = shown // 4 * 3  # whole base64 quanta: 3 bytes per 4 characters
        more = f"bytes:{read}-{min(read + read, result['total_size']) - 1}"
        return f"[cut: {read} of {result['total_size']} bytes shown; read on with {more!r}]"
    return (
        f"[cut: the first {shown} characters of the selection are shown "
        f"({result['total_size']} bytes in the artifact); read on with a narrower selector, "
        '"lines:A-B" or "bytes:A-B"]'
    )


# ---------------------------------------------------------------------- selection


def _select(artifact: Artifact, sel: ViewSelector, selector: str) -> tuple[str, bool]:
    if sel.kind == "all":
        return _cap_data(artifact, artifact.data)
    if sel.kind == "bytes":
        return _cap_data(artifact, _byte_range(artifact, sel, selector))
    if sel.kind == "lines":
        return _cap_text(_line_range(artifact, sel, selector))
    assert sel.kind == "json" and sel.pointer is not None
    return _cap_text(_json_value(artifact, sel.pointer, selector))


def _cap_text(text: str) -> tuple[str, bool]:
    if len(text) <= VIEW_MAX_CHARS:
        return text, False
    return text[:VIEW_MAX_CHARS], True


def _cap_data(artifact: Artifact, data: bytes) -> tuple[str, bool]:
    if artifact.is_text:
        return _cap_text(data.decode("utf-8", errors="replace"))
    # Encode only what fits: whole 3-byte groups give whole 4-character base64 quanta.
    max_raw = (VIEW_MAX_CHARS // 4) * 3
    head = data[:max_raw]
    return base64.b64encode(head).decode("ascii"), len(data) > len(head)


def _byte_range(artifact: Artifact, sel: ViewSelector, selector: str) -> bytes:
    assert sel.start is not None
    size = artifact.size
    if sel.start >= size:
        exists = f"bytes 0-{size - 1}" if size else "no bytes"
        raise view_error(
            f"{selector}: artifact {artifact.handle} has {size} bytes ({exists})",
            artifact.handle,
            {"size_bytes": size},
        )
    end = size - 1 if sel.end is None else min(sel.end, size - 1)
    return artifact.data[sel.start : end + 1]


def _lines(text: str) -> list[str]:
    # Only "\n" ends a line (as in editors and sed); a final newline ends the last line
    # rather than starting an empty one.
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _line_range(artifact: Artifact, sel: ViewSelector, selector: str) -> str:
    if not artifact.is_text:
        raise view_error(
            f"{selector}: artifact {artifact.handle} is binary ({artifact.media_type}, "
            f"{artifact.size} bytes); view it with 'all' or 'bytes:A-B' (base64)",
            artifact.handle,
        )
    assert sel.start is not None
    lines = _lines(artifact.text())
    if sel.start > len(lines):
        raise view_error(
            f"{selector}: artifact {artifact.handle} has {len(lines)} lines",
            artifact.handle,
            {"lines": len(lines)},
        )
    end = len(lines) if sel.end is None else min(sel.end, len(lines))
    return "\n".join(lines[sel.start - 1 : end])


def _json_value(artifact: Artifact, pointer: str, selector: str) -> str:
    if not artifact.is_text:
        raise view_error(
            f"{selector}: artifact {artifact.handle} is binary ({artifact.media_type}), not JSON",
            artifact.handle,
        )
    try:
        doc = json.loads(artifact.text())
    except (ValueError, RecursionError) as exc:
        raise view_error(
            f"{selector}: artifact {artifact.handle} ({artifact.media_type}) is not JSON: "
            f"{clip(str(exc), _DECODE_ERROR_MAX)}",
            artifact.handle,
        ) from None
    value = resolve_pointer(doc, pointer, artifact.handle, selector)
    try:
        return scrub(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    except (ValueError, RecursionError) as exc:  # pragma: no cover - loads gave it
        raise view_error(f"{selector}: cannot render the value: {exc}", artifact.handle) from None


def _unescape_token(token: str) -> str:
    # RFC 6901 §4: "~1" first, then "~0", so "~01" becomes "~1" and not "/".
    return token.replace("~1", "/").replace("~0", "~")


def _describe(value: Any) -> str:
    if isinstance(value, dict):
        keys = ", ".join(repr(k) for k in list(value)[:20])
        more = f" and {len(value) - 20} more" if len(value) > 20 else ""
        return f"an object with {len(value)} keys ({keys}{more})" if value else "an empty object"
    if isinstance(value, list):
        return f"an array of {len(value)} items"
    return _JSON_KINDS.get(type(value), "a value")


_JSON_KINDS: Final[dict[type, str]] = {
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "a boolean",
    type(None): "null",
}


def resolve_pointer(doc: Any, pointer: str, handle: str, selector: str) -> Any:
    """RFC 6901: the value `pointer` addresses in `doc`; VIEW_FAILED naming the first token
    that addresses nothing and what exists at that point."""
    if pointer == "":
        return doc
    value = doc
    at = ""
    for raw in pointer.split("/")[1:]:
        token = _unescape_token(raw)
        if isinstance(value, dict):
            if token not in value:
                raise view_error(
                    f"{selector}: {at or '(root)'} has no key {token!r}; it is {_describe(value)}",
                    handle,
                    {"pointer": at},
                )
            value = value[token]
        elif isinstance(value, list):
            # §4: an array index is "0" or digits without a leading zero; "-" names the
            # element after the last, which does not exist.
            valid = token == "0" or (token.isascii() and token.isdigit() and token[0] != "0")
            if not valid or int(token) >= len(value):
                raise view_error(
                    f"{selector}: {at or '(root)'} is an array of {len(value)} items; "
                    f"{token!r} is not an index in it",
                    handle,
                    {"pointer": at, "length": len(value)},
                )
            value = value[int(token)]
        else:
            raise view_error(
                f"{selector}: {at or '(root)'} is {_describe(value)}; it has no member {token!r}",
                handle,
                {"pointer": at},
            )
        at += "/" + raw
    return value


__all__ = [
    "DEFAULT_MAX_ARTIFACTS",
    "DEFAULT_MAX_TOTAL_BYTES",
    "Artifact",
    "ArtifactStore",
    "check_handle",
    "clean_media_type",
    "is_textual_media_type",
    "new_artifact",
    "new_handle",
    "render_view",
    "resolve_pointer",
    "view_cut_note",
    "view_error",
]
