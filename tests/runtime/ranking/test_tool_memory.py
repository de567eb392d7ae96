"""The tool memory (gatespec.ranking.memory): a tool's fingerprint, the scores it changes and
the ones it must not, and how the shipped file is loaded."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gatespec.ranking import DEFAULT_PARAMS, Document, memory
from gatespec.ranking.memory import ToolMemory, fingerprint, prototypes, shift
from gatespec.ranking.ranker import rank_scores

NAME, DESCRIPTION = "get_current_time", "Get current time in a specific timezone"


@pytest.mark.parametrize(
    ("name", "description"),
    [
        ("get_current_time ", "Get  current time in a\nspecific timezone"),  # white space only
        (NAME, "Get current time in a specific\u00a0timezone"),  # a no-break space is a space
    ],
)
def test_the_fingerprint_ignores_white_space(name: str, description: str) -> None:
    assert fingerprint(name, description) == fingerprint(NAME, DESCRIPTION)


def test_the_fingerprint_ignores_only_unicode_composition() -> None:
    composed, decomposed = "Caf\u00e9 hours", "Cafe\u0301 hours"
    assert fingerprint("cafe", composed) == fingerprint("cafe", decomposed)


@pytest.mark.parametrize(
    ("name", "description"),
    [
        ("get_current_date", DESCRIPTION),  # renamed
        ("Get_current_time", DESCRIPTION),  # case
        (NAME, "Get current time in a specific timezone."),  # punctuation
        (NAME, "Get current time in one specific timezone"),  # a word
        (NAME, "Get current time in a specific timezone, not UTC"),  # more words
        (NAME, "Get the current time in 2 timezones"),  # re-described
        (NAME, ""),  # no description
        (f"{NAME} Get", "current time in a specific timezone"),  # a word moved to the name
    ],
)
def test_the_fingerprint_changes_with_anything_that_changes_meaning(
    name: str, description: str
) -> None:
    assert fingerprint(name, description) != fingerprint(NAME, DESCRIPTION)


def test_prototypes_are_unit_rows() -> None:
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(9, 8)).astype(np.float32)
    centroid = prototypes(vectors, 1)
    expected = vectors.mean(axis=0) / np.linalg.norm(vectors.mean(axis=0))
    assert np.allclose(centroid, expected[None], atol=1e-6)
    several = prototypes(vectors, 4)
    assert several.shape == (4, 8)
    assert np.allclose(np.linalg.norm(several, axis=1), 1.0, atol=1e-5)
    assert prototypes(vectors[:2], 4).shape == (2, 8)  # never more prototypes than queries


def _docs() -> list[Document]:
    return [
        Document.of_tool("time/get_current_time", NAME, DESCRIPTION, "time", {}),
        Document.of_tool("git/git_log", "git_log", "Shows the commit logs", "git", {}),
        Document.of_tool(
            "git/git_status", "git_status", "Shows the working tree status", "git", {}
        ),
    ]


def _memory(weight: float = 0.5, centre: float = 0.5) -> ToolMemory:
    known = {fingerprint("git_log", "Shows the commit logs"): [np.array([1.0, 0.0, 0.0])]}
    return ToolMemory.build(known, 1, weight, centre)


def test_only_tools_in_memory_are_paired_with_prototypes() -> None:
    tools, rows = _memory().rows_for(_docs())
    assert tools.tolist() == [1] and rows.tolist() == [0]
    # A re-described tool is unseen.
    redescribed = [Document.of_tool("git/git_log", "git_log", "Shows the logs", "git", {})]
    assert _memory().recall(np.ones(3) / 3**0.5, 1, _memory().rows_for(redescribed)) is None


def test_an_unseen_tool_scores_exactly_as_without_the_memory() -> None:
    docs = _docs()
    ids = [d.id for d in docs]
    lexical = np.array([0.0, 1.0, 2.0])
    cosine = np.array([0.6, 0.5, 0.4])
    vectors = np.eye(3)
    query = np.array([0.8, 0.6, 0.0])
    mem = _memory()
    recall = mem.recall(query, len(docs), mem.rows_for(docs))
    assert recall is not None
    assert recall.tolist() == pytest.approx([0.0, 0.5 * (0.8 - 0.5), 0.0])  # float32 vectors
    assert recall[0] == recall[2] == 0.0
    without, _ = rank_scores(lexical, cosine, ids, DEFAULT_PARAMS, 3, vectors=vectors)
    with_, _ = rank_scores(lexical, cosine, ids, DEFAULT_PARAMS, 3, vectors=vectors, recall=recall)
    before, after = dict(without), dict(with_)
    for unseen in ("time/get_current_time", "git/git_status"):
        assert after[unseen] == before[unseen]
    assert after["git/git_log"] == round(before["git/git_log"] + 0.15, 4)


def test_the_memory_lowers_a_known_tool_whose_queries_look_unlike_this_one() -> None:
    best = np.array([-np.inf, 0.2, -np.inf])
    assert shift(best, 0.5, 0.7).tolist() == [0.0, 0.5 * (0.2 - 0.7), 0.0]


def test_save_and_load_round_trip_reproducibly(tmp_path: Path) -> None:
    mem = _memory(0.3, 0.7)
    first, second = tmp_path / "a.npz", tmp_path / "b.npz"
    mem.save(first)
    mem.save(second)
    assert first.read_bytes() == second.read_bytes()
    back = ToolMemory.load(first)
    assert back.fingerprints == mem.fingerprints
    assert (back.weight, back.centre) == (0.3, 0.7)
    assert np.allclose(back.vectors, mem.vectors, atol=1e-3)  # stored as float16


def test_loading_reads_the_package_file_once_and_never_the_network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "tool_memory.npz"
    _memory().save(path)
    monkeypatch.setattr(memory, "MEMORY_FILE", path)
    monkeypatch.setattr(memory, "_loaded", [])
    monkeypatch.delenv(memory.OFF_ENV, raising=False)

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("the tool memory tried to open a socket")

    monkeypatch.setattr(socket, "socket", no_network)
    loaded = memory.load_memory()
    assert loaded is not None and loaded.fingerprints == _memory().fingerprints
    path.unlink()
    assert memory.load_memory() is loaded  # read once


def test_absent_or_switched_off_means_no_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory, "MEMORY_FILE", tmp_path / "missing.npz")
    monkeypatch.setattr(memory, "_loaded", [])
    monkeypatch.delenv(memory.OFF_ENV, raising=False)
    assert memory.load_memory() is None
    path = tmp_path / "tool_memory.npz"
    _memory().save(path)
    monkeypatch.setattr(memory, "MEMORY_FILE", path)
    monkeypatch.setattr(memory, "_loaded", [])
    monkeypatch.setenv(memory.OFF_ENV, "off")
    assert memory.load_memory() is None
    assert memory._loaded == []  # off: the file is not even read


def test_importing_and_lexical_ranking_never_load_the_memory() -> None:
    code = (
        "from gatespec.ranking import Document, Ranker\n"
        "from gatespec.ranking import memory\n"
        "r = Ranker([Document('a', 'git_log', 'Shows the commit logs')], semantic=False)\n"
        "assert r.search_counted('commit logs')[0]\n"
        "assert memory._loaded == [], memory._loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_ranker_changes_only_the_scores_of_tools_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gatespec.ranking import Ranker
    from gatespec.ranking import semantic as semantic_module
    from gatespec.ranking.loading import load_encoder, reset_encoder

    monkeypatch.setenv("GATESPEC_SEMANTIC", "on")
    monkeypatch.setenv("GATESPEC_CACHE_DIR", str(tmp_path))
    reset_encoder()
    semantic_module.forget_recent()
    try:
        encoder, status = load_encoder()
        assert encoder is not None, status.detail
        asked = encoder.encode(["show me what was committed recently"], query=True)
        path = tmp_path / "tool_memory.npz"
        known = {fingerprint("git_log", "Shows the commit logs"): list(asked)}
        ToolMemory.build(known, 1, 0.5, 0.5).save(path)
        monkeypatch.setattr(memory, "MEMORY_FILE", path)
        ranker = Ranker(_docs(), background=False)
        query = "which commits landed this week"

        def scores(off: bool) -> dict[str, float]:
            monkeypatch.setattr(memory, "_loaded", [])
            if off:
                monkeypatch.setenv(memory.OFF_ENV, "off")
            else:
                monkeypatch.delenv(memory.OFF_ENV, raising=False)
            return dict(ranker.search_counted(query, 10)[0])

        before, after = scores(True), scores(False)
        assert before.keys() == after.keys()
        assert after["git/git_log"] != before["git/git_log"]
        for unseen in set(before) - {"git/git_log"}:
            assert after[unseen] == before[unseen]
    finally:
        reset_encoder()


def test_rank_no_memory_switches_it_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gatespec import cli

    monkeypatch.setenv("GATESPEC_SEMANTIC", "off")  # the switch is what is under test
    monkeypatch.setenv(memory.OFF_ENV, "on")  # recorded, so the command's "off" is undone after
    (tmp_path / "c.json").write_text(
        '[{"server": "git", "name": "git_log", "description": "Logs"}]'
    )
    (tmp_path / "q.json").write_text('[{"id": "a", "query": "logs"}]')
    argv = ["rank", "--catalog", str(tmp_path / "c.json"), "--queries", str(tmp_path / "q.json")]
    assert not memory.switched_off()
    assert cli.main([*argv, "--out", str(tmp_path / "o.json"), "--no-memory"]) == 0
    assert memory.switched_off()


def test_the_memory_holds_only_tools_enough_dev_queries_ask_for() -> None:
    from gatespec.ranking.train.memory_cv import MemorySet, tool_queries

    dev = MemorySet()
    dev.docs = _docs()
    dev.queries = [{"gold": ["git/git_log"]}] * 5 + [{"gold": ["git/git_status", "git/git_log"]}]
    dev.query_vectors = np.eye(6, 3)
    log, status = (fingerprint(d.name, d.description) for d in _docs()[1:])
    got = tool_queries({"s": dev}, {"s": range(6)}, 5)
    assert list(got) == [log] and len(got[log]) == 6
    assert set(tool_queries({"s": dev}, {"s": range(6)}, 1)) == {log, status}
    assert tool_queries({"s": dev}, {"s": range(4)}, 5) == {}  # only the picked queries count
