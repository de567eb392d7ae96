"""Candidates for the default ranker, chosen by NESTED cross-validation on the dev data only.

    nice python bench/retrieval_candidates.py --out bench/results/retrieval_candidates.json

Never reads the held-out fifth (gatespec.ranking.train.data.split_of == HELD_OUT): those
queries are dropped before anything is computed. Each candidate family has a grid:

* fusion: the BM25 / embedding weight and the pseudo-relevance feedback weight;
* fields: the BM25F field weights (name, namespace, description, property text);
* decompose: query decomposition (sentences or clauses, ranked one by one and fused with the
  whole query by max-score or reciprocal rank fusion);
* server: a tool lifted by its best server-mate's score (fusion.server_boost);
* all: the four chosen in turn (fields, fusion, decompose, server) inside each fold.

Nested CV: for each of the 5 dev folds, the grid's best on the other four (objective: mean
hit@5 over the sets plus MCP coverage@5) is scored on it; the base (today's defaults) is
scored on the same folds. By-server / by-tool split (gatespec.ranking.train.data.half_of):
chosen on the queries whose gold tools all lie in one half, scored on those whose gold tools
all lie in the other, both ways. A candidate ships only if both splits gain on the objective
and no set loses more than GATE_SLACK hit@5 or coverage@5 on either.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from retrieval import encode_queries  # noqa: E402  (the bench's cached query vectors)

from gatespec.rank_cli import METRICS, query_metrics  # noqa: E402
from gatespec.ranking import DEFAULT_FIELD_WEIGHTS, DEFAULT_PARAMS, Bm25Index, Ranker  # noqa: E402
from gatespec.ranking.decompose import parts as query_parts  # noqa: E402
from gatespec.ranking.fusion import FusionParams  # noqa: E402
from gatespec.ranking.ranker import rank_scores  # noqa: E402
from gatespec.ranking.train.data import (  # noqa: E402
    DEFAULT_DATA,
    FOLDS,
    HELD_OUT,
    SETS,
    catalog_docs,
    half_of,
    load_sets,
    split_of,
)
from gatespec_surface.budgets import QUERY_MAX_CHARS  # noqa: E402

GATE_SLACK = 0.01  # a set may lose at most this much hit@5 / coverage@5 on a split
METATOOL_SAMPLE = 4  # every 4th MetaTool dev query (by id hash): ~3,000, keeps the run short

FIELD_GRID: list[dict[str, float]] = [
    dict(DEFAULT_FIELD_WEIGHTS),
    *(
        {**DEFAULT_FIELD_WEIGHTS, "name": n, "namespace": ns, "field_text": ft}
        for n, ns, ft in itertools.product((1.0, 2.0, 3.0), (0.0, 0.5, 1.0, 2.0), (0.3, 0.6))
        if (n, ns, ft) != (2.0, 1.0, 0.3)
    ),
]
FUSION_GRID = [
    {"lexical_weight": lw, "feedback_weight": fb}
    for lw, fb in itertools.product((0.1, 0.15, 0.2, 0.25, 0.3, 0.4), (0.0, 0.3, 0.5))
]
DECOMPOSE_GRID = [
    {"split": "none"},
    *(
        {"split": lv, "split_min_parts": m, "part_fusion": "max", "part_weight": w}
        for lv, m, w in itertools.product(
            ("sentences", "clauses"), (2, 3), (0.6, 0.7, 0.8, 0.9, 1.0)
        )
    ),
    *(
        {"split": lv, "split_min_parts": m, "part_fusion": "rrf", "part_weight": w}
        for lv, m, w in itertools.product(("sentences", "clauses"), (2, 3), (0.1, 0.25, 0.5, 1.0))
    ),
]


@dataclass(frozen=True)
class Config:
    """One ranker: BM25F field weights (as a sorted tuple) and fusion parameters."""

    fields: tuple[tuple[str, float], ...]
    params: FusionParams

    @classmethod
    def of(cls, fields: Mapping[str, float], params: FusionParams) -> Config:
        return cls(tuple(sorted(fields.items())), params)

    def describe(self) -> dict[str, Any]:
        changed = {k: v for k, v in self.fields if DEFAULT_FIELD_WEIGHTS[k] != v}
        params = {k: v for k, v in asdict(self.params).items() if getattr(DEFAULT_PARAMS, k) != v}
        return {"fields": changed, "params": params}


BASE = Config.of(DEFAULT_FIELD_WEIGHTS, DEFAULT_PARAMS)


@dataclass
class SetData:
    """One set's dev queries with every cosine precomputed (whole query and each part)."""

    name: str
    queries: list[dict[str, Any]]
    docs: list[Any]
    vectors: np.ndarray
    sims: np.ndarray  # (queries, tools)
    part_texts: dict[str, list[list[str]]]  # level -> per query, its parts (unfiltered)
    part_sims: dict[str, list[np.ndarray]]  # level -> per query, (parts, tools)
    lexical: dict[Any, list[np.ndarray]] = field(default_factory=dict)  # fields -> per query
    part_lexical: dict[Any, dict[str, list[list[np.ndarray]]]] = field(default_factory=dict)


