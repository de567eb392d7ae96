"""gatespec.ranking.decompose (splitting a task into parts) and fusion.fuse_parts (joining the
parts' rankings with the whole query's), on hand-made scores: no model.

Expected splits follow the rules in decompose's docstring (sentences; clauses at a comma,
"and", "then"; a piece under MIN_WORDS words rejoins its neighbour); expected scores are
worked out by hand from fuse_parts' docstring."""

from __future__ import annotations

import numpy as np
import pytest

from gatespec.ranking import FusionParams
from gatespec.ranking.decompose import parts
from gatespec.ranking.fusion import RRF_K, fuse_parts
from gatespec.ranking.ranker import rank_scores

TASK = "Find parking near the Forbidden City, and then suggest places to eat nearby. Export a PDF."


def test_sentences() -> None:
    assert parts(TASK, "sentences") == [
        "Find parking near the Forbidden City, and then suggest places to eat nearby.",
        "Export a PDF.",
    ]


def test_clauses() -> None:
    assert parts(TASK, "clauses") == [
        "Find parking near the Forbidden City",
        "suggest places to eat nearby.",
        "Export a PDF.",
    ]


def test_short_pieces_rejoin_and_a_one_part_query_has_no_parts() -> None:
    assert parts("weather in Berlin, Germany", "clauses") == []
    assert parts("convert black and white photos to colour", "clauses") == []
    assert parts("a file name x.pdf in /tmp, then mail it to Bob", "sentences") == []


def test_min_parts_and_none() -> None:
    assert parts(TASK, "clauses", min_parts=4) == []
    assert parts(TASK, "none") == []
    with pytest.raises(ValueError, match="unknown split level"):
        parts(TASK, "words")


def test_cjk_sentences_split_without_spaces() -> None:
    assert parts("查询北京明天的天气情况。然后把结果发邮件给我。", "sentences") == [
        "查询北京明天的天气情况。",
        "然后把结果发邮件给我。",
    ]


WHOLE = np.array([0.9, 0.5, 0.2, 0.0])
PART = np.array([0.1, 0.2, 0.95, 0.0])
CANDIDATES = np.array([0, 1, 2])


def test_max_fusion_lifts_a_step_the_whole_query_missed() -> None:
    out = fuse_parts(WHOLE, [PART], CANDIDATES, FusionParams(part_fusion="max", part_weight=0.8))
    assert out == pytest.approx([0.9, 0.5, 0.76, 0.0])


def test_rrf_fusion() -> None:
    out = fuse_parts(WHOLE, [PART], CANDIDATES, FusionParams(part_fusion="rrf", part_weight=0.5))
    k = RRF_K
    scale = (k + 1) / 1.5
    # whole ranks t0, t1, t2; the part ranks t2, t1, t0.
    expected = [
        (1 / (k + 1) + 0.5 / (k + 3)) * scale,
        (1 / (k + 2) + 0.5 / (k + 2)) * scale,
        (1 / (k + 3) + 0.5 / (k + 1)) * scale,
        0.0,
    ]
    assert out == pytest.approx(expected)


def test_a_tool_only_a_part_matches_is_a_match() -> None:
    ids = ["t0", "t1", "t2"]
    lexical = np.array([1.0, 0.0, 0.0])
    cosine = np.array([0.5, 0.1, 0.1])  # t1, t2 below min_similarity for the whole query
    part = (np.zeros(3), np.array([0.0, 0.1, 0.9]))
    params = FusionParams(feedback_weight=0.0, part_weight=1.0)
    alone, n_alone = rank_scores(lexical, cosine, ids, params, 10)
    joined, n_joined = rank_scores(lexical, cosine, ids, params, 10, parts=[part])
    assert [h for h, _ in alone] == ["t0"] and n_alone == 1
    # t0: 0.2 * 1 + 0.8 * 0.5 = 0.6; t2: max(0.8 * 0.1, 1.0 * 0.8 * 0.9) = 0.72 (its part
    # cosine 0.9 reaches min_similarity, so it matches).
    assert [h for h, _ in joined] == ["t2", "t0"] and n_joined == 2


def test_server_boost_lifts_a_tool_whose_server_mates_fit() -> None:
    from gatespec.ranking.fusion import server_boost

    fused = np.array([0.8, 0.5, 0.6, 0.1, 0.7])
    groups = np.array([0, 0, 1, 1, 2])  # t0, t1 one server; t2, t3 another; t4 alone
    out = server_boost(fused, np.arange(5), groups, FusionParams(server_weight=0.5))
    # Best other of the same server: t0 -> t1 (0.5), t1 -> t0 (0.8), t2 -> t3, t3 -> t2, t4: 0.
    expected = (fused + 0.5 * np.array([0.5, 0.8, 0.1, 0.6, 0.0])) / 1.5
    assert out == pytest.approx(expected)
    # t1 (0.5 alone) now passes t2 (0.6 alone): 0.6 vs 0.4333.
    assert out[1] > out[2]
