"""Images and audio the model sees itself (AM-INLINE-MEDIA): besides the binary artifact seed
002 keeps for every image or audio part, a tool_execute result carries the part as MCP image
or audio content while the result's inline parts stay within gateway.inline_media_max_bytes
(decoded bytes; 0 turns inlining off), and tool_view "all" of an image or audio artifact
within that cap answers with the content block instead of base64 text.

Parts are taken in order while they fit, so a result with one huge image and a small one
still shows the small one; a part over the cap is reached through its artifact handle, as
before. Data is re-encoded from the decoded bytes: what the client gets is strict base64
whatever line breaks or missing padding the upstream sent."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any, Final

from gatespec.artifacts import Artifact
from gatespec.firewall import decode_base64

INLINE_KINDS: Final = ("image", "audio")


def media_block(kind: str, data: bytes, mime_type: str) -> dict[str, Any]:
    """An MCP image or audio content block (wire form)."""
    return {"type": kind, "data": base64.b64encode(data).decode("ascii"), "mimeType": mime_type}


def result_media(result: object, max_bytes: int) -> tuple[dict[str, Any], ...]:
    """The image and audio parts of an upstream result (wire form) to show inline: those with
    valid base64 and a media type of their kind, in order, while their decoded bytes together
    stay within `max_bytes`. Never raises (the firewall records what is malformed)."""
    if max_bytes <= 0 or not isinstance(result, Mapping):
        return ()
    content = result.get("content")
    if not isinstance(content, list):
        return ()
    shown: list[dict[str, Any]] = []
    left = max_bytes
    for part in content:
        if not isinstance(part, Mapping) or part.get("type") not in INLINE_KINDS:
            continue
        kind = str(part["type"])
        mime = part.get("mimeType")
        if not isinstance(mime, str) or not mime.startswith(f"{kind}/"):
            continue
        try:
            data = decode_base64(part.get("data"))
        except ValueError:
            continue
        if len(data) <= left:
            shown.append(media_block(kind, data, mime))
            left -= len(data)
    return tuple(shown)


def artifact_media(artifact: Artifact, max_bytes: int) -> dict[str, Any] | None:
    """`artifact` as an image or audio content block when it is one within `max_bytes`."""
    kind = artifact.media_type.split("/", 1)[0]
    if artifact.is_text or kind not in INLINE_KINDS or not 0 < artifact.size <= max_bytes:
        return None
    return media_block(kind, artifact.data, artifact.media_type)


__all__ = [
    "INLINE_KINDS",
    "artifact_media",
    "media_block",
    "result_media",
]
