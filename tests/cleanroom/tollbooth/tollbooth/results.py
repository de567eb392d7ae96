"""Tool-result handling: envelopes, facts, artifacts, provenance, firewall.

Implements seed 002 "mcp_result_to_envelope(result_dict, tool_name)" and the
gateway's context firewall (seed 000 §4.2: tool_execute "pipes the response
through the context firewall, and returns a ResultEnvelope").
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SUMMARY_MAX_CHARS = 500  # seed 002: "envelope.summary contains truncated text (max 500 chars)"
FACT_MAX_CHARS = 200  # firewall bound per fact (implementation choice)
ELLIPSIS = "\u2026"

# handle -> (raw_bytes, media_type, label)   (seed 002)
Binaries = dict[str, tuple[bytes, str, str]]


@dataclass(frozen=True, slots=True)
class ArtifactRef:
    """Reference to an out-of-context artifact (seed 002 ``ArtifactRef``)."""

    handle: str
    media_type: str
    size_bytes: int
    label: str
    uri: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "handle": self.handle,
            "media_type": self.media_type,
            "size_bytes": self.size_bytes,
            "label": self.label,
        }
        if self.uri is not None:
            d["uri"] = self.uri
        return d


@dataclass(slots=True)
class ResultEnvelope:
    """Seed 002 ``ResultEnvelope``: status, summary, facts, artifacts, provenance."""

    status: str  # "ok" | "error"
    summary: str = ""
    facts: list[str] = field(default_factory=list)
    artifacts: list[ArtifactRef] = field(default_factory=list)
    provenance: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "summary": self.summary,
            "facts": list(self.facts),
            "artifacts": [a.to_dict() for a in self.artifacts],
            "provenance": self.provenance,
        }


def summarize(text: str, limit: int = SUMMARY_MAX_CHARS) -> str:
    """Text verbatim if ``len <= limit``, else its first ``limit-1`` characters
    plus ``…`` (so the summary never exceeds *limit* characters)."""
    if len(text) <= limit:
        return text
    return text[: limit - 1] + ELLIPSIS


def format_fact(key: str, value: Any) -> str:
    """``"key: value"``; strings verbatim, everything else as compact JSON
    (``{"count": 42, "status": "done"}`` -> ``"count: 42"``, ``"status: done"``)."""
    if isinstance(value, str):
        rendered = value
    else:
        try:
            rendered = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError):
            rendered = str(value)
    return f"{key}: {rendered}"


def structured_handle(tool_name: str) -> str:
    """Seed 002: ``mcp:{tool_name}:structured_content``."""
    return f"mcp:{tool_name}:structured_content"


def part_handle(tool_name: str, kind: str, index: int) -> str:
    """Handle for content part *index* of type *kind*: ``mcp:{tool}:{kind}:{index}``."""
    return f"mcp:{tool_name}:{kind}:{index}"


def full_text_handle(tool_name: str) -> str:
    """Handle the firewall uses for the untruncated text: ``mcp:{tool}:full_text``."""
    return f"mcp:{tool_name}:full_text"


def _b64(data: Any) -> bytes:
    if not isinstance(data, str):
        raise ValueError("base64 payload is not a string")
    return base64.b64decode(data, validate=True)


def mcp_result_to_envelope(result: Mapping[str, Any], tool_name: str) -> tuple[ResultEnvelope, Binaries, str]:
    """Convert an MCP ``CallToolResult`` dict (wire/camelCase keys) into
    ``(envelope, binaries, full_text)`` (seed 002).

    * ``text`` parts are joined with ``"\\n"`` into ``full_text``; the summary is
      ``full_text`` cut to 500 characters;
    * ``image`` / ``audio``: base64-decoded into a binary artifact;
    * ``resource``: text goes into ``full_text``; the raw bytes (UTF-8 text
      or decoded blob) become an artifact;
    * ``resource_link``: an :class:`ArtifactRef` carrying the URI; the URI
      string (UTF-8 bytes, ``text/uri-list``) goes into *binaries*;
    * a top-level ``structuredContent`` dict becomes the JSON artifact
      ``mcp:{tool_name}:structured_content`` and one fact per top-level key;
    * per-part ``annotations`` go to ``provenance["content_annotations"]`` as
      ``{"part_index": i, **annotations}``;
    * ``status`` is ``"error"`` when ``isError`` is true, else ``"ok"``.

    Never raises on malformed parts: they are listed in
    ``provenance["unhandled_parts"]``.
    """
    texts: list[str] = []
    binaries: Binaries = {}
    artifacts: list[ArtifactRef] = []
    annotations: list[dict[str, Any]] = []
    unhandled: list[dict[str, Any]] = []

    def add(handle: str, raw: bytes, media_type: str, label: str, uri: str | None = None) -> None:
        binaries[handle] = (raw, media_type, label)
        artifacts.append(ArtifactRef(handle, media_type, len(raw), label, uri))

    content = result.get("content")
    parts = content if isinstance(content, list) else []
    for i, part in enumerate(parts):
        if not isinstance(part, Mapping):
            unhandled.append({"part_index": i, "reason": "not an object"})
            continue
        ann = part.get("annotations")
        if isinstance(ann, Mapping) and ann:
            annotations.append({"part_index": i, **ann})
        kind = part.get("type")
        try:
            if kind == "text":
                text = part.get("text")
                if not isinstance(text, str):
                    raise ValueError("text part without a string 'text'")
                texts.append(text)
            elif kind in ("image", "audio"):
                raw = _b64(part.get("data"))
                media = part.get("mimeType") or ("image/png" if kind == "image" else "audio/wav")
                add(part_handle(tool_name, kind, i), raw, str(media), f"{kind} part {i}")
            elif kind == "resource":
                res = part.get("resource")
                if not isinstance(res, Mapping):
                    raise ValueError("resource part without a 'resource' object")
                uri = res.get("uri") if isinstance(res.get("uri"), str) else None
                if isinstance(res.get("text"), str):
                    texts.append(res["text"])
                    raw = res["text"].encode("utf-8")
                    media = res.get("mimeType") or "text/plain"
                elif "blob" in res:
                    raw = _b64(res.get("blob"))
                    media = res.get("mimeType") or "application/octet-stream"
                else:
                    raise ValueError("resource without 'text' or 'blob'")
                add(part_handle(tool_name, "resource", i), raw, str(media), uri or f"resource part {i}", uri)
            elif kind == "resource_link":
                uri = part.get("uri")
                if not isinstance(uri, str):
                    raise ValueError("resource_link without a string 'uri'")
                label = part.get("name") if isinstance(part.get("name"), str) else uri
                add(part_handle(tool_name, "resource_link", i), uri.encode("utf-8"), "text/uri-list", label, uri)
            else:
                unhandled.append({"part_index": i, "type": kind, "reason": "unsupported content type"})
        except (ValueError, binascii.Error) as exc:
            unhandled.append({"part_index": i, "type": kind, "reason": str(exc)})

    facts: list[str] = []
    structured = result.get("structuredContent")
    if isinstance(structured, Mapping):
        raw = json.dumps(structured, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        add(structured_handle(tool_name), raw, "application/json", "structured_content")
        facts = [format_fact(str(k), v) for k, v in structured.items()]

    full_text = "\n".join(texts)
    provenance: dict[str, Any] = {"tool": tool_name, "content_annotations": annotations}
    if unhandled:
        provenance["unhandled_parts"] = unhandled
    envelope = ResultEnvelope(
        status="error" if result.get("isError") is True else "ok",
        summary=summarize(full_text),
        facts=facts,
        artifacts=artifacts,
        provenance=provenance,
    )
    return envelope, binaries, full_text


def firewall(result: Mapping[str, Any], tool_name: str) -> tuple[ResultEnvelope, Binaries]:
    """The gateway's context firewall (seed 000 §4.2, seed 002).

    Runs :func:`mcp_result_to_envelope`; when the text was cut for the
    summary, the complete text is kept out of context as a ``text/plain``
    artifact ``mcp:{tool}:full_text``; each fact is capped at 200 characters
    (the full value stays reachable through the structured_content artifact).
    Raw upstream content never passes through.
    """
    envelope, binaries, full_text = mcp_result_to_envelope(result, tool_name)
    if len(full_text) > SUMMARY_MAX_CHARS:
        handle = full_text_handle(tool_name)
        raw = full_text.encode("utf-8")
        binaries[handle] = (raw, "text/plain", "full_text")
        envelope.artifacts.append(ArtifactRef(handle, "text/plain", len(raw), "full_text"))
    envelope.facts = [summarize(f, FACT_MAX_CHARS) for f in envelope.facts]
    return envelope, binaries
