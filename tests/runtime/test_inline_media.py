"""Which images and audio a result shows inline (AM-INLINE-MEDIA), when a tool_execute text
leaves its summary out (AM-RESULT-TEXT-ONCE), and the config key that sets the cap. The
end-to-end proof over real servers is test_inline_media_real.py."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from gatespec.artifacts import ArtifactStore
from gatespec.config import DEFAULT_INLINE_MEDIA_MAX_BYTES, ConfigError, parse_config
from gatespec.firewall import text_repeats_structured, to_envelope
from gatespec.inline_media import artifact_media, result_media
from gatespec.runtime import envelope_text
from tests.runtime.test_firewall import B64_PNG, B64_WAV, PNG, TOOL, WAV


def image(data: str = B64_PNG, mime: str = "image/png") -> dict[str, Any]:
    return {"type": "image", "data": data, "mimeType": mime}


def test_images_and_audio_are_shown_in_order_within_the_cap() -> None:
    audio = {"type": "audio", "data": B64_WAV, "mimeType": "audio/wav"}
    result = {"content": [{"type": "text", "text": "two"}, image(), audio]}
    shown = result_media(result, len(PNG) + len(WAV))
    assert [b["type"] for b in shown] == ["image", "audio"]
    assert [base64.b64decode(b["data"]) for b in shown] == [PNG, WAV]
    assert shown[1]["mimeType"] == "audio/wav"


def test_the_cap_counts_all_parts_of_a_result_and_skips_what_does_not_fit() -> None:
    big = base64.b64encode(b"\x00" * (2 * len(PNG))).decode()
    result = {"content": [image(big), image(), image()]}
    shown = result_media(result, len(PNG) + 1)
    assert [base64.b64decode(b["data"]) for b in shown] == [
        PNG
    ]  # not the big one; one PNG, not two
    assert result_media(result, 0) == ()  # 0: artifacts only


def test_data_is_sent_as_strict_base64() -> None:
    wrapped = "\n".join(B64_PNG[i : i + 60] for i in range(0, len(B64_PNG), 60)).rstrip("=")
    (shown,) = result_media({"content": [image(wrapped)]}, 1 << 20)
    assert shown["data"] == base64.b64encode(PNG).decode()


@pytest.mark.parametrize(
    "part",
    [
        image("not base64!"),
        image(mime="application/octet-stream"),  # a client cannot show it as an image
        image(mime="audio/wav"),  # the media type contradicts the kind
        {"type": "image", "data": B64_PNG},
        {"type": "resource", "resource": {"uri": "x:/a", "blob": B64_PNG, "mimeType": "image/png"}},
        "not a part",
    ],
)
def test_what_cannot_be_shown_is_left_to_its_artifact(part: object) -> None:
    assert result_media({"content": [part]}, 1 << 20) == ()


@pytest.mark.parametrize("result", [None, [], {"content": "x"}, {"content": None}])
def test_malformed_results_show_nothing(result: object) -> None:
    assert result_media(result, 1 << 20) == ()


def test_an_image_artifact_within_the_cap_is_a_content_block() -> None:
    store = ArtifactStore()
    ref = store.put(PNG, "image/png", "image part 0")
    artifact = store.get(ref["handle"])
    block = artifact_media(artifact, len(PNG))
    assert block == {"type": "image", "data": B64_PNG, "mimeType": "image/png"}
    assert artifact_media(artifact, len(PNG) - 1) is None
    text = store.get(store.put(b"plain", "text/plain", "t")["handle"])
    assert artifact_media(text, 1 << 20) is None


# ------------------------------------------------------------------ AM-RESULT-TEXT-ONCE

STRUCTURED = {"temperature": 22.5, "conditions": "Partly cloudy", "humidity": 65}


def _text_of(result: dict[str, Any]) -> str:
    env = to_envelope(result, upstream_name="get-structured-content", store=ArtifactStore(), **TOOL)
    return envelope_text(env, text_repeats_structured(result))


def test_text_that_repeats_the_structured_content_is_not_shown_again() -> None:
    result = {
        "content": [{"type": "text", "text": json.dumps(STRUCTURED, indent=2)}],
        "structuredContent": STRUCTURED,
    }
    assert text_repeats_structured(result)
    lines = _text_of(result).split("\n")
    assert lines[0] == "[ok]"
    assert lines[1:4] == ["- temperature: 22.5", "- conditions: Partly cloudy", "- humidity: 65"]
    assert "structured_content" in lines[4]


@pytest.mark.parametrize(
    "text",
    ["query done", json.dumps({**STRUCTURED, "humidity": 66}), "[1, 2]", "{not json"],
)
def test_other_text_keeps_its_summary(text: str) -> None:
    result = {"content": [{"type": "text", "text": text}], "structuredContent": STRUCTURED}
    assert not text_repeats_structured(result)
    assert _text_of(result).startswith(f"[ok] {text}")


def test_without_the_structured_artifact_the_summary_stays() -> None:
    result = {"content": [{"type": "text", "text": json.dumps(STRUCTURED)}]}
    result["structuredContent"] = STRUCTURED
    env = to_envelope(result, upstream_name="t", store=ArtifactStore(), **TOOL)
    env["artifacts"] = []  # as when the state backend was unavailable (without_artifacts)
    assert envelope_text(env, True).startswith(f"[ok] {json.dumps(STRUCTURED)}")


# ------------------------------------------------------------------ config


def test_the_cap_is_a_gateway_key_zero_turns_it_off() -> None:
    def cap(value: object) -> int:
        doc = {"mcpServers": {}, "gateway": {"inline_media_max_bytes": value}}
        return parse_config(doc).options.inline_media_max_bytes

    assert parse_config({"mcpServers": {}}).options.inline_media_max_bytes == (
        DEFAULT_INLINE_MEDIA_MAX_BYTES
    )
    assert cap(0) == 0 and cap(5000) == 5000 and cap("2048") == 2048
    for bad in (-1, 1.5, True, "lots"):
        with pytest.raises(ConfigError, match="inline_media_max_bytes"):
            cap(bad)
