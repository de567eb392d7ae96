"""The tool memory (gatespec.ranking.memory): chosen, measured and built from the dev data.

`python -m gatespec.ranking.train --memory` runs :func:`build`: every dev set's queries except
the benchmark's held-out fifth (data.trainable), encoded by the shipped model; the weight and
prototype count chosen by 5-fold cross-validation over them (objective: bench/retrieval.py's);
the memory built from all of them and written with its record (the choice, the fold
figures). bench/retrieval.py uses :class:`MemoryEval` to report it against today's defaults:

* nested 5-fold CV inside the four dev fifths: in each outer fold the memory is built from
  the other four folds' queries only, and its weight and prototype count are chosen by inner
  CV on those four (memory from three, scored on the fourth); the outer fold scores the choice;
* the held-out fifth: the choice made by 5-fold CV on the dev fifths, the memory built from
  all of them (what the build ships), scored on the fifth that nothing else ever reads;
* by server / by tool: the memory built from the queries whose gold tools all lie in one half
  (data.by_tool_folds), scored on the queries of the other half, whose gold tools it never
  holds: the memory cannot raise them, only the known tools beside them.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from gatespec.rank_cli import METRICS, query_metrics
from gatespec.ranking.documents import Document
from gatespec.ranking.fusion import DEFAULT_PARAMS
from gatespec.ranking.memory import MEMORY_FILE, ToolMemory, fingerprint, shift
from gatespec.ranking.ranker import fused_scores, top_scores
from gatespec.ranking.train.data import (
    DEFAULT_DATA,
    FOLDS,
    HELD_OUT,
    SETS,
    by_tool_folds,
    catalog_docs,
    load_sets,
    split_of,
    trainable,
)
from gatespec.ranking.train.pipeline import summarise

__all__ = [
    "CENTRES",
    "MIN_QUERIES",
    "PROTOTYPES",
    "WEIGHTS",
    "MemoryEval",
    "MemorySet",
    "build",
    "encode_queries",
]

CENTRES = (0.5, 0.6, 0.7, 0.8)
WEIGHTS = (0.1, 0.2, 0.3, 0.5, 0.8)
PROTOTYPES = (1, 4)
# A tool is remembered only when at least this many dev queries ask for it (most BFCL functions
# have one: a prototype of a single query raised known functions above unseen ones).
MIN_QUERIES = (1, 5)
_BATCH = 64  # queries per encoding call (and per cache write) when they are not cached


def encode_queries(encoder: Any, texts: Sequence[str]) -> np.ndarray:
    """Query vectors, through gatespec's embedding cache (the user's cache directory) under
    a model id of their own (queries are cut at fewer tokens than tools)."""
    from gatespec.ranking.encoder import QUERY_MAX_TOKENS
    from gatespec.ranking.vector_cache import VectorCache, content_key

    cache = VectorCache()
    model = f"{encoder.model_id}-query{QUERY_MAX_TOKENS}"
    keys = [content_key(t) for t in texts]
    found = cache.get_many(model, list(dict.fromkeys(keys)))
    out = np.zeros((len(texts), 384), dtype=np.float32)
    missing = [i for i, k in enumerate(keys) if k not in found]
    for i, k in enumerate(keys):
        if k in found:
            out[i] = np.frombuffer(found[k], dtype=np.float32)
    for start in range(0, len(missing), _BATCH):
        chunk = missing[start : start + _BATCH]
        vectors = encoder.encode([texts[i] for i in chunk], query=True)
        out[chunk] = vectors
        cache.put_many(model, [(keys[i], vectors[j].tobytes()) for j, i in enumerate(chunk)])
    return out


class MemorySet:
    """One set as the memory's evaluation reads it: docs and ids by position, the queries,
    their BM25 scores, cosines and vectors (bench/retrieval.py's Prepared has the same)."""

    docs: Sequence[Document]
    ids: Sequence[str]
    queries: Sequence[Mapping[str, Any]]
    lexical: Sequence[np.ndarray]
    sims: np.ndarray
    vectors: np.ndarray
    query_vectors: np.ndarray

    @classmethod
    def of(cls, catalog: Sequence[Mapping[str, Any]], qs: Sequence[Mapping[str, Any]]) -> MemorySet:
        from gatespec.ranking.learned import LearnedQueries
        from gatespec.ranking.ranker import Ranker
        from gatespec_surface.budgets import QUERY_MAX_CHARS

        out = cls()
        out.docs = catalog_docs(catalog)
        ranker = Ranker(out.docs, background=False)
        if ranker.semantic is None:
            raise SystemExit(f"the shipped model is needed: {ranker.status}")
        encoder = ranker.semantic.encoder
        base = encoder.tools if isinstance(encoder, LearnedQueries) else encoder
        texts = [q["query"][:QUERY_MAX_CHARS] for q in qs]
        out.ids, out.queries = ranker.lexical.ids, list(qs)
        out.lexical = [ranker.lexical.scores(t) for t in texts]
        out.vectors = ranker.semantic.vectors
        out.query_vectors = encode_queries(base, texts)
        out.sims = out.query_vectors @ out.vectors.T
        return out


def tool_queries(
    prep: Mapping[str, MemorySet], picked: Mapping[str, Iterable[int]], least: int = 1
) -> dict[str, list[np.ndarray]]:
    """fingerprint -> the query vectors of the picked queries (per set) whose gold it is, for
    the tools that at least `least` of them ask for."""
    out: dict[str, list[np.ndarray]] = {}
    for s, idx in picked.items():
        p = prep[s]
        fp = {d.id: fingerprint(d.name, d.description) for d in p.docs}
        for i in idx:
            for g in dict.fromkeys(p.queries[i]["gold"]):
                if g in fp:
                    out.setdefault(fp[g], []).append(p.query_vectors[i])
    return {f: v for f, v in out.items() if len(v) >= least}


Setting = tuple[float, float] | None  # (centre, weight); None: today's ranking


class MemoryEval:
    """Per-query metric rows with and without a memory built from some folds' queries."""

    def __init__(self, prep: Mapping[str, MemorySet]) -> None:
        self.prep = prep
        self.splits = {s: np.array([split_of(q["id"]) for q in prep[s].queries]) for s in SETS}
        self._base: dict[tuple[str, int], tuple[np.ndarray, np.ndarray]] = {}

    def idx(self, s: str, folds: Iterable[int]) -> np.ndarray:
        return np.flatnonzero(np.isin(self.splits[s], list(folds)))

    def memory(self, picked: Mapping[str, Iterable[int]], k: int, least: int) -> ToolMemory:
        return ToolMemory.build(tool_queries(self.prep, picked, least), k, 1.0, 0.0)

    def base(self, s: str, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Query i's fused scores and candidates under today's defaults (computed once)."""
        got = self._base.get((s, i))
        if got is None:
            p = self.prep[s]
            got = fused_scores(p.lexical[i], p.sims[i], DEFAULT_PARAMS, vectors=p.vectors)
            self._base[(s, i)] = got
        return got

    def rows(
        self,
        s: str,
        idx: Sequence[int] | np.ndarray,
        memory: ToolMemory,
        settings: Sequence[Setting],
    ) -> dict[Setting, np.ndarray]:
        """Per setting, (len(idx), 4) metric rows of set s's queries `idx`."""
        p = self.prep[s]
        pairs = memory.rows_for(p.docs)
        out = {x: np.zeros((len(idx), len(METRICS))) for x in settings}
        for n, i in enumerate(idx):
            fused, candidates = self.base(s, int(i))
            best = memory.best(p.query_vectors[i], len(p.ids), pairs) if len(pairs[0]) else None
            for x in settings:
                recall = None if x is None or best is None else shift(best, x[1], x[0])
                hits, _ = top_scores(fused, candidates, p.ids, 10, recall)
                row = query_metrics(p.queries[i], [h for h, _ in hits])
                assert row is not None
                out[x][n] = row
        return out

    def score(
        self,
        train: Iterable[int],
        test: Iterable[int],
        k: int,
        least: int,
        settings: Sequence[Setting],
    ) -> dict[Setting, dict[str, np.ndarray]]:
        """Per setting, per set: metric rows of the `test` folds, memory from the `train` folds."""
        train, test = list(train), list(test)
        memory = self.memory({s: self.idx(s, train) for s in SETS}, k, least)
        got = {s: self.rows(s, self.idx(s, test), memory, settings) for s in SETS}
        return {x: {s: got[s][x] for s in SETS} for x in settings}

    def by_tool(
        self, folds: Iterable[int], k: int, least: int, settings: Sequence[Setting]
    ) -> dict[Setting, dict[str, np.ndarray]]:
        """The by-server / by-tool split of the queries of `folds` (data.by_tool_folds), both
        halves pooled: memory from one half's queries, scored on the other's."""
        pos = {s: self.idx(s, folds) for s in SETS}
        out: dict[Setting, dict[str, list[np.ndarray]]] = {
            x: {s: [] for s in SETS} for x in settings
        }
        for half in (0, 1):
            picked, val = {}, {}
            for s in SETS:
                train, test = by_tool_folds(s, [self.prep[s].queries[i] for i in pos[s]])[half]
                picked[s], val[s] = pos[s][train], pos[s][test]
            memory = self.memory(picked, k, least)
            for s in SETS:
                for x, r in self.rows(s, val[s], memory, settings).items():
                    out[x][s].append(r)
        return {x: {s: np.vstack(v) for s, v in got.items()} for x, got in out.items()}

    def choose(self, folds: Sequence[int]) -> dict[str, Any]:
        """(centre, weight, prototypes) by CV over `folds` (each fold scored with the memory of
        the others, rows pooled), among the settings that lose nothing, neither in that CV nor
        on the by-server / by-tool split of the same folds: no set's hit@5 or MCP coverage@5
        lower than today's (the rule a memory ships by). No memory (weight 0) when none of
        them beats today's CV objective."""
        settings: list[Setting] = [None, *itertools.product(CENTRES, WEIGHTS)]
        base_cv = base_split = 0.0
        best: dict[str, Any] = {}
        for k, least in itertools.product(PROTOTYPES, MIN_QUERIES):
            pooled: dict[Setting, dict[str, list[np.ndarray]]] = {}
            for f in folds:
                got = self.score([g for g in folds if g != f], [f], k, least, settings)
                for x, rows in got.items():
                    for s, r in rows.items():
                        pooled.setdefault(x, {}).setdefault(s, []).append(r)
            cv = {x: summarise(_stack(v)) for x, v in pooled.items()}
            split = {x: _summary(v) for x, v in self.by_tool(folds, k, least, settings).items()}
            base_cv, base_split = cv[None]["objective"], split[None]["objective"]
            for x in settings[1:]:
                assert x is not None
                worst = min(_worst(split[None], split[x]), _worst(cv[None], cv[x]))
                if worst < 0 or cv[x]["objective"] <= max(base_cv, best.get("objective", 0.0)):
                    continue
                best = {
                    "centre": x[0],
                    "weight": x[1],
                    "prototypes": k,
                    "min_queries": least,
                    "objective": cv[x]["objective"],
                    "by_tool_objective": split[x]["objective"],
                    "worst": worst,
                }
        off = {"centre": 0.0, "weight": 0.0, "prototypes": 0, "min_queries": 0}
        return (best or off) | {"base_objective": base_cv, "base_by_tool_objective": base_split}

    def nested(self, log: Callable[[str], None]) -> dict[str, Any]:
        dev = list(range(FOLDS))
        per_fold = []
        base_rows: dict[str, list[np.ndarray]] = {}
        mem_rows: dict[str, list[np.ndarray]] = {}
        for f in dev:
            inner = [g for g in dev if g != f]
            choice = self.choose(inner)
            x = _setting(choice)
            got = self.score(inner, [f], *_sizes(choice), [None, x])
            for s in SETS:
                base_rows.setdefault(s, []).append(got[None][s])
                mem_rows.setdefault(s, []).append(got[x][s])
            per_fold.append(
                {
                    "fold": f,
                    "choice": choice,
                    "base": _summary(got[None]),
                    "memory": _summary(got[x]),
                }
            )
            log(f"outer fold {f}: {choice}")
        return {
            "folds": per_fold,
            "base": summarise(_stack(base_rows)),
            "memory": summarise(_stack(mem_rows)),
        }

    def held_out(self, choice: Mapping[str, Any]) -> dict[str, Any]:
        """The memory of every dev query, scored on the held-out fifth."""
        x = _setting(choice)
        got = self.score(range(FOLDS), [HELD_OUT], *_sizes(choice), [None, x])
        return {"base": _summary(got[None]), "memory": _summary(got[x])}

    def by_server(self, choice: Mapping[str, Any]) -> dict[str, Any]:
        x = _setting(choice)
        got = self.by_tool(range(FOLDS), *_sizes(choice), [None, x])
        return {"base": _summary(got[None]), "memory": _summary(got[x])}


def _setting(choice: Mapping[str, Any]) -> Setting:
    return (choice["centre"], choice["weight"]) if choice["weight"] > 0 else None


def _sizes(choice: Mapping[str, Any]) -> tuple[int, int]:
    """(prototypes, min_queries) of a choice; a choice of no memory scores as today anyway."""
    return max(1, choice["prototypes"]), max(1, choice["min_queries"])


def _worst(base: Mapping[str, Any], other: Mapping[str, Any]) -> float:
    """The largest loss (negative) of any set's hit@5 or MCP coverage@5, else 0 or a gain."""
    deltas = [other[s]["hit@5"] - base[s]["hit@5"] for s in SETS]
    deltas.append(other["mcp"]["coverage@5"] - base["mcp"]["coverage@5"])
    return round(min(deltas), 4)


def _summary(rows: Mapping[str, np.ndarray]) -> dict[str, Any]:
    return summarise({s: [tuple(r) for r in v] for s, v in rows.items()})


def _stack(rows: Mapping[str, Sequence[np.ndarray]]) -> dict[str, list[tuple[float, ...]]]:
    return {s: [tuple(r) for r in np.vstack(v)] for s, v in rows.items()}


def _log(msg: str) -> None:
    print(f"[memory {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def build(out: Path = MEMORY_FILE, data: Path = DEFAULT_DATA) -> dict[str, Any]:
    """Choose by 5-fold CV over the dev queries (never the held-out fifth), build the memory
    from all of them and write it to `out`, its record beside it (.json); no file when the
    choice is weight 0 (the memory would add nothing)."""
    sets = load_sets(data)
    prep = {s: MemorySet.of(sets[s].catalog, trainable(sets[s].queries)) for s in SETS}
    ev = MemoryEval(prep)
    choice = ev.choose(list(range(FOLDS)))
    _log(f"choice {choice}")
    record: dict[str, Any] = {
        "grid": {
            "centre": list(CENTRES),
            "weight": list(WEIGHTS),
            "prototypes": list(PROTOTYPES),
            "min_queries": list(MIN_QUERIES),
        },
        "choice": choice,
        "queries": {s: len(prep[s].queries) for s in SETS},
    }
    if choice["weight"] > 0:
        picked = {s: range(len(prep[s].queries)) for s in SETS}
        memory = replace(
            ev.memory(picked, *_sizes(choice)),
            weight=choice["weight"],
            centre=choice["centre"],
        )
        memory.save(out)
        record["tools"] = len(memory.fingerprints)
        record["prototype_rows"] = len(memory.vectors)
        record["bytes"] = out.stat().st_size
        _log(f"wrote {out}: {record['tools']} tools, {record['bytes']} bytes")
    else:
        out.unlink(missing_ok=True)  # a memory an earlier choice wrote would otherwise ship
    out.with_suffix(".json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return record
