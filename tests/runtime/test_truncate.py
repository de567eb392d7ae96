"""Description truncation (§2.4, AM-TRUNC-CHAR-BOUNDARY, budgets.yaml truncation)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatespec.tokens import count_tokens
from gatespec.truncate import collapse_whitespace, truncate_description
from gatespec_surface.budgets import ELLIPSIS, SENTENCE_TERMINATORS, TERMINATORS_NEEDING_SPACE
from gatespec_surface.validators import LINE_BREAKS


def reference(text: str, budget: int) -> str:
    """§2.4 by brute force: every prefix is counted."""
    text = collapse_whitespace(text)
    if budget <= 0 or not text:
        return ""
    if count_tokens(text) <= budget:
        return text
    best = None
    for end in range(1, len(text) + 1):
        ch = text[end - 1]
        spaced = ch not in TERMINATORS_NEEDING_SPACE or end == len(text) or text[end] == " "
        if ch in SENTENCE_TERMINATORS and spaced and count_tokens(text[:end]) <= budget:
            best = text[:end]
    if best is not None:
        return best
    keep = max(k for k in range(len(text) + 1) if count_tokens(text[:k]) <= budget - 1)
    while True:
        result = text[:keep] + ELLIPSIS
        if count_tokens(result) <= budget:
            return result
        if keep == 0:
            return ""
        keep -= 1


def test_short_text_is_verbatim() -> None:
    text = "Create a new issue in a GitHub repository."
    assert truncate_description(text, 60) == text


def test_whitespace_and_line_breaks_collapse() -> None:
    text = "  Read\r\na file.\u2028Then\u2029write\t\tit.\n"
    out = truncate_description(text, 60)
    assert out == "Read a file. Then write it."
    assert not any(b in out for b in LINE_BREAKS)


def test_multi_sentence_text_is_cut_at_a_sentence_end() -> None:
    first = "Search the web for pages."
    second = "Results are ranked by relevance and freshness."
    third = "Use the page parameter to fetch further results when the first page is not enough."
    text = f"{first} {second} {third}"
    budget = count_tokens(f"{first} {second}")
    assert count_tokens(text) > budget
    assert truncate_description(text, budget) == f"{first} {second}"
    assert truncate_description(text, budget - 1) == first


def test_one_huge_sentence_is_hard_cut_with_an_ellipsis() -> None:
    text = "Return " + " and ".join(f"field{i}" for i in range(200)) + " for the record"
    out = truncate_description(text, 20)
    assert out.endswith(ELLIPSIS)
    prefix = out[: -len(ELLIPSIS)]
    assert text.startswith(prefix)
    assert count_tokens(out) <= 20
    assert count_tokens(prefix) <= 19
    assert out == reference(text, 20)


def test_cjk_text_is_cut_at_a_character_boundary() -> None:
    text = "获取指定城市的实时天气预报信息包括温度湿度风速和空气质量指数" * 10
    out = truncate_description(text, 15)
    assert out.endswith(ELLIPSIS)
    assert text.startswith(out[: -len(ELLIPSIS)])
    assert "\ufffd" not in out  # never inside a UTF-8 sequence
    assert count_tokens(out) <= 15
    assert out == reference(text, 15)


def test_special_token_spelling_is_plain_text() -> None:
    text = "Splits documents at <|endoftext|> markers. " * 20
    out = truncate_description(text, 25)
    assert count_tokens(out) <= 25
    assert out.startswith("Splits documents at <|endoftext|> markers.")
    assert out.endswith(".")


def test_degenerate_budgets_and_texts() -> None:
    assert truncate_description("anything at all", 0) == ""
    assert truncate_description("anything at all", -3) == ""
    assert truncate_description("", 10) == ""
    assert truncate_description(" \n\u2028 ", 10) == ""
    assert truncate_description("word " * 50, 1) == ELLIPSIS


def test_deterministic_across_processes_locales_and_hash_seeds() -> None:
    text = "Ärger über naïve Zeichen: 中文描述。 Then more. " * 30
    here = truncate_description(text, 17)
    code = (
        "import sys; from gatespec.truncate import truncate_description as t; "
        f"sys.stdout.write(t({text!r}, 17))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345", "LC_ALL": "C", "LANG": "tr_TR.UTF-8"}
    env["PYTHONIOENCODING"] = "utf-8"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, check=True
    ).stdout.decode("utf-8")
    assert out == here
    assert truncate_description(text, 17) == here


_PIECES = [
    "the", "file", " ", "  ", "\n", "\u2028", ".", "!", "?", "...", "e.g.", "v1.2",
    "中文", "描述。", "😀", "naïve", "==========", "<|endoftext|>", "Ω", "123456", "-", "_",
]  # fmt: skip


@settings(max_examples=150)
@given(st.lists(st.sampled_from(_PIECES), max_size=50).map("".join), st.integers(-1, 30))
def test_matches_the_brute_force_reference(text: str, budget: int) -> None:
    out = truncate_description(text, budget)
    assert out == reference(text, budget)
    assert count_tokens(out) <= max(budget, 0)


@settings(max_examples=100)
@given(st.text(max_size=400), st.integers(1, 80))
def test_result_always_fits_and_is_one_line(text: str, budget: int) -> None:
    out = truncate_description(text, budget)
    assert count_tokens(out) <= budget
    assert not any(b in out for b in LINE_BREAKS)
    assert out == truncate_description(text, budget)


@pytest.mark.parametrize("budget", [5, 12, 40])
def test_sentence_prefix_is_preferred_to_a_hard_cut(budget: int) -> None:
    text = "Short. " + "x" * 2000
    out = truncate_description(text, budget)
    assert out == "Short."


def test_abbreviations_and_file_names_are_not_sentence_ends() -> None:
    text = "Reads a file, e.g. notes.txt or data.json, and returns its lines. " + "More words " * 40
    out = truncate_description(text, 20)
    assert out == "Reads a file, e.g. notes.txt or data.json, and returns its lines."


def test_full_width_terminators_end_chinese_sentences() -> None:
    text = "读取文件内容。" + "返回文件的全部内容并且支持多种编码格式" * 8
    assert truncate_description(text, 12) == "读取文件内容。"
