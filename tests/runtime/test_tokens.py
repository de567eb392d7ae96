"""Exact token counting (§2.3, AM-BUDGET-TEXT): the offline cl100k_base, never an estimate."""

from __future__ import annotations

import pytest
import tiktoken

from gatespec import tokens
from gatespec_surface import budgets


def test_offline_encoding_is_the_budget_encoder() -> None:
    assert tokens.OFFLINE_ENCODING == f"{budgets.ENCODER}_offline"
    assert tokens.encoder().name == tokens.OFFLINE_ENCODING
    assert tokens.encoder() is tokens.encoder()  # loaded once


def test_known_counts() -> None:
    # tiktoken's own published example for cl100k_base
    assert tokens.encode("tiktoken is great!") == [83, 1609, 5963, 374, 2294, 0]
    assert tokens.count_tokens("tiktoken is great!") == 6
    assert tokens.count_tokens("") == 0


def test_special_token_spelling_is_counted_as_text() -> None:
    text = "Stops at <|endoftext|> markers."
    ids = tokens.encode(text)
    assert 100257 not in ids  # the real <|endoftext|> id never appears
    assert tokens.count_tokens(text) > tokens.count_tokens("Stops at  markers.")


def test_cjk_and_emoji_are_counted_exactly() -> None:
    text = "获取天气预报 😀"
    enc = tiktoken.get_encoding(tokens.OFFLINE_ENCODING)
    assert tokens.count_tokens(text) == len(enc.encode(text, disallowed_special=()))


@pytest.fixture
def unloaded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens, "_encoding", None)


@pytest.mark.usefixtures("unloaded")
def test_missing_encoder_is_a_loud_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> tiktoken.Encoding:
        raise ValueError(f"Unknown encoding {name}")

    monkeypatch.setattr(tiktoken, "get_encoding", missing)
    with pytest.raises(tokens.TokenizerUnavailable, match="never estimated"):
        tokens.count_tokens("anything")


@pytest.mark.usefixtures("unloaded")
def test_a_different_encoder_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    other = tiktoken.Encoding(
        name=tokens.OFFLINE_ENCODING,
        pat_str=r"\S+|\s+",
        mergeable_ranks={bytes([b]): b for b in range(256)},
        special_tokens={},
    )
    monkeypatch.setattr(tiktoken, "get_encoding", lambda name: other)
    with pytest.raises(tokens.TokenizerUnavailable, match="known answer"):
        tokens.count_tokens("anything")
