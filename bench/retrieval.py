"""Retrieval quality and speed of gatespec.ranking (the ranker of tool_browse and search).

    nice .venv/bin/python bench/retrieval.py --out bench/results/retrieval.json

Data: the public sets in /work/shared/data/tool-retrieval/ (README there: sources, licences).
For each set (LiveMCPBench tasks over the MCP catalog; BFCL non-live and live queries over the
deduplicated BFCL catalog; MetaTool over its plugin catalog):

* a held-out fifth of the queries (by a hash of the query id) is never used to choose
  anything; the other four fifths are split into 5 folds;
* the fusion and feedback weights (gatespec.ranking.FusionParams) are chosen by 5-fold
  cross-validation on those four fifths (objective: mean over the sets of hit@5, plus MCP
  coverage@5), each fold's choice scored on its own test fold: the spread across folds is
  reported;
* the final choice (made on all four fifths) is scored on the held-out fifth, next to a
  plain BM25 over name + description + property descriptions and the ranker with semantics
  off, measured in the same run;
* the shipped defaults are scored through `gatespec rank` (gatespec.rank_cli.rank: the
  Browser, exactly as tool_browse(query)) on the whole dev set (MetaTool: its held-out fifth,
  ~3,000 queries, which keeps the run short).

Embeddings (tools and queries) are cached in the user cache directory (gatespec's own
embedding cache), so only the first run encodes; later runs take a few minutes.

Speed: query p50/p99 at 10,000 tools (the MCP catalog replicated under distinct namespaces),
lexical only and hybrid; index build from a warm cache (the user's: the first run fills it);
the encoding rate of a cold start (on a sample, in an empty cache); the resident memory the
model adds (fresh processes). A benchmark, not a test: nothing asserts a timing.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import itertools
import json
import math
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from gatespec.rank_cli import METRICS, query_metrics, rank  # noqa: E402
from gatespec.rank_cli import metrics as rank_metrics  # noqa: E402
from gatespec.ranking import DEFAULT_PARAMS, Document, FusionParams, Ranker, embedding_text  # noqa: E402
from gatespec.ranking.learned import LearnedQueries  # noqa: E402
from gatespec.ranking.learned import artifact as learned_artifact  # noqa: E402
from gatespec.ranking.learned import switched_off as learned_switched_off  # noqa: E402
from gatespec.ranking.loading import load_encoder  # noqa: E402
from gatespec.ranking.memory import MEMORY_FILE  # noqa: E402
from gatespec.ranking.memory import switched_off as memory_switched_off  # noqa: E402
from gatespec.ranking.ranker import rank_scores  # noqa: E402
from gatespec.ranking.train.data import (  # noqa: E402  (the training's own splits and loaders)
    DEFAULT_DATA,
    FOLDS,
    HELD_OUT,
    SETS,
    catalog_docs,
    load_json,
    split_of,
)
from gatespec.ranking.train.data import load_sets as load_dev_sets  # noqa: E402
from gatespec.ranking.train.memory_cv import (  # noqa: E402
    CENTRES,
    MIN_QUERIES,
    PROTOTYPES,
    WEIGHTS,
    MemoryEval,
    encode_queries,
)
from gatespec.ranking.vector_cache import VectorCache, content_key  # noqa: E402
from gatespec_surface.budgets import QUERY_MAX_CHARS  # noqa: E402

SYNTH_SIZE = 10_000
COLD_SAMPLE = 256  # tools encoded from an empty cache to measure a cold start's rate
GRID: dict[str, tuple[Any, ...]] = {
    "lexical_weight": (0.1, 0.2, 0.3, 0.4, 0.5),
    "feedback_weight": (0.0, 0.3, 0.5),
}
SOURCES = [
    "LiveMCPBench (icip-cas/LiveMCPBench, Apache-2.0): 527 MCP tools, 64 dev tasks",
    "github-mcp-server (github/github-mcp-server, MIT): 117 MCP tools",
    "Berkeley Function Calling Leaderboard v4 (ShishirPatil/gorilla, Apache-2.0): 1,852 "
    "deduplicated functions, 803 dev queries, 956 live dev queries",
    "MetaTool (HowieHwong/MetaTool, MIT): 199 plugin tools, 14,803 dev queries",
]


# --------------------------------------------------------------------------- data


# --------------------------------------------------------------------------- baseline

_NAIVE_RE = re.compile(r"[^\W_]+")


def naive_tokenize(text: str) -> list[str]:
    """Lowercase, split on anything that is not a letter or digit. No camelCase split, no
    stop words, no stemming; a CJK sentence stays one token."""
    return _NAIVE_RE.findall(text.lower())


class NaiveBm25:
    """Textbook BM25 (k1=1.2, b=0.75) over name + description + property descriptions as one
    bag of words (the issue's "plain BM25").

    Written independently of gatespec.ranking on purpose: it is the reference point."""

    def __init__(self, docs: Sequence[Document], k1: float = 1.2, b: float = 0.75) -> None:
        self.ids = [d.id for d in docs]
        toks = [
            naive_tokenize(d.name) + naive_tokenize(d.description) + naive_tokenize(d.field_text)
            for d in docs
        ]
        n = len(docs)
        avg = sum(map(len, toks)) / n if n else 0.0
        post: dict[str, list[tuple[int, int]]] = {}
        for i, t in enumerate(toks):
            counts: dict[str, int] = {}
            for w in t:
                counts[w] = counts.get(w, 0) + 1
            for w, c in counts.items():
                post.setdefault(w, []).append((i, c))
        self.post: dict[str, list[tuple[int, float]]] = {}
        for w, lst in post.items():
            idf = math.log(1 + (n - len(lst) + 0.5) / (len(lst) + 0.5))
            self.post[w] = [
                (i, idf * c * (k1 + 1) / (c + k1 * (1 - b + b * len(toks[i]) / avg)))
                for i, c in lst
            ]

    def search(self, query: str, k: int = 10) -> list[tuple[str, float]]:
        scores: dict[int, float] = {}
        for w in dict.fromkeys(naive_tokenize(query)):
            for i, s in self.post.get(w, ()):
                scores[i] = scores.get(i, 0.0) + s
        ranked = sorted((-round(s, 4), self.ids[i]) for i, s in scores.items())[:k]
        return [(doc_id, -neg) for neg, doc_id in ranked]


# --------------------------------------------------------------------------- scoring


def mean_metrics(rows: np.ndarray) -> dict[str, float]:
    """hit@1, hit@5, MRR, coverage@5 of per-query metric rows (what rank_cli.metrics gives)."""
    means = rows.mean(axis=0) if len(rows) else np.zeros(len(METRICS))
    return {
        "queries": len(rows),
        **{m: round(float(v), 4) for m, v in zip(METRICS, means, strict=True)},
    }


class Prepared:
    """One set with every query's BM25 scores and cosine similarities computed once, so each
    parameter choice only re-runs the fusion (gatespec.ranking.ranker.rank_scores), and each
    query's metrics under each choice are computed once (a fold is a mean over rows)."""

    def __init__(self, catalog: Sequence[Mapping[str, Any]], qs: Sequence[Mapping[str, Any]]):
        self.queries = list(qs)
        self.docs = catalog_docs(catalog)
        probe = Ranker(self.docs, background=False)
        if probe.semantic is None:
            raise SystemExit(f"semantic ranking unavailable: {probe.status}")
        self.ids = probe.lexical.ids
        texts = [q["query"][:QUERY_MAX_CHARS] for q in qs]  # cut as the ranker cuts
        self.lexical = [probe.lexical.scores(t) for t in texts]
        self.vectors = probe.semantic.vectors
        # With gatespec-ranker installed the encoder is LearnedQueries: queries both ways.
        encoder = probe.semantic.encoder
        base = encoder.tools if isinstance(encoder, LearnedQueries) else encoder
        self.query_vectors = encode_queries(base, texts)
        self.sims = self.query_vectors @ self.vectors.T
        # The learned tower trained on every other query: only the held-out fifth measures it
        # (and encoding only those keeps the run short).
        self.held_out = [i for i, q in enumerate(qs) if split_of(q["id"]) == HELD_OUT]
        self.sims_learned: np.ndarray | None = None
        if isinstance(encoder, LearnedQueries):
            self.sims_learned = np.full(self.sims.shape, np.nan, dtype=np.float32)
            held = [texts[i] for i in self.held_out]
            self.sims_learned[self.held_out] = (
                encode_queries(encoder.queries, held) @ self.vectors.T
            )
        self._held = set(self.held_out)
        self.naive = NaiveBm25(self.docs)
        self._rows: dict[Any, np.ndarray] = {}

    def ranked(
        self, params: FusionParams | None, i: int, k: int = 10, learned: bool = False
    ) -> list[str]:
        """Query i's top k: `params` fused (with the learned query vectors if `learned`), or
        lexical only when None."""
        sims = self.sims_learned if learned else self.sims
        assert sims is not None
        cosine = sims[i] if params is not None else None
        hits, _ = rank_scores(
            self.lexical[i], cosine, self.ids, params or DEFAULT_PARAMS, k, vectors=self.vectors
        )
        return [h for h, _ in hits]

    def rows(self, params: FusionParams | str | None, learned: bool = False) -> np.ndarray:
        """(queries, 4) metrics of every query: under `params`, lexical only (None), or the
        plain BM25 ("naive"); `learned`: the learned query tower's vectors."""
        got = self._rows.get((params, learned))
        if got is not None:
            return got
        out = np.zeros((len(self.queries), len(METRICS)))
        for i, q in enumerate(self.queries):
            if learned and i not in self._held:
                out[i] = np.nan  # never measured: the tower trained on it
                continue
            if params == "naive":
                ranked = [h for h, _ in self.naive.search(q["query"], 10)]
            else:
                p = params if isinstance(params, FusionParams) else None
                ranked = self.ranked(p, i, learned=learned)
            row = query_metrics(q, ranked)
            assert row is not None
            out[i] = row
        self._rows[(params, learned)] = out
        return out


def objective(means: Mapping[str, Mapping[str, float]]) -> float:
    """Mean hit@5 over the sets, with MCP coverage@5 as one more term (multi-step tasks)."""
    terms = [means[s]["hit@5"] for s in SETS] + [means["mcp"]["coverage@5"]]
    return sum(terms) / len(terms)


def grid(allowed: Mapping[str, tuple[Any, ...]] | None = None) -> list[FusionParams]:
    values = {**GRID, **(allowed or {})}
    keys = list(values)
    return [
        replace(DEFAULT_PARAMS, **dict(zip(keys, combo, strict=True)))
        for combo in itertools.product(*(values[k] for k in keys))
    ]


class Evaluation:
    """Every set's per-query metric rows for every parameter choice, and the splits."""

    def __init__(self, prep: Mapping[str, Prepared]) -> None:
        self.prep = prep
        self.splits = {s: np.array([split_of(q["id"]) for q in prep[s].queries]) for s in SETS}
        self.table = {p: {s: prep[s].rows(p) for s in SETS} for p in grid()}

    def idx(self, s: str, folds: Iterable[int]) -> np.ndarray:
        return np.flatnonzero(np.isin(self.splits[s], list(folds)))

    def means(self, rows: Mapping[str, np.ndarray], folds: Iterable[int]) -> dict[str, Any]:
        folds = list(folds)
        return {s: mean_metrics(rows[s][self.idx(s, folds)]) for s in SETS}

    def choose(self, folds: Iterable[int]) -> FusionParams:
        """The grid's best on `folds` (the first of equals)."""
        folds = list(folds)
        scored = [(objective(self.means(self.table[p], folds)), n) for n, p in enumerate(grid())]
        return grid()[max(scored, key=lambda t: (t[0], -t[1]))[1]]

    def rows(self, key: FusionParams | str | None, learned: bool = False) -> dict[str, np.ndarray]:
        return {s: self.prep[s].rows(key, learned) for s in SETS}

    def fixed(self, rows: Mapping[str, np.ndarray]) -> dict[str, Any]:
        """A ranker with nothing to choose: its fold spread and held-out figures."""
        per_fold = [{"test": self.means(rows, [fold])} for fold in range(FOLDS)]
        return {"spread": _spread(per_fold), "held_out": self.means(rows, [HELD_OUT])}

    def chosen(self) -> dict[str, Any]:
        """5-fold CV inside the dev four fifths, then the final choice on the held-out fifth."""
        dev = range(FOLDS)
        per_fold = []
        for fold in dev:
            params = self.choose([f for f in dev if f != fold])
            per_fold.append(
                {"params": _params(params), "test": self.means(self.table[params], [fold])}
            )
        final = self.choose(dev)
        return {
            "folds": per_fold,
            "spread": _spread(per_fold),
            "chosen": _params(final),
            "held_out": self.means(self.table[final], [HELD_OUT]),
        }


LEARNED = "gatespec hybrid, learned query tower (shipped)"
TRAINING_RECORD = ROOT / "ranker" / "gatespec_ranker" / "training.json"


def learned_training() -> dict[str, Any] | None:
    """The training run's record (choices, fold figures, verdict), None before any run."""
    if not TRAINING_RECORD.is_file():
        return None
    record: dict[str, Any] = json.loads(TRAINING_RECORD.read_text(encoding="utf-8"))
    return record


def cross_validate(prep: Mapping[str, Prepared]) -> dict[str, Any]:
    ev = Evaluation(prep)
    results = {
        "plain BM25": ev.fixed(ev.rows("naive")),
        "gatespec lexical only": ev.fixed(ev.rows(None)),
        "gatespec hybrid (weights chosen per fold)": ev.chosen(),
        "gatespec hybrid (shipped defaults)": {
            **ev.fixed(ev.rows(DEFAULT_PARAMS)),
            "chosen": _params(DEFAULT_PARAMS),
        },
    }
    learned = learned_training()
    if all(prep[s].sims_learned is not None for s in SETS) and learned is not None:
        params = replace(DEFAULT_PARAMS, lexical_weight=learned["choice"]["lexical_weight"])
        rows = ev.rows(params, learned=True)
        results[LEARNED] = {"held_out": ev.means(rows, [HELD_OUT]), "chosen": _params(params)}
    memory = tool_memory(prep)
    results[MEMORY] = {
        "held_out": memory["held_out"]["memory"],
        "chosen": {
            k: memory["choice"][k] for k in ("centre", "weight", "prototypes", "min_queries")
        },
    }
    return {
        "memory": memory,
        "grid": {k: list(v) for k, v in GRID.items()},
        "held_out_sizes": {s: int(len(ev.idx(s, [HELD_OUT]))) for s in SETS},
        "dev_sizes": {s: int(len(ev.idx(s, range(FOLDS)))) for s in SETS},
        "results": results,
        "whole_dev": {
            name: ev.means(ev.rows(key), range(FOLDS + 1))
            for name, key in (
                ("plain BM25", "naive"),
                ("gatespec lexical only", None),
                ("gatespec hybrid (shipped defaults)", DEFAULT_PARAMS),
            )
        },
    }


MEMORY = "gatespec hybrid + tool memory (chosen on the four fifths)"


def tool_memory(prep: Mapping[str, Prepared]) -> dict[str, Any]:
    """The tool memory (gatespec.ranking.memory) against today's defaults on the same queries:
    nested CV inside the four fifths, the held-out fifth (memory from all four), and the
    by-server / by-tool split (memory from one half's queries, scored on the other's)."""
    ev = MemoryEval(prep)
    nested = ev.nested(lambda msg: print("tool memory:", msg, flush=True))
    choice = ev.choose(list(range(FOLDS)))
    return {
        "choice": choice,
        "nested": nested,
        "held_out": ev.held_out(choice),
        "by_server": ev.by_server(choice),
    }


def _params(p: FusionParams) -> dict[str, Any]:
    return {k: v for k, v in asdict(p).items() if k in GRID}


def _spread(per_fold: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, list[float]]]:
    """set -> metric -> [min, mean, sd, max] over the folds' test scores."""
    out: dict[str, dict[str, list[float]]] = {}
    for s in SETS:
        out[s] = {}
        for m in METRICS:
            vals = [f["test"][s][m] for f in per_fold]
            out[s][m] = [
                round(min(vals), 3),
                round(statistics.mean(vals), 3),
                round(statistics.stdev(vals), 3),
                round(max(vals), 3),
            ]
    return out


