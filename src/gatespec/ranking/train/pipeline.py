"""Cross-validation, the final fit and the artifact: what `python -m gatespec.ranking.train` runs.

1. Every dev set's catalog gets gatespec's own BM25 index and the shipped model's tool
   vectors (gatespec's embedding cache: only a first run encodes). Queries of the
   benchmark's held-out fifth are dropped before anything else (data.trainable).
2. Folds: two BY-TOOL folds (data.by_tool_folds: MCP split by server, the others by tool;
   validation tools never in training) and two ordinary folds (by query). For each recipe of
   the grid (layers trained x learning rate) one run per fold, scored at checkpoints (the
   step count is chosen among them; step 0 is the base model), each checkpoint under each
   fusion weight of the grid, on the fold's validation queries through gatespec's own
   fusion (ranker.rank_scores) and metrics (rank_cli.query_metrics).
3. The choice: the (recipe, steps, lexical weight) with the best mean objective over all
   four folds. The verdict: the learned query tower ships only if, on the by-tool folds, it
   does no worse than the base model (objective, and no set's hit@5 down by more than
   :data:`TOLERANCE`) -- issue 26 item 4. The confidence rule is that gate: all or nothing.
4. The final fit on all trainable queries with the chosen recipe, exported as int8 weights
   (gatespec.ranking.learned reads them), checked against the torch model, and written with
   the choices and every fold's figures beside it.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from gatespec.ranking.train.card import model_card
from gatespec.ranking.train.data import (
    SETS,
    DevSet,
    by_tool_folds,
    catalog_docs,
    load_sets,
    ordinary_folds,
    trainable,
)
from gatespec.ranking.train.negatives import candidates
from gatespec.ranking.train.trainer import Example, Recipe

__all__ = ["Grid", "regate", "run"]

TOLERANCE = (
    0.01  # a set's by-tool hit@5 may not drop by more than this for the learned part to ship
)
HARD_NEGATIVES = 8
EASY_NEGATIVES = 24


@dataclass(frozen=True)
class Grid:
    """What cross-validation chooses among. The defaults fit the budget (<= 30 min on 2
    cores, shared with other work): one recipe x 4 folds of 12 steps, scored at steps 0, 6
    and 12; a wider grid (--layers 2 6 --lrs ...) costs a run per value and fold."""

    layers: tuple[int, ...] = (6,)
    lrs: tuple[float, ...] = (1e-4,)
    steps: int = 12
    every: int = 6  # checkpoint interval: the step counts chosen among
    lexical_weights: tuple[float, ...] = (0.1, 0.2, 0.3)
    val_cap: int = 80  # validation queries per set and fold (a reproducible sample)
    train_cap: int = 0  # training queries per set (0: all); --quick sets it


def _log(msg: str) -> None:
    print(f"[train {time.strftime('%H:%M:%S')}] {msg}", flush=True)


class Catalogs:
    """Per catalog: gatespec's BM25 index and the shipped model's unit tool vectors."""

    def __init__(self, sets: Mapping[str, DevSet]) -> None:
        from gatespec.ranking.ranker import Ranker

        self.index: dict[str, Any] = {}
        self.vectors: dict[str, Any] = {}
        self.key: dict[str, str] = {}
        for name, s in sets.items():
            key = hashlib.sha256(json.dumps(s.catalog, sort_keys=True).encode()).hexdigest()[:12]
            self.key[name] = key
            if key in self.index:
                continue
            ranker = Ranker(catalog_docs(s.catalog), background=False)
            if ranker.semantic is None:
                raise SystemExit(f"the shipped model is needed: {ranker.status}")
            self.index[key] = ranker.lexical
            self.vectors[key] = ranker.semantic.vectors


def examples(s: DevSet, cats: Catalogs, seed: int) -> dict[int, Example]:
    """Position in `s.queries` -> its training example (a query none of whose gold tools is
    in the catalog has none)."""
    key = cats.key[s.name]
    rng = random.Random(f"{seed}:{s.name}")
    out = {}
    for n, q in enumerate(s.queries):
        gold, negatives = candidates(
            cats.index[key], q["query"], q["gold"], HARD_NEGATIVES, EASY_NEGATIVES, rng
        )
        if gold:
            out[n] = Example(q["query"], key, tuple(gold), tuple(negatives))
    return out


class Scorer:
    """Per-query metric rows of validation queries under given query vectors: BM25 scores
    computed once per query, fused as the ranker fuses."""

    def __init__(self, cats: Catalogs) -> None:
        self.cats = cats
        self._lexical: dict[tuple[str, str], Any] = {}

    def rows(
        self, set_name: str, qs: Sequence[Mapping[str, Any]], qvec: Any, weight: float
    ) -> list[tuple[float, ...]]:
        from gatespec.rank_cli import query_metrics
        from gatespec.ranking.fusion import DEFAULT_PARAMS
        from gatespec.ranking.ranker import rank_scores
        from gatespec_surface.budgets import QUERY_MAX_CHARS

        key = self.cats.key[set_name]
        index, vectors = self.cats.index[key], self.cats.vectors[key]
        params = replace(DEFAULT_PARAMS, lexical_weight=weight)
        out = []
        for n, q in enumerate(qs):
            text = q["query"][:QUERY_MAX_CHARS]
            lex = self._lexical.get((key, text))
            if lex is None:
                lex = self._lexical[(key, text)] = index.scores(text)
            hits, _ = rank_scores(lex, vectors @ qvec[n], index.ids, params, 10, vectors=vectors)
            row = query_metrics(q, [h for h, _ in hits])
            assert row is not None
            out.append(row)
        return out


def summarise(rows: Mapping[str, Sequence[tuple[float, ...]]]) -> dict[str, Any]:
    """Per set hit@1/hit@5/MRR/coverage@5 means and the objective (bench/retrieval.py's:
    mean hit@5 over the sets, MCP coverage@5 one more term)."""
    from gatespec.rank_cli import METRICS

    out: dict[str, Any] = {}
    for s, r in rows.items():
        n = len(r)
        out[s] = {"queries": n} | {
            m: round(sum(x[i] for x in r) / n, 4) if n else 0.0 for i, m in enumerate(METRICS)
        }
    terms = [out[s]["hit@5"] for s in out if out[s]["queries"]]
    if out.get("mcp", {}).get("queries"):
        terms.append(out["mcp"]["coverage@5"])
    out["objective"] = round(sum(terms) / len(terms), 4) if terms else 0.0
    return out


def _sample(idx: Sequence[int], cap: int, salt: str) -> list[int]:
    if not cap or len(idx) <= cap:
        return list(idx)
    return sorted(random.Random(salt).sample(list(idx), cap))


def fold_run(
    base_state: Mapping[str, Any],
    model: Any,
    pieces: Any,
    train_ex: Sequence[Example],
    val: Mapping[str, Sequence[Mapping[str, Any]]],
    recipe: Recipe,
    grid: Grid,
    cats: Catalogs,
    scorer: Scorer,
) -> dict[int, dict[float, dict[str, Any]]]:
    """Train from the base weights on `train_ex`; figures per checkpoint and fusion weight."""
    from gatespec.ranking.train.trainer import encode, train

    model.load_state_dict(base_state)
    out: dict[int, dict[float, dict[str, Any]]] = {}

    def checkpoint(step: int) -> None:
        vecs = {s: encode(model, pieces, [q["query"] for q in qs]) for s, qs in val.items()}
        out[step] = {
            w: summarise({s: scorer.rows(s, qs, vecs[s], w) for s, qs in val.items()})
            for w in grid.lexical_weights
        }
        _log(
            f"  step {step}: objective "
            + ", ".join(f"w{w}={out[step][w]['objective']:.4f}" for w in grid.lexical_weights)
        )

    train(model, pieces, train_ex, cats.vectors, recipe, checkpoint, grid.every)
    return out


def run(
    out_dir: Path, grid: Grid, data: Path, *, export: bool = True, resume: Path | None = None
) -> dict[str, Any]:
    import torch

    from gatespec.ranking.encoder import WordPieces
    from gatespec.ranking.train import export as exporter
    from gatespec.ranking.train.model import bert_from_onnx, read_onnx_weights

    torch.set_num_threads(int(os.environ.get("GATESPEC_TRAIN_THREADS", "2")))
    started = time.monotonic()
    sets = load_sets(data)
    for s in sets.values():
        kept = trainable(s.queries)
        s.queries = [kept[i] for i in _sample(range(len(kept)), grid.train_cap, f"train:{s.name}")]
    _log("catalogs: BM25 indexes and the shipped model's tool vectors")
    cats = Catalogs(sets)
    scorer = Scorer(cats)
    base_path = exporter.base_model_path()
    weights = read_onnx_weights(base_path)
    model = bert_from_onnx(weights)
    base_state = {k: v.clone() for k, v in model.state_dict().items()}
    pieces = WordPieces()
    ex = {s: examples(sets[s], cats, 0) for s in SETS}

    folds = _cross_validate(
        grid, sets, ex, cats, scorer, model, base_state, pieces, out_dir, resume
    )
    choice, table = choose(folds, grid)
    verdict = gate(table, choice)
    verdict["nested"] = nested_gate(folds, grid)
    # The nested figures decide: the plain gate's folds also chose the step count.
    verdict["ships"] = verdict["ships"] and verdict["nested"]["ships"]
    _log(f"chosen {choice}; by-tool verdict: {verdict['ships']} ({verdict['why']})")
    result: dict[str, Any] = {
        "grid": asdict(grid),
        "choice": choice,
        "verdict": verdict,
        "table": table,
        "folds": [_fold_summary(f) for f in folds],
        "sizes": {s: len(sets[s].queries) for s in SETS},
    }
    if verdict["ships"] and export:
        recipe = Recipe(layers=choice["layers"], lr=choice["lr"], steps=choice["steps"])
        all_ex = [e for s in SETS for e in ex[s].values()]
        _log(f"final fit: {len(all_ex)} queries, {recipe}")
        from gatespec.ranking.train.trainer import train

        model.load_state_dict(base_state)
        train(model, pieces, all_ex, cats.vectors, recipe)
        result["export"] = exporter.write(model, weights, recipe.layers, out_dir, pieces)
    result["elapsed_s"] = round(time.monotonic() - started, 1)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "training.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    (out_dir.parent / "MODEL_CARD.md").write_text(model_card(result), encoding="utf-8")
    _log(f"wrote {out_dir / 'training.json'} ({result['elapsed_s']:.0f} s)")
    return result


def regate(out_dir: Path) -> dict[str, Any]:
    """Choose and gate again from a finished run's fold figures (`folds.json` beside the
    artifact), keeping its export: the gate's rule changed, the training did not."""
    record: dict[str, Any] = json.loads((out_dir / "training.json").read_text("utf-8"))
    saved: dict[str, Any] = {
        k: tuple(v) if isinstance(v, list) else v for k, v in record["grid"].items()
    }
    grid = Grid(**saved)
    folds = _load_folds(out_dir / "folds.json")
    choice, table = choose(folds, grid)
    verdict = gate(table, choice)
    verdict["nested"] = nested_gate(folds, grid)
    verdict["ships"] = verdict["ships"] and verdict["nested"]["ships"]
    record.update(choice=choice, verdict=verdict, table=table)
    (out_dir / "training.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    (out_dir.parent / "MODEL_CARD.md").write_text(model_card(record), encoding="utf-8")
    return record


def _cross_validate(
    grid: Grid,
    sets: Mapping[str, DevSet],
    ex: Mapping[str, Mapping[int, Example]],
    cats: Catalogs,
    scorer: Scorer,
    model: Any,
    base_state: Mapping[str, Any],
    pieces: Any,
    out_dir: Path,
    resume: Path | None,
) -> list[dict[str, Any]]:
    """Every recipe on every fold; each fold's figures are saved as they come (a long run
    stopped midway resumes from them with --resume)."""
    if resume is not None:
        return _load_folds(resume)
    partial = out_dir / "folds.partial.json"
    out_dir.mkdir(parents=True, exist_ok=True)
    folds: list[dict[str, Any]] = []
    for kind in ("by-tool", "ordinary"):
        for f in range(2):
            parts = {
                s: (
                    by_tool_folds(s, sets[s].queries)
                    if kind == "by-tool"
                    else ordinary_folds(sets[s].queries)
                )[f]
                for s in SETS
            }
            tr = [ex[s][i] for s in SETS for i in parts[s][0] if i in ex[s]]
            val = {
                s: [
                    sets[s].queries[i]
                    for i in _sample(parts[s][1], grid.val_cap, f"val:{kind}:{f}:{s}")
                ]
                for s in SETS
            }
            folds.append(
                {
                    "kind": kind,
                    "fold": f,
                    "train": len(tr),
                    "val": {s: len(v) for s, v in val.items()},
                    "runs": {},
                }
            )
            for layers in grid.layers:
                for lr in grid.lrs:
                    recipe = Recipe(layers=layers, lr=lr, steps=grid.steps)
                    _log(f"{kind} fold {f}: {len(tr)} training queries; layers {layers}, lr {lr}")
                    folds[-1]["runs"][f"{layers}:{lr}"] = fold_run(
                        base_state, model, pieces, tr, val, recipe, grid, cats, scorer
                    )
                    partial.write_text(json.dumps([_fold_summary(x) for x in folds]), "utf-8")
    return folds


def _load_folds(path: Path) -> list[dict[str, Any]]:
    """Fold figures as _fold_summary wrote them, with their numeric keys back."""
    folds = json.loads(path.read_text(encoding="utf-8"))
    for f in folds:
        f["runs"] = {
            key: {int(step): {float(w): fig for w, fig in ws.items()} for step, ws in steps.items()}
            for key, steps in f["runs"].items()
        }
    return folds


def choose(folds: Sequence[Mapping[str, Any]], grid: Grid) -> tuple[dict[str, Any], dict[str, Any]]:
    """The (recipe, steps, weight) with the best mean objective over all folds, and a table of
    every candidate's by-tool and ordinary means (per set and objective)."""
    table: dict[str, Any] = {}
    for key in folds[0]["runs"]:
        for step in folds[0]["runs"][key]:
            for w in grid.lexical_weights:
                name = f"{key}:{step}:{w}"
                per = {}
                for kind in ("by-tool", "ordinary"):
                    figs = [f["runs"][key][step][w] for f in folds if f["kind"] == kind]
                    per[kind] = _mean_figs(figs)
                table[name] = per
    best = max(
        table,
        key=lambda n: (
            (table[n]["by-tool"]["objective"] + table[n]["ordinary"]["objective"]) / 2,
            -int(n.split(":")[2]),  # fewer steps among equals
        ),
    )
    layers, lr, step, weight = best.split(":")
    return {
        "layers": int(layers),
        "lr": float(lr),
        "steps": int(step),
        "lexical_weight": float(weight),
        "name": best,
    }, table


def _mean_figs(figs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for s in SETS:
        out[s] = {
            m: round(sum(f[s][m] for f in figs) / len(figs), 4) for m in ("hit@5", "coverage@5")
        }
    out["objective"] = round(sum(f["objective"] for f in figs) / len(figs), 4)
    return out


def gate(table: Mapping[str, Any], choice: Mapping[str, Any]) -> dict[str, Any]:
    """Ship only if the by-tool folds show no loss against the base model (step 0, the
    shipped fusion weight)."""
    from gatespec.ranking.fusion import DEFAULT_PARAMS

    key = choice["name"].split(":")
    base = table[f"{key[0]}:{key[1]}:0:{DEFAULT_PARAMS.lexical_weight}"]["by-tool"]
    learned = table[choice["name"]]["by-tool"]
    if choice["steps"] == 0:
        return {
            "ships": False,
            "why": "the base model was the best choice",
            "base": base,
            "learned": learned,
        }
    drops = {s: round(base[s]["hit@5"] - learned[s]["hit@5"], 4) for s in SETS}
    worst = max(drops, key=lambda s: drops[s])
    ok = learned["objective"] >= base["objective"] and drops[worst] <= TOLERANCE
    why = (
        f"by-tool objective {base['objective']:.4f} -> {learned['objective']:.4f}; "
        f"largest hit@5 drop {drops[worst]:+.4f} ({worst})"
    )
    return {"ships": ok, "why": why, "base": base, "learned": learned}


def nested_gate(folds: Sequence[Mapping[str, Any]], grid: Grid) -> dict[str, Any]:
    """The gate on figures no choice saw (nested cross-validation): each fold's (recipe,
    steps, weight) is chosen on the other three folds and scored on it, beside the base model
    (step 0, the shipped fusion weight) on the same fold. Ships only if, over the by-tool
    folds, the objective does not fall and no set's hit@5 or coverage@5 drops by more than
    :data:`TOLERANCE`."""
    from gatespec.ranking.fusion import DEFAULT_PARAMS

    outer: dict[str, list[dict[str, Any]]] = {"base": [], "learned": []}
    choices = []
    for n, fold in enumerate(folds):
        if fold["kind"] != "by-tool":
            continue
        choice, _ = choose([f for m, f in enumerate(folds) if m != n], grid)
        runs = fold["runs"][f"{choice['layers']}:{choice['lr']}"]
        outer["base"].append(runs[0][DEFAULT_PARAMS.lexical_weight])
        outer["learned"].append(runs[choice["steps"]][choice["lexical_weight"]])
        choices.append(choice["name"])
    base, learned = _mean_figs(outer["base"]), _mean_figs(outer["learned"])
    drops = {
        f"{s} {m}": round(base[s][m] - learned[s][m], 4)
        for s in SETS
        for m in ("hit@5", "coverage@5")
    }
    worst = max(drops, key=lambda k: drops[k])
    ok = learned["objective"] >= base["objective"] and drops[worst] <= TOLERANCE
    ok = ok and any(c.split(":")[2] != "0" for c in choices)
    why = (
        f"nested by-tool objective {base['objective']:.4f} -> {learned['objective']:.4f}; "
        f"largest drop {drops[worst]:+.4f} ({worst}); choices per fold {choices}"
    )
    return {"ships": ok, "why": why, "base": base, "learned": learned, "choices": choices}


def _fold_summary(f: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in f.items() if k != "runs"} | {
        "runs": {
            key: {str(step): {str(w): fig for w, fig in ws.items()} for step, ws in steps.items()}
            for key, steps in f["runs"].items()
        }
    }