def _sample(name: str, q: Mapping[str, Any]) -> bool:
    if name != "metatool":
        return True
    return hashlib.sha256(f"sample:{q['id']}".encode()).digest()[0] % METATOOL_SAMPLE == 0


def prepare(data: Path) -> dict[str, SetData]:
    out = {}
    for name, dev in load_sets(data).items():
        qs = [q for q in dev.queries if split_of(q["id"]) != HELD_OUT and _sample(name, q)]
        docs = catalog_docs(dev.catalog)
        ranker = Ranker(docs, background=False)
        assert ranker.semantic is not None, ranker.status
        vectors = ranker.semantic.vectors
        encoder = ranker.semantic.encoder
        texts = [q["query"][:QUERY_MAX_CHARS] for q in qs]
        sims = encode_queries(encoder, texts) @ vectors.T
        part_texts: dict[str, list[list[str]]] = {}
        part_sims: dict[str, list[np.ndarray]] = {}
        for level in ("sentences", "clauses"):
            per = [query_parts(t, level, 2) for t in texts]
            flat = [p for ps in per for p in ps]
            flat_sims = encode_queries(encoder, flat) @ vectors.T if flat else None
            part_texts[level], part_sims[level] = per, []
            at = 0
            for ps in per:
                part_sims[level].append(
                    flat_sims[at : at + len(ps)] if ps and flat_sims is not None else np.zeros((0,))
                )
                at += len(ps)
        out[name] = SetData(name, qs, docs, vectors, sims, part_texts, part_sims)
        print(name, len(qs), "queries prepared", flush=True)
    return out


class Evaluator:
    def __init__(self, sets: Mapping[str, SetData]) -> None:
        self.sets = sets
        self.cache: dict[Config, dict[str, np.ndarray]] = {}
        self.folds = {s: np.array([split_of(q["id"]) for q in d.queries]) for s, d in sets.items()}
        self.halves = {
            s: [{half_of(s, g) for g in q["gold"]} for q in d.queries] for s, d in sets.items()
        }

    def _lexical(self, d: SetData, fields: tuple[tuple[str, float], ...]) -> None:
        if fields in d.lexical:
            return
        index = Bm25Index(d.docs, field_weights=dict(fields))
        texts = [q["query"][:QUERY_MAX_CHARS] for q in d.queries]
        d.lexical[fields] = [index.scores(t) for t in texts]
        d.part_lexical[fields] = {
            level: [[index.scores(p) for p in ps] for ps in per]
            for level, per in d.part_texts.items()
        }

    def rows(self, cfg: Config) -> dict[str, np.ndarray]:
        """(queries, metrics) per set under `cfg`."""
        got = self.cache.get(cfg)
        if got is not None:
            return got
        out = {}
        p = cfg.params
        for s, d in self.sets.items():
            self._lexical(d, cfg.fields)
            lex = d.lexical[cfg.fields]
            ids = tuple(doc.id for doc in d.docs)
            groups = np.unique([doc.namespace for doc in d.docs], return_inverse=True)[1]
            rows = np.zeros((len(d.queries), len(METRICS)))
            for i, q in enumerate(d.queries):
                parts: list[tuple[np.ndarray, np.ndarray | None]] = []
                if p.split != "none":
                    texts = d.part_texts[p.split][i]
                    if len(texts) >= p.split_min_parts:
                        plex = d.part_lexical[cfg.fields][p.split][i]
                        psims = d.part_sims[p.split][i]
                        parts = [(plex[n], psims[n]) for n in range(len(texts))]
                hits, _ = rank_scores(lex[i], d.sims[i], ids, p, 10, None, d.vectors, parts, groups)
                row = query_metrics(q, [h for h, _ in hits])
                assert row is not None
                rows[i] = row
            out[s] = rows
        self.cache[cfg] = out
        return out

    # ----------------------------------------------------------------- selections

    def fold_sel(self, folds: Iterable[int]) -> dict[str, np.ndarray]:
        folds = list(folds)
        return {s: np.isin(self.folds[s], folds) for s in self.sets}

    def half_sel(self, half: int) -> dict[str, np.ndarray]:
        """The queries whose gold tools all lie in `half`."""
        return {s: np.array([h == {half} for h in self.halves[s]]) for s in self.sets}

    def means(self, cfg: Config, sel: Mapping[str, np.ndarray]) -> dict[str, dict[str, float]]:
        rows = self.rows(cfg)
        return {
            s: dict(zip(METRICS, rows[s][sel[s]].mean(axis=0).round(4).tolist(), strict=True))
            for s in self.sets
        }


def objective(m: Mapping[str, Mapping[str, float]]) -> float:
    terms = [m[s]["hit@5"] for s in SETS] + [m["mcp"]["coverage@5"]]
    return sum(terms) / len(terms)


Chooser = Callable[[Evaluator, Mapping[str, np.ndarray]], Config]


