"""The result firewall (seed 002 mcp_result_to_envelope): CallToolResult -> ResultEnvelope.

The results are shaped as @modelcontextprotocol/server-everything returns them (captured with
the inspector CLI); the image and audio are real, tiny, generated files. One test also runs the
real server when it is installed.
"""

from __future__ import annotations

import base64
import io
import json
import struct
import wave
import zlib
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatespec.artifacts import ArtifactStore
from gatespec.firewall import to_envelope
from gatespec_surface.budgets import (
    ELLIPSIS,
    FACT_MAX_CHARS,
    MAX_FACTS,
    STRUCTURED_CONTENT_LABEL,
    SUMMARY_MAX_CHARS,
    TEXT_ARTIFACT_THRESHOLD_CHARS,
    VIEW_MAX_CHARS,
)
from gatespec_surface.errors import ErrorCode, GatewayError
from gatespec_surface.models import ResultEnvelope
from gatespec_surface.schemas import MODEL_SCHEMAS
from gatespec_surface.text import clip

ENVELOPE_SCHEMA = jsonschema.Draft202012Validator(MODEL_SCHEMAS["ResultEnvelope"])
TOOL = {"tool_id": "everything:get-sum#1a2b3c4d", "server_key": "everything"}


def tiny_png() -> bytes:
    """A valid 1x1 RGB PNG (one red pixel)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        return struct.pack(">I", len(data)) + kind + data + crc

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def tiny_wav() -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\x00\x00\xff\x7f" * 40)
    return out.getvalue()


PNG = tiny_png()
WAV = tiny_wav()
B64_PNG = base64.b64encode(PNG).decode()
B64_WAV = base64.b64encode(WAV).decode()


def envelope(result: object, store: ArtifactStore, upstream: str = "get-sum") -> dict[str, Any]:
    env = to_envelope(result, upstream_name=upstream, store=store, **TOOL)
    ResultEnvelope.model_validate(env)
    ENVELOPE_SCHEMA.validate(env)
    json.dumps(env, ensure_ascii=False).encode("utf-8")  # every string encodes as UTF-8
    return env


@pytest.fixture
def store() -> ArtifactStore:
    return ArtifactStore()


# ---------------------------------------------------------------------- text and status


def test_short_text_is_the_summary_and_needs_no_artifact(store: ArtifactStore) -> None:
    env = envelope({"content": [{"type": "text", "text": "The sum of 1 and 2 is 3."}]}, store)
    assert env == {
        "status": "ok",
        "summary": "The sum of 1 and 2 is 3.",
        "facts": [],
        "artifacts": [],
        "provenance": {
            "tool_id": TOOL["tool_id"],
            "server": "everything",
            "upstream_tool": "get-sum",
            "text_chars": 24,
        },
    }
    assert len(store) == 0


def test_text_parts_are_joined_with_newlines(store: ArtifactStore) -> None:
    result = {
        "content": [
            {"type": "text", "text": "Here's the image you requested:"},
            {"type": "image", "data": B64_PNG, "mimeType": "image/png"},
            {"type": "text", "text": "The image above is the MCP logo."},
        ]
    }
    env = envelope(result, store)
    assert env["summary"] == "Here's the image you requested:\nThe image above is the MCP logo."


def test_is_error_gives_status_error(store: ArtifactStore) -> None:
    result = {"content": [{"type": "text", "text": "Error: Operation failed"}], "isError": True}
    env = envelope(result, store)
    assert env["status"] == "error" and env["summary"] == "Error: Operation failed"
    assert envelope({**result, "isError": False}, store)["status"] == "ok"


def test_large_text_is_an_artifact_readable_whole_and_by_lines(store: ArtifactStore) -> None:
    text = "".join(f"row {n}: " + "lorem ipsum dolor sit amet " * 2 + "\n" for n in range(1, 101))
    assert TEXT_ARTIFACT_THRESHOLD_CHARS < len(text) <= VIEW_MAX_CHARS
    env = envelope({"content": [{"type": "text", "text": text}]}, store)
    assert len(env["summary"]) <= SUMMARY_MAX_CHARS and env["summary"].endswith(ELLIPSIS)
    assert text.startswith(env["summary"][: -len(ELLIPSIS)])
    [ref] = env["artifacts"]
    assert ref["media_type"] == "text/plain" and ref["size_bytes"] == len(text.encode())
    whole = store.view(ref["handle"], "all")
    assert whole["content"] == text and whole["truncated"] is False
    lines = store.view(ref["handle"], "lines:10-12")["content"].split("\n")
    assert lines == text.split("\n")[9:12]
    assert env["provenance"]["text_chars"] == len(text)


def test_text_over_the_view_cap_is_recovered_whole_by_paging(store: ArtifactStore) -> None:
    text = "".join(f"{n:05d} ünïcödé line\n" for n in range(3000))
    env = envelope({"content": [{"type": "text", "text": text}]}, store)
    handle = env["artifacts"][0]["handle"]
    assert store.view(handle, "all")["truncated"] is True
    pages, start = [], 1
    while True:
        try:
            page = store.view(handle, f"lines:{start}-{start + 199}")
        except GatewayError as err:
            assert err.code is ErrorCode.VIEW_FAILED and "has 3000 lines" in err.message
            break
        pages.append(page["content"])
        start += 200
    assert "\n".join(pages) + "\n" == text


def test_large_json_text_is_a_json_artifact(store: ArtifactStore) -> None:
    rows = [{"id": i, "name": f"item {i}"} for i in range(60)]
    env = envelope({"content": [{"type": "text", "text": json.dumps({"rows": rows})}]}, store)
    [ref] = env["artifacts"]
    assert ref["media_type"] == "application/json"
    assert json.loads(store.view(ref["handle"], "json:/rows/42/name")["content"]) == "item 42"


def test_summary_cuts_at_a_word_boundary() -> None:
    text = ("word " * 200).strip()
    summary = clip(text, SUMMARY_MAX_CHARS, at_word=True)
    assert len(summary) <= SUMMARY_MAX_CHARS and summary.endswith("word" + ELLIPSIS)
    unbroken = "x" * 1000
    assert (
        clip(unbroken, SUMMARY_MAX_CHARS, at_word=True) == "x" * (SUMMARY_MAX_CHARS - 1) + ELLIPSIS
    )


@given(st.text(max_size=1200))
def test_summary_is_bounded_and_a_prefix(text: str) -> None:
    summary = clip(text, SUMMARY_MAX_CHARS, at_word=True)
    assert len(summary) <= SUMMARY_MAX_CHARS
    if len(text) <= SUMMARY_MAX_CHARS:
        assert summary == text
    else:
        assert summary.endswith(ELLIPSIS) and text.startswith(summary[: -len(ELLIPSIS)])


def test_no_content_at_all(store: ArtifactStore) -> None:
    env = envelope({"content": []}, store)
    assert env["summary"] == "(no content)" and env["artifacts"] == []


# ---------------------------------------------------------------------- binary parts


def test_image_is_decoded_into_a_binary_artifact(store: ArtifactStore) -> None:
    result = {"content": [{"type": "image", "data": B64_PNG, "mimeType": "image/png"}]}
    env = envelope(result, store, upstream="get-tiny-image")
    [ref] = env["artifacts"]
    assert ref["media_type"] == "image/png" and ref["size_bytes"] == len(PNG)
    assert store.get(ref["handle"]).data == PNG
    assert base64.b64decode(store.view(ref["handle"], "all")["content"]) == PNG
    assert base64.b64decode(store.view(ref["handle"], "bytes:0-7")["content"]) == PNG[:8]
    assert "image/png" in env["summary"]  # no text: the summary lists the artifacts


def test_audio_is_decoded_into_a_binary_artifact(store: ArtifactStore) -> None:
    result = {"content": [{"type": "audio", "data": B64_WAV, "mimeType": "audio/wav"}]}
    [ref] = envelope(result, store)["artifacts"]
    assert ref["media_type"] == "audio/wav"
    with wave.open(io.BytesIO(store.get(ref["handle"]).data)) as w:
        assert w.getnframes() == 80


def test_base64_with_line_breaks_and_no_padding_is_accepted(store: ArtifactStore) -> None:
    wrapped = "\n".join(B64_PNG[i : i + 76] for i in range(0, len(B64_PNG), 76)).rstrip("=")
    result = {"content": [{"type": "image", "data": wrapped, "mimeType": "image/png"}]}
    [ref] = envelope(result, store)["artifacts"]
    assert store.get(ref["handle"]).data == PNG


@pytest.mark.parametrize("data", ["not base64 at all!", 12, None, "abc$"])
def test_invalid_base64_is_recorded_not_raised(store: ArtifactStore, data: object) -> None:
    result = {
        "content": [
            {"type": "text", "text": "here"},
            {"type": "image", "data": data, "mimeType": "image/png"},
        ]
    }
    env = envelope(result, store)
    [issue] = env["provenance"]["issues"]
    assert issue["part_index"] == 1 and issue["type"] == "image"
    assert "base64" in issue["problem"]
    if isinstance(data, str):  # kept as sent
        [ref] = env["artifacts"]
        assert store.get(ref["handle"]).data == data.encode()


# ---------------------------------------------------------------------- resources


def test_embedded_text_resource_goes_to_full_text_and_an_artifact(store: ArtifactStore) -> None:
    uri = "demo://resource/dynamic/text/1"
    body = "Resource 1: This is a plaintext resource created at 3:28:55 AM"
    result = {
        "content": [
            {"type": "text", "text": "Returning resource reference for Resource 1:"},
            {"type": "resource", "resource": {"uri": uri, "mimeType": "text/plain", "text": body}},
            {"type": "text", "text": f"You can access this resource using the URI: {uri}"},
        ]
    }
    env = envelope(result, store, upstream="get-resource-reference")
    assert body in env["summary"]
    [ref] = env["artifacts"]
    assert ref["uri"] == uri and ref["media_type"] == "text/plain"
    assert store.view(ref["handle"], "all")["content"] == body


def test_embedded_blob_resource_is_a_binary_artifact(store: ArtifactStore) -> None:
    uri = "demo://resource/static/png"
    result = {
        "content": [
            {"type": "resource", "resource": {"uri": uri, "mimeType": "image/png", "blob": B64_PNG}}
        ]
    }
    [ref] = envelope(result, store)["artifacts"]
    assert ref["uri"] == uri and store.get(ref["handle"]).data == PNG


def test_resource_link_is_a_reference_with_no_bytes(store: ArtifactStore) -> None:
    result = {
        "content": [
            {"type": "text", "text": "Here are 2 resource links to resources available:"},
            {
                "name": "Blob Resource 1",
                "uri": "demo://resource/dynamic/blob/1",
                "description": "Resource 1: plaintext resource",
                "mimeType": "text/plain",
                "type": "resource_link",
            },
            {"type": "resource_link", "uri": "demo://resource/dynamic/text/2", "name": "T2"},
        ]
    }
    env = envelope(result, store, upstream="get-resource-links")
    first, second = env["artifacts"]
    assert first["uri"] == "demo://resource/dynamic/blob/1" and first["size_bytes"] == 0
    assert first["media_type"] == "text/plain" and "Blob Resource 1" in first["label"]
    assert second["media_type"] == "application/octet-stream"
    with pytest.raises(GatewayError) as info:
        store.view(first["handle"], "all")
    assert info.value.code is ErrorCode.VIEW_FAILED and first["uri"] in info.value.message


def test_overlong_link_uri_is_kept_as_content(store: ArtifactStore) -> None:
    uri = "https://example.com/?" + "q" * 5000
    env = envelope({"content": [{"type": "resource_link", "uri": uri, "name": "x"}]}, store)
    [ref] = env["artifacts"]
    assert ref["uri"] is None and store.get(ref["handle"]).data == uri.encode()
    assert env["provenance"]["issues"][0]["part_index"] == 0


# ---------------------------------------------------------------------- structured content


def test_structured_content_is_an_artifact_and_facts(store: ArtifactStore) -> None:
    structured = {"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82}
    result = {
        "content": [{"type": "text", "text": json.dumps(structured, separators=(",", ":"))}],
        "structuredContent": structured,
    }
    env = envelope(result, store, upstream="get-structured-content")
    assert env["facts"] == ["temperature: 36", "conditions: Light rain / drizzle", "humidity: 82"]
    [ref] = env["artifacts"]
    assert ref["label"] == STRUCTURED_CONTENT_LABEL and ref["media_type"] == "application/json"
    assert json.loads(store.view(ref["handle"], "all")["content"]) == structured
    assert store.view(ref["handle"], "json:/conditions")["content"] == '"Light rain / drizzle"'


def test_seed_002_structured_content_example(store: ArtifactStore) -> None:
    result = {
        "content": [{"type": "text", "text": "query done"}],
        "structuredContent": {"count": 42, "status": "done"},
    }
    env = envelope(result, store)
    assert "count: 42" in env["facts"] and "status: done" in env["facts"]


def test_facts_are_bounded_in_number_and_length(store: ArtifactStore) -> None:
    structured = {f"k{i:02d}": {"nested": ["v"] * i, "text": "long\ntext " * 40} for i in range(50)}
    env = envelope({"content": [], "structuredContent": structured}, store)
    assert len(env["facts"]) == MAX_FACTS
    assert all(len(f) <= FACT_MAX_CHARS and "\n" not in f for f in env["facts"])
    assert env["facts"][0].startswith('k00: {"nested":[]')
    assert any("50 keys" in i["problem"] for i in env["provenance"]["issues"])


def test_non_object_structured_content_is_kept_and_noted(store: ArtifactStore) -> None:
    env = envelope({"content": [], "structuredContent": [1, 2, 3]}, store)
    [ref] = env["artifacts"]
    assert json.loads(store.view(ref["handle"], "all")["content"]) == [1, 2, 3]
    assert env["facts"] == [] and "not an object" in env["provenance"]["issues"][0]["problem"]


# ---------------------------------------------------------------------- annotations, provenance


def test_part_annotations_go_to_provenance_with_their_index(store: ArtifactStore) -> None:
    result = {
        "content": [
            {
                "type": "text",
                "text": "Error: Operation failed",
                "annotations": {"audience": ["user", "assistant"], "priority": 1.0},
            },
            {
                "type": "image",
                "data": B64_PNG,
                "mimeType": "image/png",
                "annotations": {"audience": ["user"], "priority": 0.5, "junk": "x" * 10_000},
            },
            {"type": "text", "text": "plain"},
        ]
    }
    env = envelope(result, store, upstream="get-annotated-message")
    assert env["provenance"]["content_annotations"] == [
        {"part_index": 0, "audience": ["user", "assistant"], "priority": 1.0},
        {"part_index": 1, "audience": ["user"], "priority": 0.5},
    ]
    assert env["provenance"]["upstream_tool"] == "get-annotated-message"


def test_meta_is_kept_as_an_artifact(store: ArtifactStore) -> None:
    env = envelope({"content": [], "_meta": {"trace": "abc"}}, store)
    [ref] = env["artifacts"]
    assert ref["label"] == "_meta"
    assert json.loads(store.view(ref["handle"], "all")["content"]) == {"trace": "abc"}


# ---------------------------------------------------------------------- never crash, never drop


@pytest.mark.parametrize(
    "part",
    [
        {"type": "video", "data": "AAAA", "mimeType": "video/mp4"},
        {"type": "text", "text": 5},
        {"text": "no type"},
        {"type": "resource", "resource": "demo://x"},
        {"type": "resource", "resource": {"uri": "demo://x"}},
        {"type": "resource_link", "name": "no uri"},
        "just a string",
        ["a", "list"],
    ],
)
def test_unknown_or_malformed_parts_are_kept_and_noted(store: ArtifactStore, part: Any) -> None:
    env = envelope({"content": [{"type": "text", "text": "ok"}, part]}, store)
    [issue] = env["provenance"]["issues"]
    assert issue["part_index"] == 1
    [ref] = env["artifacts"]
    assert json.loads(store.view(ref["handle"], "all")["content"]) == part


@pytest.mark.parametrize("result", [None, "text", [1, 2], {"content": "not a list"}])
def test_malformed_results_do_not_raise(store: ArtifactStore, result: object) -> None:
    env = envelope(result, store)
    assert env["provenance"]["issues"]


def test_parts_too_large_for_the_store_are_noted(store: ArtifactStore) -> None:
    small = ArtifactStore(max_total_bytes=100)
    text = "y" * 1000
    env = envelope({"content": [{"type": "text", "text": text}]}, small)
    assert env["artifacts"] == [] and env["summary"].endswith(ELLIPSIS)
    assert "not kept" in env["provenance"]["issues"][0]["problem"]


def test_untrusted_mime_types_cannot_break_the_envelope(store: ArtifactStore) -> None:
    result = {"content": [{"type": "image", "data": B64_PNG, "mimeType": "x" * 10_000}]}
    [ref] = envelope(result, store)["artifacts"]
    assert ref["media_type"] == "application/octet-stream"


ANY_TEXT = st.text(st.characters(), max_size=30)  # lone surrogates included, as JSON allows
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | ANY_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=8,
)
PARTS = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.text(st.characters(), max_size=700)),
    st.builds(
        lambda k, d, m: {"type": k, "data": d, "mimeType": m},
        st.sampled_from(["image", "audio"]),
        st.sampled_from([B64_PNG, B64_WAV, "", "!!", "QUJD"]) | st.text(max_size=10),
        st.text(max_size=20) | st.sampled_from(["image/png", "audio/wav"]),
    ),
    st.builds(
        lambda u, body: {"type": "resource", "resource": {"uri": u, **body}},
        ANY_TEXT,
        st.fixed_dictionaries({"text": ANY_TEXT})
        | st.fixed_dictionaries({"blob": st.sampled_from([B64_PNG, "@@"])}),
    ),
    st.builds(
        lambda u, n: {"type": "resource_link", "uri": u, "name": n},
        ANY_TEXT,
        ANY_TEXT,
    ),
    st.builds(
        lambda a, p: {"type": "text", "text": "x", "annotations": {"audience": a, "priority": p}},
        JSON,
        JSON,
    ),
    JSON,
)


@settings(max_examples=200)
@given(
    content=st.lists(PARTS, max_size=6) | JSON,
    structured=st.none() | st.dictionaries(ANY_TEXT, JSON, max_size=40) | JSON,
    is_error=st.booleans() | JSON,
)
def test_any_result_gives_a_valid_envelope(content: Any, structured: Any, is_error: Any) -> None:
    store = ArtifactStore()
    env = envelope(
        {"content": content, "structuredContent": structured, "isError": is_error}, store
    )
    assert env["status"] == ("error" if is_error is True else "ok")
    for ref in env["artifacts"]:
        assert ref["handle"] in store


# ---------------------------------------------------------------------- the real server


@pytest.mark.real_upstream
@pytest.mark.anyio
async def test_real_server_everything_results(servers: Any) -> None:
    from mcp import Client, StdioServerParameters

    command = servers.binary(servers.node_bin / "mcp-server-everything")
    store = ArtifactStore()
    calls: dict[str, dict[str, Any]] = {
        "get-sum": {"a": 1, "b": 2},
        "get-tiny-image": {},
        "get-annotated-message": {"messageType": "error", "includeImage": True},
        "get-resource-links": {"count": 2},
        "get-resource-reference": {"resourceType": "Blob", "resourceId": 2},
        "get-structured-content": {"location": "Chicago"},
    }
    envelopes = {}
    async with Client(StdioServerParameters(command=command, args=["stdio"])) as client:
        for name, args in calls.items():
            result = await client.call_tool(name, args)
            wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            envelopes[name] = envelope(wire, store, upstream=name)
    assert envelopes["get-sum"]["summary"] == "The sum of 1 and 2 is 3."
    [image] = envelopes["get-tiny-image"]["artifacts"]
    assert store.get(image["handle"]).data.startswith(b"\x89PNG\r\n\x1a\n")
    annotations = envelopes["get-annotated-message"]["provenance"]["content_annotations"]
    assert [a["part_index"] for a in annotations] == [0, 1]
    links = envelopes["get-resource-links"]["artifacts"]
    assert len(links) == 2 and all(a["uri"] and a["size_bytes"] == 0 for a in links)
    [blob] = envelopes["get-resource-reference"]["artifacts"]
    assert blob["uri"] == "demo://resource/dynamic/blob/2"
    facts = envelopes["get-structured-content"]["facts"]
    assert [f.split(":")[0] for f in facts] == ["temperature", "conditions", "humidity"]
