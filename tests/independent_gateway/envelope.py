"""The context firewall (seed 002 mcp_result_to_envelope), its artifact store, and tool_view."""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from .errors import GatewayError

SUMMARY_MAX = 500
FACT_MAX = 200
FACTS_MAX = 32
VIEW_TEXT_MAX = 4000
VIEW_BYTES_MAX = 3000
STORE_MAX_ITEMS = 512
STORE_MAX_BYTES = 64 * 1024 * 1024
_SELECTOR = re.compile(r"(?P<kind>chars|lines|bytes):(?P<start>\d+)-(?P<end>\d*)")


@dataclass
class Artifact:
    handle: str
    label: str
    media_type: str
    data: bytes
    is_text: bool
    uri: str | None = None

    def ref(self) -> dict[str, Any]:
        ref = {
            "handle": self.handle,
            "label": self.label,
            "media_type": self.media_type,
            "size_bytes": len(self.data),
        }
        if self.uri:
            ref["uri"] = self.uri
        return ref


class ArtifactStore:
    """In-memory, oldest evicted first once either bound is passed."""

    def __init__(self) -> None:
        self._items: OrderedDict[str, Artifact] = OrderedDict()
        self._calls = 0

    def next_call(self) -> int:
        self._calls += 1
        return self._calls

    def put(self, artifact: Artifact) -> None:
        self._items[artifact.handle] = artifact
        while len(self._items) > STORE_MAX_ITEMS or (
            len(self._items) > 1
            and sum(len(a.data) for a in self._items.values()) > STORE_MAX_BYTES
        ):
            self._items.popitem(last=False)

    def get(self, handle: Any) -> Artifact:
        if not isinstance(handle, str) or not handle:
            raise GatewayError(
                "ARGS_INVALID", "handle must be a non-empty string", str(handle or "")
            )
        if handle not in self._items:
            raise GatewayError(
                "VIEW_FAILED", f"no artifact {handle!r} (unknown or evicted)", handle
            )
        return self._items[handle]


def _decode_b64(value: Any) -> bytes:
    try:
        return base64.b64decode(str(value), validate=True)
    except (binascii.Error, ValueError):
        return str(value).encode()  # keep what came, rather than lose the part


def _fact(key: str, value: Any) -> str:
    shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = f"{key}: {shown}"
    return text if len(text) <= FACT_MAX else text[: FACT_MAX - 1] + "\u2026"


def to_envelope(
    result: dict[str, Any], tool_id: str, server: str, tool: str, store: ArtifactStore
) -> dict[str, Any]:
    """Summary <= 500 chars; binaries, structuredContent and long text become artifacts."""
    call = store.next_call()
    made: list[Artifact] = []

    def keep(
        label: str, media_type: str, data: bytes, is_text: bool, uri: str | None = None
    ) -> None:
        artifact = Artifact(f"mcp:{tool}:{label}.{call}", label, media_type, data, is_text, uri)
        store.put(artifact)
        made.append(artifact)

    texts: list[str] = []
    notes: list[dict[str, Any]] = []
    for index, part in enumerate(result.get("content") or []):
        kind = part.get("type")
        if isinstance(part.get("annotations"), dict) and part["annotations"]:
            notes.append({"part_index": index, **part["annotations"]})
        if kind == "text":
            texts.append(str(part.get("text", "")))
        elif kind in ("image", "audio"):
            media = part.get("mimeType") or "application/octet-stream"
            keep(f"{kind}_{index}", media, _decode_b64(part.get("data", "")), False)
        elif kind == "resource":
            res = part.get("resource") or {}
            media = res.get("mimeType") or (
                "text/plain" if "text" in res else "application/octet-stream"
            )
            if "text" in res:
                texts.append(str(res["text"]))
                keep(f"resource_{index}", media, str(res["text"]).encode(), True, res.get("uri"))
            else:
                keep(
                    f"resource_{index}",
                    media,
                    _decode_b64(res.get("blob", "")),
                    False,
                    res.get("uri"),
                )
        elif kind == "resource_link":
            uri = str(part.get("uri", ""))
            keep(
                f"resource_link_{index}",
                part.get("mimeType") or "text/uri-list",
                uri.encode(),
                True,
                uri,
            )
        else:
            keep(f"part_{index}", "application/json", json.dumps(part).encode(), True)

    facts: list[str] = []
    structured = result.get("structuredContent")
    if structured is not None:
        keep(
            "structured_content",
            "application/json",
            json.dumps(structured, ensure_ascii=False).encode(),
            True,
        )
        if isinstance(structured, dict):
            facts = [_fact(str(k), v) for k, v in list(structured.items())[:FACTS_MAX]]

    full_text = "\n".join(texts)
    if len(full_text) > SUMMARY_MAX:
        keep("full_text", "text/plain", full_text.encode(), True)
        summary = full_text[: SUMMARY_MAX - 1] + "\u2026"
    elif full_text:
        summary = full_text
    else:
        listed = "; ".join(f"{a.label} ({a.media_type}, {len(a.data)} bytes)" for a in made)
        summary = f"no text content; artifacts: {listed}" if made else "no content"
        summary = summary if len(summary) <= SUMMARY_MAX else summary[: SUMMARY_MAX - 1] + "\u2026"

    provenance: dict[str, Any] = {"tool_id": tool_id, "server": server, "upstream_tool": tool}
    if notes:
        provenance["content_annotations"] = notes
    return {
        "status": "error" if result.get("isError") else "ok",
        "summary": summary,
        "facts": facts,
        "artifacts": [a.ref() for a in made],
        "provenance": provenance,
    }


