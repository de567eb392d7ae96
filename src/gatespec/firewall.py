"""The result firewall: an upstream CallToolResult becomes a bounded ResultEnvelope (seed 002,
mcp_result_to_envelope). The agent sees a short summary, a few facts and artifact references;
everything large or binary goes to the ArtifactStore, readable through tool_view.

Rules (seed 002, with the choices it leaves open marked *):
- text parts are joined (* with "\\n") into the full text; the summary is its first
  budgets.SUMMARY_MAX_CHARS characters, cut (* at a word boundary in the last fifth when there
  is one) and ended with budgets.ELLIPSIS. Text over TEXT_ARTIFACT_THRESHOLD_CHARS is kept
  whole as an artifact, application/json when it parses as a JSON object or array, else
  text/plain. (* With no text at all, the summary lists the artifacts instead.)
- image / audio: base64-decoded into a binary artifact with the part's mimeType. Data that
  is not base64 is recorded under provenance["issues"] and (*) kept as sent, as text/plain.
- resource (embedded): text goes into the full text and into an artifact with the resource
  uri; a blob is decoded into a binary artifact with the uri.
- resource_link: an ArtifactRef with the uri and no bytes; the gateway never fetches it.
- structuredContent: a JSON artifact labelled budgets.STRUCTURED_CONTENT_LABEL (* indented,
  so "lines:" selectors are useful); each top-level key becomes a fact "key: value" (* string
  values as they are, others as compact JSON, whitespace collapsed), at most MAX_FACTS facts of
  at most FACT_MAX_CHARS characters each.
- per-part annotations (* the MCP fields audience, priority, lastModified) go to
  provenance["content_annotations"] with their part_index.
- status is "error" exactly when isError is true.
- anything unexpected (an unknown content type, a malformed part, a non-object
  structuredContent, a part too large for the store) is kept as a JSON artifact where
  possible and always recorded in provenance["issues"]: never dropped silently, never raised.
Provenance always carries tool_id, server (the config key), upstream_tool and text_chars.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any, Final

from gatespec.artifacts import URI_MAX_CHARS, ArtifactStore
from gatespec_surface.budgets import (
    FACT_MAX_CHARS,
    MAX_FACTS,
    STRUCTURED_CONTENT_LABEL,
    SUMMARY_MAX_CHARS,
    TEXT_ARTIFACT_THRESHOLD_CHARS,
)
from gatespec_surface.text import clip, scrub

TEXT_MEDIA_TYPE: Final = "text/plain"
JSON_MEDIA_TYPE: Final = "application/json"
OCTET_STREAM: Final = "application/octet-stream"
URI_LIST_MEDIA_TYPE: Final = "text/uri-list"
FULL_TEXT_LABEL: Final = "full text"
META_LABEL: Final = "_meta"
ANNOTATION_FIELDS: Final = ("audience", "priority", "lastModified")
TEXT_JOINER: Final = "\n"
# Provenance is shown to the agent too, so what is copied there from upstream is kept short.
_PROVENANCE_TEXT_MAX: Final = 120
_AUDIENCE_MAX: Final = 8


def _short(value: object) -> str:
    text = value if isinstance(value, str) else repr(value)
    return clip(text, _PROVENANCE_TEXT_MAX, at_word=True)


def _compact_json(value: Any) -> str:
    return scrub(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=repr))


def _json_bytes(value: Any, indent: int | None = None) -> bytes:
    text = json.dumps(value, ensure_ascii=False, indent=indent, default=repr)
    return scrub(text).encode("utf-8")


def _fact(key: str, value: Any) -> str:
    shown = value if isinstance(value, str) else _compact_json(value)
    return clip(" ".join(f"{key}: {shown}".split()), FACT_MAX_CHARS, at_word=True)


def decode_base64(data: object) -> bytes:
    """Lenient base64: line breaks and missing padding are tolerated (real servers send
    both); anything else raises ValueError."""
    if not isinstance(data, str):
        raise ValueError(f"data is {type(data).__name__}, not a base64 string")
    compact = "".join(data.split())
    compact += "=" * (-len(compact) % 4)
    try:
        return base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"data is not valid base64 ({exc})") from None


def _is_json_container(text: str) -> bool:
    stripped = text.lstrip()
    if not stripped or stripped[0] not in "[{":
        return False
    try:
        return isinstance(json.loads(text), (dict, list))
    except (ValueError, RecursionError):
        return False


class _Envelope:
    """Collects one envelope's pieces while the result's parts are walked."""

    def __init__(self, store: ArtifactStore, owner: str | None) -> None:
        self.store = store
        self.owner = owner
        self.texts: list[str] = []
        self.artifacts: list[dict[str, Any]] = []
        self.facts: list[str] = []
        self.annotations: list[dict[str, Any]] = []
        self.issues: list[dict[str, Any]] = []

    def issue(self, problem: str, part_index: int | None = None, **extra: Any) -> None:
        entry: dict[str, Any] = {} if part_index is None else {"part_index": part_index}
        entry.update(extra)
        entry["problem"] = problem
        self.issues.append(entry)

    def put(
        self,
        data: bytes,
        media_type: str,
        label: str,
        uri: str | None = None,
        part_index: int | None = None,
    ) -> dict[str, Any] | None:
        if not self.store.fits(len(data)):
            self.issue(
                f"{label}: {len(data)} bytes exceed the artifact store's "
                f"{self.store.max_total_bytes} bytes; not kept",
                part_index,
            )
            return None
        if uri is not None and len(uri) > URI_MAX_CHARS:
            self.issue(
                f"{label}: uri of {len(uri)} characters exceeds {URI_MAX_CHARS}; omitted",
                part_index,
                uri_prefix=_short(uri),
            )
            uri = None
        ref = self.store.put(data, media_type, label, uri, owner=self.owner)
        self.artifacts.append(ref)
        return ref

    def keep_raw(self, index: int | None, part: object, kind: str, problem: str) -> None:
        """Something the firewall cannot interpret (a part, or with index None the content or
        the whole result): kept as JSON and recorded."""
        self.issue(problem, index, type=kind)
        try:
            raw = _json_bytes(part)
        except (ValueError, RecursionError) as exc:
            self.issue(f"{kind} could not be serialised ({type(exc).__name__}); not kept", index)
            return
        where = kind if index is None else f"{kind} part {index}"
        self.put(raw, JSON_MEDIA_TYPE, f"{where} (kept as sent)", part_index=index)


def _annotations(index: int, part: Mapping[str, Any]) -> dict[str, Any] | None:
    raw = part.get("annotations")
    if not isinstance(raw, Mapping):
        return None
    kept: dict[str, Any] = {}
    audience = raw.get("audience")
    if isinstance(audience, list):
        kept["audience"] = [_short(a) for a in audience if isinstance(a, str)][:_AUDIENCE_MAX]
    priority = raw.get("priority")
    if isinstance(priority, (int, float)) and not isinstance(priority, bool):
        kept["priority"] = priority
    modified = raw.get("lastModified")
    if isinstance(modified, str):
        kept["lastModified"] = _short(modified)
    return {"part_index": index, **kept} if kept else None


def _binary_part(env: _Envelope, index: int, part: Mapping[str, Any], kind: str) -> None:
    mime = part.get("mimeType")
    media = mime if isinstance(mime, str) and mime else OCTET_STREAM
    label = f"{kind} part {index}"
    try:
        data = decode_base64(part.get("data"))
    except ValueError as exc:
        env.issue(str(exc), index, type=kind)
        raw = part.get("data")
        if isinstance(raw, str):  # kept as sent, so nothing the server said is lost
            kept = scrub(raw).encode("utf-8")
            env.put(kept, TEXT_MEDIA_TYPE, f"{label} (invalid base64)", None, index)
        return
    env.put(data, media, label, part_index=index)


def _resource_part(env: _Envelope, index: int, part: Mapping[str, Any]) -> None:
    resource = part.get("resource")
    if not isinstance(resource, Mapping):
        env.keep_raw(index, part, "resource", "resource part has no resource object")
        return
    uri = resource.get("uri")
    uri = uri if isinstance(uri, str) else None
    mime = resource.get("mimeType")
    label = f"resource part {index}" + (f": {uri}" if uri else "")
    text, blob = resource.get("text"), resource.get("blob")
    if isinstance(text, str):
        text = scrub(text)
        env.texts.append(text)
        media = mime if isinstance(mime, str) and mime else TEXT_MEDIA_TYPE
        env.put(text.encode("utf-8"), media, label, uri, index)
    elif isinstance(blob, str):
        try:
            data = decode_base64(blob)
        except ValueError as exc:
            env.issue(str(exc), index, type="resource")
            raw = scrub(blob).encode("utf-8")
            env.put(raw, TEXT_MEDIA_TYPE, f"{label} (invalid base64)", uri, index)
            return
        media = mime if isinstance(mime, str) and mime else OCTET_STREAM
        env.put(data, media, label, uri, index)
    else:
        env.keep_raw(index, part, "resource", "resource has neither text nor blob")


def _resource_link_part(env: _Envelope, index: int, part: Mapping[str, Any]) -> None:
    uri = part.get("uri")
    if not isinstance(uri, str) or not uri:
        env.keep_raw(index, part, "resource_link", "resource_link has no uri")
        return
    name = next((part[k] for k in ("title", "name") if isinstance(part.get(k), str)), "")
    label = f"resource link part {index}: {name or uri}"
    if len(uri) > URI_MAX_CHARS:
        # Too long for ArtifactRef.uri: kept as the artifact's bytes instead of dropped.
        env.issue(f"uri of {len(uri)} characters stored as the artifact's content", index)
        env.put(scrub(uri).encode("utf-8"), URI_LIST_MEDIA_TYPE, label, None, index)
        return
    mime = part.get("mimeType")
    media = mime if isinstance(mime, str) and mime else OCTET_STREAM
    env.put(b"", media, label, uri, index)


def _content(env: _Envelope, content: object) -> None:
    if not isinstance(content, list):
        if content is not None:
            env.keep_raw(None, content, "content", "content is not an array")
        return
    for index, part in enumerate(content):
        if not isinstance(part, Mapping):
            env.keep_raw(index, part, "unknown", f"part is {type(part).__name__}, not an object")
            continue
        note = _annotations(index, part)
        if note is not None:
            env.annotations.append(note)
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            env.texts.append(scrub(part["text"]))
        elif kind in ("image", "audio"):
            _binary_part(env, index, part, str(kind))
        elif kind == "resource":
            _resource_part(env, index, part)
        elif kind == "resource_link":
            _resource_link_part(env, index, part)
        else:
            shown = _short(kind) if kind is not None else "missing"
            problem = (
                "text part has no text string"
                if kind == "text"
                else f"unknown content type {shown}; kept as a JSON artifact"
            )
            env.keep_raw(index, part, shown, problem)


def _structured(env: _Envelope, structured: object) -> None:
    if structured is None:
        return
    try:
        data = _json_bytes(structured, indent=2)
    except (ValueError, RecursionError) as exc:
        env.issue(f"structuredContent could not be serialised ({type(exc).__name__}); not kept")
        return
    env.put(data, JSON_MEDIA_TYPE, STRUCTURED_CONTENT_LABEL)
    if not isinstance(structured, Mapping):
        env.issue(f"structuredContent is {type(structured).__name__}, not an object; no facts")
        return
    items = list(structured.items())
    env.facts = [_fact(str(k), v) for k, v in items[:MAX_FACTS]]
    if len(items) > MAX_FACTS:
        env.issue(f"structuredContent has {len(items)} keys; facts hold the first {MAX_FACTS}")


def text_repeats_structured(result: object) -> bool:
    """The result's text parts, joined, are its structuredContent again as JSON (what SDK
    servers send for clients that read only text). Never raises."""
    if not isinstance(result, Mapping):
        return False
    structured, content = result.get("structuredContent"), result.get("content")
    if not isinstance(structured, Mapping) or not structured or not isinstance(content, list):
        return False
    text = TEXT_JOINER.join(
        p["text"]
        for p in content
        if isinstance(p, Mapping) and p.get("type") == "text" and isinstance(p.get("text"), str)
    )
    if not text.lstrip().startswith("{"):
        return False
    try:
        return bool(json.loads(text) == structured)
    except (ValueError, RecursionError):
        return False


def _no_text_summary(artifacts: list[dict[str, Any]]) -> str:
    if not artifacts:
        return "(no content)"
    listed = ", ".join(
        f"{a['label']} [{a['media_type']}, {a['size_bytes']} bytes]" for a in artifacts
    )
    return clip(
        f"(no text content) {len(artifacts)} artifact(s): {listed}", SUMMARY_MAX_CHARS, at_word=True
    )


def to_envelope(
    result: object,
    *,
    tool_id: str,
    server_key: str,
    upstream_name: str,
    store: ArtifactStore,
    owner: str | None = None,
) -> dict[str, Any]:
    """The ResultEnvelope (models.yaml) for an upstream CallToolResult in wire form
    ({content: [...], structuredContent?, isError?, _meta?}); its artifacts belong to `owner`
    (the caller's scope). Never raises for bad input."""
    env = _Envelope(store, owner)
    if not isinstance(result, Mapping):
        env.keep_raw(None, result, "result", f"result is {type(result).__name__}, not an object")
        result = {"isError": True}
    _content(env, result.get("content"))
    full_text = TEXT_JOINER.join(env.texts)
    part_artifacts = env.artifacts
    env.artifacts = []
    # A summary that had to be cut always has the whole text behind it (models.yaml
    # summary_bound), even if the threshold were ever set above the summary's size.
    if len(full_text) > min(TEXT_ARTIFACT_THRESHOLD_CHARS, SUMMARY_MAX_CHARS):
        media = JSON_MEDIA_TYPE if _is_json_container(full_text) else TEXT_MEDIA_TYPE
        env.put(full_text.encode("utf-8"), media, FULL_TEXT_LABEL)
    env.artifacts.extend(part_artifacts)  # the full text first: it is what a reader wants
    _structured(env, result.get("structuredContent"))
    meta = result.get("_meta")
    if isinstance(meta, Mapping) and meta:
        # Upstream's result metadata is kept, out of the agent's way, as an artifact.
        env.put(_json_bytes(meta), JSON_MEDIA_TYPE, META_LABEL)
    provenance: dict[str, Any] = {
        "tool_id": tool_id,
        "server": server_key,
        "upstream_tool": upstream_name,
        "text_chars": len(full_text),
    }
    if env.annotations:
        provenance["content_annotations"] = env.annotations
    if env.issues:
        provenance["issues"] = env.issues
    summary = (
        clip(full_text, SUMMARY_MAX_CHARS, at_word=True)
        if full_text
        else _no_text_summary(env.artifacts)
    )
    return {
        "status": "error" if result.get("isError") is True else "ok",
        "summary": summary,
        "facts": env.facts,
        "artifacts": env.artifacts,
        "provenance": provenance,
    }


__all__ = ["decode_base64", "text_repeats_structured", "to_envelope"]