# --------------------------------------------------------------------------- speed


def percentile(samples: Sequence[float], p: float) -> float:
    s = sorted(samples)
    if not s:
        return float("nan")
    idx = min(len(s) - 1, max(0, math.ceil(p / 100 * len(s)) - 1))
    return s[idx]


def synth_rows(base: Sequence[Mapping[str, Any]], size: int) -> list[dict[str, Any]]:
    """The catalog replicated under distinct namespaces until it has ``size`` tools."""
    out: list[dict[str, Any]] = []
    for rep in itertools.count():
        for r in base:
            if len(out) >= size:
                return out
            out.append({**r, "server": f"{r['server']}-r{rep}"})
    return out


def time_queries(ranker: Ranker, qs: Sequence[str], rounds: int) -> dict[str, float]:
    for q in qs:
        ranker.search_counted(q, 10)
    samples = []
    cpu0 = time.process_time()
    for _ in range(rounds):
        for q in qs:
            t0 = time.perf_counter_ns()
            ranker.search_counted(q, 10)
            samples.append((time.perf_counter_ns() - t0) / 1e6)
    return {
        "queries": len(qs),
        "samples": len(samples),
        "p50_ms": round(percentile(samples, 50), 3),
        "p99_ms": round(percentile(samples, 99), 3),
        "cpu_ms_per_query": round((time.process_time() - cpu0) * 1000 / len(samples), 3),
    }


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def child(args: argparse.Namespace) -> int:
    """Internal: one measurement in a fresh process (printed as JSON).

    lexical: the BM25 index at 10,000 tools. hybrid: the model's load, then the ranker with
    its semantic index from the cache (the user's; the first run ever fills it). cold: the
    model, a query, and COLD_SAMPLE tools encoded from an empty cache (the encoding rate of a
    first start, and the memory the model takes at each step)."""
    rows = synth_rows(load_json(args.data / "mcp_catalog.json"), SYNTH_SIZE)
    docs = catalog_docs(rows[:COLD_SAMPLE] if args.child == "cold" else rows)
    out: dict[str, Any] = {"tools": len(docs)}
    base = _rss_mb()
    if args.child == "lexical":
        t0 = time.perf_counter()
        Ranker(docs, semantic=False)
        out["build_s"] = round(time.perf_counter() - t0, 3)
        out["rss_added_mb"] = round(_rss_mb() - base, 1)
        print(json.dumps(out))
        return 0
    t0 = time.perf_counter()
    encoder, status = load_encoder()
    out["model_load_s"] = round(time.perf_counter() - t0, 3)
    out["rss_model_mb"] = round(_rss_mb() - base, 1)
    if encoder is None:
        raise SystemExit(status.detail)
    encoder.encode(["what time is it in Tokyo"], query=True)
    out["rss_model_after_a_query_mb"] = round(_rss_mb() - base, 1)
    cache = VectorCache()
    keys = [content_key(embedding_text(d)) for d in docs]
    out["cached_before"] = len(cache.get_many(encoder.model_id, keys))
    t0 = time.perf_counter()
    ranker = Ranker(docs, background=False)
    out["build_s"] = round(time.perf_counter() - t0, 3)
    out["rss_added_mb"] = round(_rss_mb() - base, 1)
    out["maxrss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    out["status"] = ranker.status
    if args.child == "cold":
        out["encode_ms_per_tool"] = round(out["build_s"] * 1000 / len(docs), 1)
    print(json.dumps(out))
    return 0


def _in_child(args: argparse.Namespace, mode: str, cache: str | None = None) -> dict[str, Any]:
    env = dict(os.environ)
    if cache is not None:
        env["GATESPEC_CACHE_DIR"] = cache
    proc = subprocess.run(
        [sys.executable, __file__, "--data", str(args.data), "--child", mode],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def speed(
    args: argparse.Namespace, mcp_queries: Sequence[str], bfcl_queries: Sequence[str]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    out["lexical_build"] = [_in_child(args, "lexical") for _ in range(3)]
    out["warm_build"] = [_in_child(args, "hybrid") for _ in range(3)]  # 1st ever run: cold
    with tempfile.TemporaryDirectory() as cache:
        out["cold"] = _in_child(args, "cold", cache)
    docs = catalog_docs(synth_rows(load_json(args.data / "mcp_catalog.json"), SYNTH_SIZE))
    lexical = Ranker(docs, semantic=False)
    hybrid = Ranker(docs, background=False)
    out["query"] = {}
    for name, qs in (("bfcl", bfcl_queries), ("mcp", mcp_queries)):
        out["query"][name] = {
            "lexical": time_queries(lexical, qs, args.rounds),
            "hybrid": time_queries(hybrid, qs, args.rounds),
        }
    return out


# --------------------------------------------------------------------------- report


def fmt_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], digits: int = 3) -> str:
    def cell(c: Any) -> str:
        return f"{c:.{digits}f}" if isinstance(c, float) else str(c)

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for r in rows:
        lines.append("| " + " | ".join(cell(c) for c in r) + " |")
    return "\n".join(lines)


def _metric_row(m: Mapping[str, float]) -> list[Any]:
    return [m["queries"], *(m[k] for k in METRICS)]


def _fold_cell(spread: Mapping[str, Sequence[float]], metric: str) -> str:
    lo, mean, sd, hi = spread[metric]
    return f"{mean:.3f} ± {sd:.3f} ({lo:.3f}–{hi:.3f})"


# Issue 13's targets: (set, metric, goal) on the held-out fifth and the fold means.
QUALITY_TARGETS = [
    ("mcp", "hit@5", 0.85),
    ("mcp", "coverage@5", 0.60),
    ("bfcl", "hit@5", 0.95),
    ("bfcl_live", "hit@5", 0.95),
    ("metatool", "hit@5", 0.85),
]
SPEED_TARGETS_MS = {"hybrid": 10.0, "lexical": 2.0}
WARM_BUILD_TARGET_S = 1.0


def targets(res: Mapping[str, Any]) -> list[str]:
    """Each target of issue 13 next to what this run measured, met or not, plain BM25 beside."""
    results = res["cv"]["results"]
    shipped = dict(results["gatespec hybrid (shipped defaults)"])
    mem = res["cv"].get("memory")
    with_memory = mem is not None and mem["choice"]["weight"] > 0
    if with_memory:  # the tool memory ships on: its held-out fifth and its nested-CV folds
        folds = [{"test": f["memory"]} for f in mem["nested"]["folds"]]
        shipped = {"held_out": mem["held_out"]["memory"], "spread": _spread(folds)}
    plain = results["plain BM25"]
    rows = []
    for s, metric, goal in QUALITY_TARGETS:
        held = shipped["held_out"][s][metric]
        _lo, mean, sd, _hi = shipped["spread"][s][metric]
        verdict = "met" if held >= goal and mean >= goal else "not met"
        rows.append(
            [
                f"{s} {metric} ≥ {goal}",
                plain["held_out"][s][metric],
                held,
                f"{mean:.3f} ± {sd:.3f}",
                verdict,
            ]
        )
    sp = res["speed"]
    for mode, goal in SPEED_TARGETS_MS.items():
        p50 = max(sp["query"][name][mode]["p50_ms"] for name in ("bfcl", "mcp"))
        verdict = "met" if p50 <= goal else "not met"
        rows.append(
            [f"query p50 ≤ {goal:g} ms at {SYNTH_SIZE:,} tools, {mode}", "", p50, "", verdict]
        )
    build = max(w["build_s"] for w in sp["warm_build"] if w["cached_before"] >= w["tools"])
    rows.append(
        [
            f"index build from a warm cache ≤ {WARM_BUILD_TARGET_S:g} s at {SYNTH_SIZE:,} tools",
            "",
            build,
            "",
            "met" if build <= WARM_BUILD_TARGET_S else "not met",
        ]
    )
    rss = sp["warm_build"][0]["rss_model_mb"]
    rows.append(["resident memory added by the model, stated", "", f"{rss} MB", "", "stated"])
    return [
        "## Targets (issue 13)",
        "",
        "Quality: the shipped defaults"
        + (" (with the tool memory: its nested-CV folds)" if with_memory else "")
        + " on the held-out fifth and their 5-fold mean ± sd; a "
        "target counts as met only when both reach it. Speed: the slower of the two query "
        "sets below; build: the slowest warm run.",
        "",
        fmt_table(
            ["target", "plain BM25, held-out", "gatespec", "gatespec, 5 folds", "verdict"], rows
        ),
        "",
    ]


def learned_section(res: Mapping[str, Any]) -> list[str]:
    """Base vs learned query tower: on the held-out fifth (this run) and on the training run's
    by-server / by-tool and ordinary folds (ranker/gatespec_ranker/training.json), plain BM25
    beside."""
    record = res.get("learned_training")
    out = ["## Learned query tower (issue 26)", ""]
    if record is None:
        return out + ["No training run recorded (`make train-ranker`).", ""]
    choice, verdict = record["choice"], record["verdict"]
    out += [
        "`python -m gatespec.ranking.train` fine-tunes the top layers of the query side of "
        "all-MiniLM-L6-v2 on the dev queries (never the held-out fifth); tools keep the "
        "shipped model's vectors. Everything it chose, it chose by cross-validation over two "
        "BY-SERVER / BY-TOOL folds (MCP split by server, the other sets by tool: validation "
        "tools never in training) and two ordinary folds (by query); it ships only if the "
        "by-server folds show no loss. "
        f"Choice: top {choice['layers']} layers, lr {choice['lr']}, {choice['steps']} steps, "
        f"lexical weight {choice['lexical_weight']}. By-server gate: "
        f"{'passed' if verdict['ships'] else 'failed'} ({verdict['why']}"
        + (f"; {verdict['nested']['why']}" if "nested" in verdict else "")
        + "). Installed only on "
        "request (gatespec[learned]): on the held-out fifth below it loses MCP tasks and BFCL "
        "queries.",
        "",
        "By-server / by-tool folds and ordinary folds (hit@5; MCP coverage@5 in brackets; "
        "base = step 0 at the shipped fusion weight; validation samples of "
        f"{record['grid']['val_cap']} queries per set and fold):",
        "",
    ]
    base_key = f"{choice['layers']}:{choice['lr']}:0:{DEFAULT_PARAMS.lexical_weight}"
    table = record["table"]
    rows = []
    for kind in ("by-tool", "ordinary"):
        base, learned = table[base_key][kind], table[choice["name"]][kind]
        for name, fig in (("base model", base), ("learned query tower", learned)):
            rows.append(
                [
                    kind,
                    name,
                    *(fig[s]["hit@5"] for s in SETS),
                    f"{fig['mcp']['coverage@5']:.3f}",
                    fig["objective"],
                ]
            )
    out.append(fmt_table(["folds", "query tower", *SETS, "mcp cov@5", "objective"], rows))
    results = res["cv"]["results"]
    if LEARNED in results:
        out += ["", "Held-out fifth (this run; never trained or tuned on):", ""]
        rows = []
        for name in ("plain BM25", "gatespec hybrid (shipped defaults)", LEARNED):
            held = results[name]["held_out"]
            rows.append([name, *(held[s]["hit@5"] for s in SETS), held["mcp"]["coverage@5"]])
        out.append(fmt_table(["ranker (hit@5)", *SETS, "mcp cov@5"], rows))
    return [*out, ""]


def memory_section(res: Mapping[str, Any]) -> list[str]:
    """The tool memory against today's defaults: nested CV, held-out fifth, by-server."""
    mem = res["cv"].get("memory")
    if mem is None:
        return []
    choice = mem["choice"]
    plain = res["cv"]["results"]["plain BM25"]["held_out"]
    out = [
        "## Tool memory (issue 26)",
        "",
        "For every tool enough dev queries asked for, the shipped model's vectors of those queries "
        "(a centroid or a few k-means prototypes), keyed by a hash of the tool's name and "
        "description (gatespec.ranking.memory). A catalog tool found in memory gets weight × "
        "(best cosine of the query to its prototypes − centre) added to its fused score; every "
        "other tool scores exactly as without it. Centre, weight and prototypes are chosen by "
        "5-fold CV among the settings that lose nothing (no set's hit@5 nor MCP coverage@5 "
        "lower), neither in that CV nor on the by-server / by-tool split of the same folds "
        f"(grid: centre {list(CENTRES)}, weight {list(WEIGHTS)}, prototypes "
        f"{list(PROTOTYPES)}, a tool remembered from {list(MIN_QUERIES)} dev queries on). "
        f"Choice on the four fifths: centre {choice['centre']}, weight {choice['weight']}, "
        f"{choice['prototypes']} prototypes, tools with {choice['min_queries']} queries or more "
        "(weight 0: no setting qualified, no memory). It helps only tools that "
        "appeared in the dev catalogs: on the by-server split the gold tools are never in "
        "memory, so any gain there comes from known tools moved down, not from unseen ones "
        "moved up.",
        "",
        "Nested CV: in each outer fold the memory is built from, and its setting chosen on, the "
        "other four folds only. Held-out fifth: memory from all four fifths (as shipped). "
        "By-server / by-tool: memory from the queries of one half of the tools, scored on the "
        "queries of the other half, both halves pooled. Plain BM25: held-out fifth.",
        "",
    ]
    rows = []
    for split, key in (
        ("nested CV", "nested"),
        ("held-out fifth", "held_out"),
        ("by-server / by-tool", "by_server"),
    ):
        for name, fig in (
            ("today's defaults", mem[key]["base"]),
            ("+ tool memory", mem[key]["memory"]),
        ):
            rows.append(
                [
                    split,
                    name,
                    *(fig[s]["hit@5"] for s in SETS),
                    fig["mcp"]["coverage@5"],
                    fig["objective"],
                ]
            )
    rows.append(
        [
            "held-out fifth",
            "plain BM25",
            *(plain[s]["hit@5"] for s in SETS),
            plain["mcp"]["coverage@5"],
            "",
        ]
    )
    out.append(fmt_table(["split", "ranker (hit@5)", *SETS, "mcp cov@5", "objective"], rows))
    out += [
        "",
        "Choices per outer fold: "
        + "; ".join(
            "{centre}/{weight}/{prototypes}/{min_queries}".format(**f["choice"])
            for f in mem["nested"]["folds"]
        )
        + " (centre/weight/prototypes/minimum queries).",
        "",
    ]
    return out


CANDIDATES_RECORD = ROOT / "bench" / "results" / "retrieval_candidates.json"


def candidates_section() -> list[str]:
    """The nested cross-validation of changes to the default ranker (dev queries only;
    bench/retrieval_candidates.py at commit a77722d), when its record is present."""
    if not CANDIDATES_RECORD.is_file():
        return []
    record = json.loads(CANDIDATES_RECORD.read_text(encoding="utf-8"))
    out = [
        "## Candidates for the default ranker (issue 26; dev queries only)",
        "",
        "`python bench/retrieval_candidates.py` at commit a77722d (the candidates' code was "
        "removed after: none shipped; it never reads the held-out fifth; dev queries "
        f"{record['dev_queries']}): each family's grid chosen by NESTED 5-fold cross-validation "
        "(each fold scored with the choice of the other four) and on the by-server / by-tool "
        "split (chosen on the queries whose gold tools lie in one half, scored on the other "
        "half), against today's defaults on the same queries. Gain: objective (mean hit@5 "
        "over the sets plus MCP coverage@5); worst: the largest loss of any set's hit@5 or "
        "coverage@5 on either split. A candidate ships only if both gains are positive and "
        "no set loses more than 0.01.",
        "",
    ]
    rows = []
    for r in record["results"]:
        nested = r["nested"]["delta"]["mcp"]
        rows.append(
            [
                r["candidate"],
                f"{r['gain']['nested']:+.4f}",
                f"{r['gain']['by_server']:+.4f}",
                f"{nested['hit@5']:+.4f} / {nested['coverage@5']:+.4f}",
                f"{r['worst_set_delta']:+.4f}",
                "yes" if r["ships"] else "no",
                f"`{json.dumps(r['final_choice'])}`",
            ]
        )
    headers = ["candidate", "nested gain", "by-server gain", "MCP hit@5 / cov@5 (nested)"]
    headers += ["worst", "ships", "choice on all dev folds"]
    out.append(fmt_table(headers, rows))
    return [*out, ""]


def markdown(res: Mapping[str, Any]) -> str:
    cv = res["cv"]
    results = cv["results"]
    meta = res["meta"]
    out = [
        "# Tool retrieval benchmark (gatespec.ranking)",
        "",
        f"Generated by `{meta['command']}` on {meta['date']} (Python {meta['python']}, "
        f"{meta['cpus']} CPUs, load average {meta['loadavg_start']} at start, "
        f"{meta['loadavg_end']} at end; {meta['elapsed_s']:.0f} s).",
        "",
        "hit@k: a gold tool in the top k. MRR: reciprocal rank of the first gold tool. "
        "coverage@5: share of a task's steps with a gold tool in the top 5 (single-tool sets: "
        "each gold tool is a step). Ranker: BM25F (Snowball stems; name, namespace, "
        "description, property names and descriptions) fused with all-MiniLM-L6-v2 (int8 "
        "ONNX, onnxruntime), then pseudo-relevance feedback on the embeddings (other models "
        "on PyPI: retrieval_models.md). Plain BM25: textbook BM25 (k1 1.2, b 0.75) over name + "
        "description + property descriptions, split on non-alphanumerics, measured in this run.",
        "",
        "## Held-out fifth (never used to choose anything)",
        "",
        f"Held-out queries per set: {cv['held_out_sizes']}; the other four fifths "
        f"({cv['dev_sizes']}) choose the lexical weight from {GRID['lexical_weight']} and the "
        f"feedback weight (the query moved towards its best {DEFAULT_PARAMS.feedback_tools} "
        f"tools; 0: off) from {GRID['feedback_weight']}. "
        "MCP has 64 tasks in all, so its held-out fifth is a dozen tasks (one task moves "
        "hit@5 by ~0.08): read it with the fold spread below.",
        "",
    ]
    rows = []
    for s in SETS:
        for name, r in results.items():
            rows.append([s, name, *_metric_row(r["held_out"][s])])
    out.append(fmt_table(["set", "ranker", "queries", *METRICS], rows))
    out += ["", "Choices (made on the four fifths):", ""]
    for name, r in results.items():
        if "chosen" in r:
            out.append(f"- {name}: `{r['chosen']}`")
    out += [
        "",
        "## 5-fold cross-validation inside the four fifths",
        "",
        "Each fold's parameters are chosen on the other four folds and scored on it: mean ± "
        "standard deviation (min–max) over the 5 folds.",
        "",
    ]
    rows = []
    for s in SETS:
        for name, r in results.items():
            if "spread" in r:  # the learned tower has none: it trained on these folds
                rows.append([s, name, *(_fold_cell(r["spread"][s], m) for m in METRICS)])
    out.append(fmt_table(["set", "ranker", *METRICS], rows))
    out += ["", "Choices per fold:", ""]
    for name, r in results.items():
        if "folds" in r:
            out.append(f"- {name}: " + "; ".join(json.dumps(f["params"]) for f in r["folds"]))
    out += ["", "## Whole dev sets", ""]
    rows = []
    for s in SETS:
        for name, m in cv["whole_dev"].items():
            rows.append([s, name, *_metric_row(m[s])])
        name = "shipped defaults, `gatespec rank`"
        if res.get("rank_cli_learned"):
            name = "`gatespec rank` with the learned query tower installed, held-out fifth"
        elif res.get("rank_cli_memory"):
            name = "`gatespec rank` with the shipped tool memory, held-out fifth"
        rows.append([s, name, *_metric_row(res["rank_cli"][s])])
    out.append(fmt_table(["set", "ranker", "queries", *METRICS], rows))
    out += [
        "",
        "`gatespec rank` runs the Browser exactly as tool_browse(query) (MetaTool: its held-out "
        "fifth only); the bench path fuses the same scores with query vectors encoded in "
        "batches, which differ from one-at-a-time encoding only by float rounding. Every "
        "parameter was chosen on these queries (held-out fifth excepted), so the held-out and "
        "per-fold figures are the ones to trust.",
        "",
    ]
    sp = res["speed"]
    q = sp["query"]
    warm = sp["warm_build"]
    cold = sp["cold"]

    def pq(row: Mapping[str, float]) -> str:
        return f"{row['p50_ms']} / {row['p99_ms']} ({row['cpu_ms_per_query']} ms CPU)"

    out += learned_section(res)
    out += memory_section(res)
    out += candidates_section()
    out += targets(res)
    out += [
        f"## Speed at {SYNTH_SIZE:,} tools",
        "",
        "The MCP catalog replicated under distinct namespaces. Builds in fresh processes; "
        "queries in this process, k = 10."
        + (
            f" Measured by the run of {res['speed_from']} (this one ran with --skip-speed)."
            if res.get("speed_from")
            else ""
        ),
        "",
        fmt_table(
            ["measure", "value"],
            [
                ["query p50 / p99 ms, lexical, BFCL queries", pq(q["bfcl"]["lexical"])],
                ["query p50 / p99 ms, lexical, MCP tasks", pq(q["mcp"]["lexical"])],
                ["query p50 / p99 ms, hybrid, BFCL queries", pq(q["bfcl"]["hybrid"])],
                ["query p50 / p99 ms, hybrid, MCP tasks", pq(q["mcp"]["hybrid"])],
                [
                    "lexical index build s (3 runs)",
                    ", ".join(str(w["build_s"]) for w in sp["lexical_build"]),
                ],
                [
                    "hybrid index build s from a warm cache: BM25 + vectors (3 runs)",
                    ", ".join(
                        f"{w['build_s']}"
                        + (" (cold: filled the cache)" if w["cached_before"] < w["tools"] else "")
                        for w in warm
                    ),
                ],
                ["model load s (3 runs)", ", ".join(str(w["model_load_s"]) for w in warm)],
                [
                    f"cold start: encoding ms per tool ({cold['tools']} tools, empty cache)",
                    f"{cold['encode_ms_per_tool']} (so ~{cold['encode_ms_per_tool'] * SYNTH_SIZE / 60000:.0f} min for {SYNTH_SIZE:,} tools, in the background)",
                ],
                ["RSS added MB: lexical index", sp["lexical_build"][0]["rss_added_mb"]],
                ["RSS added MB: the model, loaded", warm[0]["rss_model_mb"]],
                ["RSS added MB: the model after a query", warm[0]["rss_model_after_a_query_mb"]],
                ["RSS added MB: model + hybrid index (warm)", warm[0]["rss_added_mb"]],
                [
                    f"RSS added MB: model + encoding {cold['tools']} tools (cold)",
                    cold["rss_added_mb"],
                ],
            ],
        ),
        "",
        "## Data sources and licences",
        "",
    ]
    out += [f"- {s}." for s in SOURCES]
    out.append("")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--out", type=Path, default=ROOT / "bench/results/retrieval.json")
    ap.add_argument("--md", type=Path, default=None, help="default: --out with .md suffix")
    ap.add_argument("--rounds", type=int, default=3, help="timing rounds over each query set")
    ap.add_argument("--skip-speed", action="store_true", help="quality only")
    ap.add_argument("--render", action="store_true", help="only rewrite the .md from --out")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args)
    if args.render:
        res = json.loads(args.out.read_text(encoding="utf-8"))
        (args.md or args.out.with_suffix(".md")).write_text(markdown(res), encoding="utf-8")
        return 0

    started = time.monotonic()
    loadavg_start = round(os.getloadavg()[0], 2)
    sets = {k: (v.catalog, v.queries) for k, v in load_dev_sets(args.data).items()}
    prep: dict[str, Prepared] = {}
    rank_cli: dict[str, Any] = {}
    learned_on = learned_artifact() is not None and not learned_switched_off()
    # The shipped tool memory was built from the dev queries: only the held-out fifth measures
    # `gatespec rank` with it.
    memory_on = MEMORY_FILE.is_file() and not memory_switched_off()
    for s in SETS:
        catalog, qs = sets[s]
        prep[s] = Prepared(catalog, qs)
        # The held-out fifth: MetaTool's ~3,000 queries keep the run short; with the learned
        # tower installed, every set's (it trained on the rest).
        if s == "metatool" or learned_on or memory_on:
            qs = [q for q in qs if split_of(q["id"]) == HELD_OUT]
        results, status = rank(catalog, qs, 10)
        rank_cli[s] = rank_metrics(qs, results)
        print(s, status, json.dumps(rank_cli[s]), f"{time.monotonic() - started:.0f} s", flush=True)
    cv = cross_validate(prep)
    print(f"cross-validation done, {time.monotonic() - started:.0f} s", flush=True)
    if args.skip_speed:  # the last measured speed, from the file this run replaces
        previous = json.loads(args.out.read_text(encoding="utf-8")) if args.out.is_file() else {}
        perf = previous.get("speed", {})
        speed_from = previous.get("speed_from") or previous.get("meta", {}).get("date")
    else:
        perf = speed(
            args, [q["query"] for q in sets["mcp"][1]], [q["query"] for q in sets["bfcl"][1]]
        )
        speed_from = None
    md_path = args.md or args.out.with_suffix(".md")
    result = {
        "meta": {
            "command": " ".join(
                ["python bench/retrieval.py", *(sys.argv[1:] if argv is None else argv)]
            ),
            "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "loadavg_start": loadavg_start,
            "loadavg_end": round(os.getloadavg()[0], 2),
            "elapsed_s": round(time.monotonic() - started, 1),
        },
        "defaults": asdict(DEFAULT_PARAMS),
        "rank_cli": rank_cli,
        "rank_cli_learned": learned_on,
        "rank_cli_memory": memory_on,
        "cv": cv,
        "speed": perf,
        "speed_from": speed_from,
        "learned_training": learned_training(),
        "sources": SOURCES,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if perf:
        md_path.write_text(markdown(result), encoding="utf-8")
    print(f"wrote {args.out}" + (f" and {md_path}" if perf else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