def view(artifact: Artifact, selector: Any) -> dict[str, Any]:
    """Selectors: '' (head), chars:A-B, lines:A-B (1-based, inclusive), bytes:A-B, json:/ptr."""
    if selector is None:
        selector = ""
    if not isinstance(selector, str):
        raise GatewayError("ARGS_INVALID", "selector must be a string", artifact.handle)
    out: dict[str, Any] = {**artifact.ref(), "selector": selector, "encoding": "utf-8"}
    text = artifact.data.decode("utf-8", errors="replace") if artifact.is_text else None
    match = _SELECTOR.fullmatch(selector)
    if selector.startswith("json:"):
        out["content"] = json.dumps(_pointer(artifact, selector[5:]), ensure_ascii=False)
    elif match and match["kind"] == "bytes":
        start = int(match["start"])
        end = min(int(match["end"] or len(artifact.data)), start + VIEW_BYTES_MAX)
        out.update(encoding="base64", content=base64.b64encode(artifact.data[start:end]).decode())
    elif text is None:
        if selector:
            raise GatewayError(
                "VIEW_FAILED", "binary artifact: use a bytes:A-B selector", artifact.handle
            )
        out.update(content="", note="binary artifact; view it with selector 'bytes:0-3000'")
        return out
    elif match and match["kind"] == "chars":
        out["content"] = text[int(match["start"]) : int(match["end"]) if match["end"] else None]
    elif match and match["kind"] == "lines":
        lines = text.splitlines()
        start = max(int(match["start"]), 1)
        out["content"] = "\n".join(lines[start - 1 : int(match["end"]) if match["end"] else None])
    elif selector in ("", "head"):
        out["content"] = text
    else:
        raise GatewayError(
            "ARGS_INVALID",
            f"unknown selector {selector!r}; use '', chars:A-B, lines:A-B, bytes:A-B or json:/pointer",
            artifact.handle,
        )
    out["truncated"] = len(out["content"]) > VIEW_TEXT_MAX
    out["content"] = out["content"][:VIEW_TEXT_MAX]
    return out


def _pointer(artifact: Artifact, pointer: str) -> Any:
    """RFC 6901 JSON Pointer into a JSON artifact; a malformed pointer is checked first."""
    if (pointer and not pointer.startswith("/")) or re.search(r"~(?![01])", pointer):
        raise GatewayError("ARGS_INVALID", f"malformed JSON pointer {pointer!r}", artifact.handle)
    try:
        node = json.loads(artifact.data)
    except ValueError:
        raise GatewayError("VIEW_FAILED", "artifact is not JSON", artifact.handle) from None
    for raw in pointer.split("/")[1:] if pointer else []:
        key = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            raise GatewayError(
                "VIEW_FAILED", f"pointer {pointer!r} resolves to nothing", artifact.handle
            )
    return node
