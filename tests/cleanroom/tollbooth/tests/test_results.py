"""Seed 002 result handling: envelopes, facts, artifacts, provenance."""

import base64

from tollbooth.surface import firewall, mcp_result_to_envelope


def test_seed_002_text_example():
    env, binaries, full_text = mcp_result_to_envelope(
        {"content": [{"type": "text", "text": "Found 42 records matching query"}], "isError": False},
        "search_database",
    )
    assert env.status == "ok"
    assert env.summary == "Found 42 records matching query"
    assert full_text == "Found 42 records matching query"
    assert binaries == {}


def test_seed_002_structured_content_example():
    env, binaries, _ = mcp_result_to_envelope(
        {"content": [{"type": "text", "text": "query done"}], "structuredContent": {"count": 42, "status": "done"}},
        "query",
    )
    raw, media, _label = binaries["mcp:query:structured_content"]
    assert media == "application/json" and b'"count":42' in raw
    assert "count: 42" in env.facts and "status: done" in env.facts


def test_seed_002_annotations_example():
    env, _, _ = mcp_result_to_envelope(
        {"content": [{"type": "text", "text": "...", "annotations": {"audience": ["human"], "priority": 0.9}}]},
        "tool",
    )
    assert env.provenance["content_annotations"] == [{"part_index": 0, "audience": ["human"], "priority": 0.9}]


def test_summary_is_capped_at_500_chars_and_full_text_kept():
    text = "x" * 1200
    env, _, full = mcp_result_to_envelope({"content": [{"type": "text", "text": text}]}, "t")
    assert len(env.summary) <= 500 and full == text


def test_binary_parts_and_links():
    png = b"\x89PNG-bytes"
    res = {
        "content": [
            {"type": "image", "data": base64.b64encode(png).decode(), "mimeType": "image/png"},
            {"type": "audio", "data": base64.b64encode(b"RIFF").decode(), "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "hello"}},
            {"type": "resource_link", "uri": "file:///big.bin", "name": "big"},
            {"type": "mystery"},
            {"type": "image", "data": "!!!notbase64", "mimeType": "image/png"},
        ],
        "isError": True,
    }
    env, binaries, full = mcp_result_to_envelope(res, "t")
    assert env.status == "error"
    assert binaries["mcp:t:image:0"] == (png, "image/png", "image part 0")
    assert binaries["mcp:t:audio:1"][1] == "audio/wav"
    assert binaries["mcp:t:resource:2"][0] == b"hello" and full == "hello"
    link = [a for a in env.artifacts if a.handle == "mcp:t:resource_link:3"][0]
    assert link.uri == "file:///big.bin" and binaries[link.handle][0] == b"file:///big.bin"
    assert {p["part_index"] for p in env.provenance["unhandled_parts"]} == {4, 5}


def test_firewall_keeps_full_text_as_artifact():
    text = "y" * 2000
    env, binaries = firewall({"content": [{"type": "text", "text": text}]}, "t")
    assert len(env.summary) <= 500
    assert binaries["mcp:t:full_text"][0] == text.encode()
    assert any(a.handle == "mcp:t:full_text" for a in env.artifacts)