def best_of(ev: Evaluator, sel: Mapping[str, np.ndarray], cfgs: Sequence[Config]) -> Config:
    """The config with the highest objective on `sel` (the first of equals: grids list the
    base first)."""
    scored = [(objective(ev.means(c, sel)), -n) for n, c in enumerate(cfgs)]
    return cfgs[-max(scored)[1]]


def family(grid: Sequence[Mapping[str, Any]], kind: str) -> Chooser:
    def choose(ev: Evaluator, sel: Mapping[str, np.ndarray], start: Config = BASE) -> Config:
        if kind == "fields":
            cfgs = [Config.of(f, start.params) for f in grid]
        else:
            cfgs = [replace(start, params=replace(start.params, **g)) for g in grid]
        return best_of(ev, sel, cfgs)

    return choose


def staged(ev: Evaluator, sel: Mapping[str, np.ndarray]) -> Config:
    """Field weights, then fusion weights, then decomposition, each on the same data."""
    cfg = family(FIELD_GRID, "fields")(ev, sel)
    cfg = family(FUSION_GRID, "params")(ev, sel, cfg)  # type: ignore[call-arg]
    cfg = family(DECOMPOSE_GRID, "params")(ev, sel, cfg)  # type: ignore[call-arg]
    return family(SERVER_GRID, "params")(ev, sel, cfg)  # type: ignore[call-arg]


SERVER_GRID = [{"server_weight": w} for w in (0.0, 0.1, 0.2, 0.3, 0.5)]

CANDIDATES: dict[str, Chooser] = {
    "server": family(SERVER_GRID, "params"),
    "fusion": family(FUSION_GRID, "params"),
    "fields": family(FIELD_GRID, "fields"),
    "decompose": family(DECOMPOSE_GRID, "params"),
    "all": staged,
}


def delta(a: Mapping[str, Mapping[str, float]], b: Mapping[str, Mapping[str, float]]) -> dict:
    return {s: {m: round(a[s][m] - b[s][m], 4) for m in ("hit@5", "coverage@5")} for s in SETS}


def mean_over(figs: Sequence[Mapping[str, Mapping[str, float]]]) -> dict[str, dict[str, float]]:
    return {
        s: {m: round(float(np.mean([f[s][m] for f in figs])), 4) for m in METRICS} for s in SETS
    }


def evaluate(ev: Evaluator, name: str, choose: Chooser) -> dict[str, Any]:
    """Nested CV and the by-server split for one candidate family."""
    folds, test_c, test_b = [], [], []
    for fold in range(FOLDS):
        cfg = choose(ev, ev.fold_sel(f for f in range(FOLDS) if f != fold))
        sel = ev.fold_sel([fold])
        c, b = ev.means(cfg, sel), ev.means(BASE, sel)
        test_c.append(c)
        test_b.append(b)
        folds.append({"choice": cfg.describe(), "objective": [objective(b), objective(c)]})
    nested_c, nested_b = mean_over(test_c), mean_over(test_b)
    halves = []
    by_c, by_b = [], []
    for half in (0, 1):
        cfg = choose(ev, ev.half_sel(1 - half))
        sel = ev.half_sel(half)
        c, b = ev.means(cfg, sel), ev.means(BASE, sel)
        by_c.append(c)
        by_b.append(b)
        halves.append({"choice": cfg.describe(), "objective": [objective(b), objective(c)]})
    server_c, server_b = mean_over(by_c), mean_over(by_b)
    final = choose(ev, ev.fold_sel(range(FOLDS)))
    d_nested, d_server = delta(nested_c, nested_b), delta(server_c, server_b)
    worst = min(v for d in (d_nested, d_server) for s in d.values() for v in s.values())
    gain_nested = objective(nested_c) - objective(nested_b)
    gain_server = objective(server_c) - objective(server_b)
    ships = gain_nested > 0 and gain_server > 0 and worst >= -GATE_SLACK
    return {
        "candidate": name,
        "nested": {"base": nested_b, "candidate": nested_c, "delta": d_nested, "folds": folds},
        "by_server": {"base": server_b, "candidate": server_c, "delta": d_server, "halves": halves},
        "gain": {"nested": round(gain_nested, 4), "by_server": round(gain_server, 4)},
        "worst_set_delta": worst,
        "final_choice": final.describe(),
        "ships": ships,
    }


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--out", type=Path, default=ROOT / "bench/results/retrieval_candidates.json")
    ap.add_argument("--only", nargs="*", default=list(CANDIDATES))
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    ev = Evaluator(prepare(args.data))
    results = []
    for name in args.only:
        res = evaluate(ev, name, CANDIDATES[name])
        results.append(res)
        print(
            json.dumps(
                {
                    k: res[k]
                    for k in ("candidate", "gain", "worst_set_delta", "ships", "final_choice")
                }
            ),
            f"{time.monotonic() - t0:.0f} s",
            flush=True,
        )
        sizes = {s: len(d.queries) for s, d in ev.sets.items()}
        args.out.write_text(
            json.dumps({"dev_queries": sizes, "results": results}, indent=2) + "\n",
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
