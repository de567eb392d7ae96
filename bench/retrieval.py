"""Retrieval quality and speed of gatespec.ranking (the ranker of tool_browse and search).

    .venv/bin/python bench/retrieval.py --out bench/results/retrieval.json

Data: the public sets in /work/shared/data/tool-retrieval/ (README there: sources, licences).
For each set (LiveMCPBench tasks over the MCP catalog; BFCL non-live and live queries over the
deduplicated BFCL catalog; MetaTool over its plugin catalog):

* a held-out fifth of the queries (by a hash of the query id) is never used to choose
  anything; the other four fifths are split into 5 folds;
* the fusion parameters (gatespec.ranking.FusionParams) are chosen by 5-fold cross-validation
  on those four fifths (objective: mean over the sets of hit@5 and MCP coverage@5), each fold's
  choice scored on its own test fold: the spread across folds is reported;
* the final choice (made on all four fifths) is scored on the held-out fifth, next to a plain
  BM25 over name + description + property descriptions and the ranker with semantics off;
* the shipped defaults are scored through `gatespec rank` (gatespec.rank_cli.rank: the
  Browser, exactly as tool_browse(query)) on the whole dev set.

Speed: query p50/p99 at 10,000 tools (the MCP catalog replicated under distinct namespaces),
lexical only and hybrid; index build from a warm and a cold embedding cache; the resident
memory the model adds (fresh processes). A benchmark, not a test: nothing asserts a timing.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
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
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from gatespec.rank_cli import metrics as rank_metrics  # noqa: E402
from gatespec.rank_cli import rank  # noqa: E402
from gatespec.ranking import DEFAULT_PARAMS, Document, FusionParams, Ranker  # noqa: E402
from gatespec.ranking.ranker import rank_parts  # noqa: E402

DEFAULT_DATA = Path("/work/shared/data/tool-retrieval")
SYNTH_SIZE = 10_000
FOLDS = 5
GRID = {
    "lexical_weight": (0.1, 0.2, 0.3, 0.4),
    "split_clauses": (False, True),
    "duplicate_similarity": (0.95, 1.01),
}
SETS = ("mcp", "bfcl", "bfcl_live", "metatool")
SOURCES = [
    "LiveMCPBench (icip-cas/LiveMCPBench, Apache-2.0): 527 MCP tools, 64 dev tasks",
    "github-mcp-server (github/github-mcp-server, MIT): 117 MCP tools",
    "Berkeley Function Calling Leaderboard v4 (ShishirPatil/gorilla, Apache-2.0): 1,852 "
    "deduplicated functions, 803 dev queries, 956 live dev queries",
    "MetaTool (HowieHwong/MetaTool, MIT): 199 plugin tools, 14,803 dev queries",
]


# --------------------------------------------------------------------------- data


def load_json(path: Path) -> Any:
    with path.open(encoding="utf-8") as fh:
        return json.load(fh)


def catalog_docs(rows: Sequence[Mapping[str, Any]]) -> list[Document]:
    """Catalog rows -> Documents with id "server/name" (the form the gold labels use)."""
    return [
        Document.of_tool(
            f"{r['server']}/{r['name']}",
            r["name"],
            r.get("description") or "",
            r["server"],
            r.get("inputSchema"),
        )
        for r in rows
    ]


def queries(rows: Sequence[Mapping[str, Any]], gold: str) -> list[dict[str, Any]]:
    out = []
    for r in rows:
        labels = list(r[gold])
        groups = r.get("gold_groups") or [[g] for g in labels]
        out.append({"id": r["id"], "query": r["query"], "gold": labels, "gold_groups": groups})
    return out


def load_sets(data: Path) -> dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    mcp = load_json(data / "mcp_catalog.json")
    bfcl = load_json(data / "bfcl_catalog_dedup.json")
    meta = load_json(data / "metatool_catalog.json")
    return {
        "mcp": (mcp, queries(load_json(data / "mcp_queries_dev.json"), "gold")),
        "bfcl": (bfcl, queries(load_json(data / "bfcl_queries_dev.json"), "gold_by_name")),
        "bfcl_live": (
            bfcl,
            queries(load_json(data / "bfcl_live_queries_dev.json"), "gold_by_name"),
        ),
        "metatool": (meta, queries(load_json(data / "metatool_queries_dev.json"), "gold")),
    }


def split_of(query_id: str) -> int:
    """0..4: a cross-validation fold; 5: held out (a fifth of the queries, by id hash)."""
    h = int.from_bytes(hashlib.sha256(str(query_id).encode()).digest()[:4], "big")
    return 5 if h % 5 == 0 else (h // 5) % FOLDS


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


def score(ranked: Sequence[Sequence[str]], qs: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    return rank_metrics(qs, [{"ranked": r} for r in ranked]) or {}


class Prepared:
    """One set with every query's parts, BM25 scores and cosine similarities computed once, so
    each parameter choice only re-runs the fusion (gatespec.ranking.ranker.rank_parts)."""

    def __init__(self, catalog: Sequence[Mapping[str, Any]], qs: Sequence[Mapping[str, Any]]):
        self.queries = list(qs)
        self.docs = catalog_docs(catalog)
        probe = Ranker(
            self.docs, background=False, params=replace(DEFAULT_PARAMS, split_clauses=True)
        )
        if probe.semantic is None:
            raise SystemExit(f"semantic ranking unavailable: {probe.status}")
        self.ids = probe.lexical.ids
        self.vectors = probe.semantic.vectors
        self.parts = [probe.parts(q["query"]) for q in qs]
        self.lexical = [[probe.lexical.scores(p) for p in parts] for parts in self.parts]
        flat = [p for parts in self.parts for p in parts]
        sims = probe.semantic.encoder.encode(flat, query=True) @ self.vectors.T
        self.sims = []
        at = 0
        for parts in self.parts:
            self.sims.append(sims[at : at + len(parts)])
            at += len(parts)
        self.naive = NaiveBm25(self.docs)

    def run(self, params: FusionParams | None, idx: Sequence[int], k: int = 10) -> list[list[str]]:
        """Top k per query: `params` fused, or lexical only when None."""
        out = []
        for i in idx:
            n = len(self.lexical[i]) if params is not None and params.split_clauses else 1
            sims = self.sims[i][:n] if params is not None else None
            hits, _ = rank_parts(
                self.lexical[i][:n],
                sims,
                self.ids,
                self.vectors if params is not None else None,
                params or DEFAULT_PARAMS,
                k,
            )
            out.append([h for h, _ in hits])
        return out

    def run_naive(self, idx: Sequence[int], k: int = 10) -> list[list[str]]:
        return [[h for h, _ in self.naive.search(self.queries[i]["query"], k)] for i in idx]

    def subset(self, idx: Sequence[int]) -> list[dict[str, Any]]:
        return [self.queries[i] for i in idx]


def objective(results: Mapping[str, Mapping[str, float]]) -> float:
    """Mean hit@5 over the sets, with MCP coverage@5 as one more term (multi-step tasks)."""
    terms = [results[s]["hit@5"] for s in SETS] + [results["mcp"]["coverage@5"]]
    return sum(terms) / len(terms)


def grid() -> list[FusionParams]:
    keys = list(GRID)
    return [
        replace(DEFAULT_PARAMS, **dict(zip(keys, values, strict=True)))
        for values in itertools.product(*(GRID[k] for k in keys))
    ]


def choose(prep: Mapping[str, Prepared], folds: Mapping[str, Sequence[int]]) -> FusionParams:
    scored = []
    for params in grid():
        res = {s: score(prep[s].run(params, folds[s]), prep[s].subset(folds[s])) for s in SETS}
        scored.append((objective(res), params))
    return max(scored, key=lambda t: t[0])[1]


def cross_validate(prep: Mapping[str, Prepared]) -> dict[str, Any]:
    splits = {s: [split_of(q["id"]) for q in prep[s].queries] for s in SETS}
    per_fold = []
    for fold in range(FOLDS):
        train = {s: [i for i, f in enumerate(splits[s]) if f not in (fold, 5)] for s in SETS}
        test = {s: [i for i, f in enumerate(splits[s]) if f == fold] for s in SETS}
        params = choose(prep, train)
        res = {s: score(prep[s].run(params, test[s]), prep[s].subset(test[s])) for s in SETS}
        per_fold.append({"params": _params(params), "test": res})
        print(f"fold {fold}: {_params(params)} {json.dumps(res)}", flush=True)
    dev = {s: [i for i, f in enumerate(splits[s]) if f != 5] for s in SETS}
    held = {s: [i for i, f in enumerate(splits[s]) if f == 5] for s in SETS}
    final = choose(prep, dev)
    held_out = {}
    for s in SETS:
        qs = prep[s].subset(held[s])
        held_out[s] = {
            "plain BM25": score(prep[s].run_naive(held[s]), qs),
            "gatespec lexical only": score(prep[s].run(None, held[s]), qs),
            "gatespec hybrid (chosen)": score(prep[s].run(final, held[s]), qs),
            "gatespec hybrid (shipped defaults)": score(prep[s].run(DEFAULT_PARAMS, held[s]), qs),
        }
    return {
        "grid": {k: list(v) for k, v in GRID.items()},
        "folds": per_fold,
        "spread": _spread(per_fold),
        "chosen": _params(final),
        "held_out": held_out,
        "held_out_sizes": {s: len(held[s]) for s in SETS},
    }


def _params(p: FusionParams) -> dict[str, Any]:
    return {k: v for k, v in asdict(p).items() if k in GRID}


def _spread(per_fold: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, list[float]]]:
    """set -> metric -> [min, mean, max] over the folds' test scores."""
    out: dict[str, dict[str, list[float]]] = {}
    for s in SETS:
        out[s] = {}
        for m in ("hit@1", "hit@5", "mrr", "coverage@5"):
            vals = [f["test"][s][m] for f in per_fold]
            out[s][m] = [round(min(vals), 3), round(statistics.mean(vals), 3), round(max(vals), 3)]
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
    }


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def child(args: argparse.Namespace) -> int:
    """Internal: one measurement in a fresh process (printed as JSON)."""
    docs = catalog_docs(synth_rows(load_json(args.data / "mcp_catalog.json"), SYNTH_SIZE))
    before = _rss_mb()
    t0 = time.perf_counter()
    ranker = Ranker(docs, semantic=args.child != "lexical", background=False)
    built = time.perf_counter() - t0
    print(
        json.dumps(
            {
                "build_s": round(built, 3),
                "rss_added_mb": round(_rss_mb() - before, 1),
                "maxrss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                "status": ranker.status,
            }
        )
    )
    return 0


def _in_child(args: argparse.Namespace, mode: str, cache: str) -> dict[str, Any]:
    env = {**os.environ, "GATESPEC_CACHE_DIR": cache}
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
    with tempfile.TemporaryDirectory() as cache:
        out["lexical_build"] = _in_child(args, "lexical", cache)
        out["cold_build"] = _in_child(args, "hybrid", cache)  # empty cache: encodes all
        out["warm_build"] = [_in_child(args, "hybrid", cache) for _ in range(3)]
        os.environ["GATESPEC_CACHE_DIR"] = cache
        docs = catalog_docs(synth_rows(load_json(args.data / "mcp_catalog.json"), SYNTH_SIZE))
        qs = list(mcp_queries) + list(bfcl_queries)
        out["query_lexical"] = time_queries(Ranker(docs, semantic=False), qs, args.rounds)
        hybrid = Ranker(docs, background=False)
        out["query_hybrid"] = time_queries(hybrid, qs, args.rounds)
        out["query_hybrid_short"] = time_queries(hybrid, list(bfcl_queries), args.rounds)
    return out


# --------------------------------------------------------------------------- report


def fmt_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], digits: int = 3) -> str:
    def cell(c: Any) -> str:
        return f"{c:.{digits}f}" if isinstance(c, float) else str(c)

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for r in rows:
        lines.append("| " + " | ".join(cell(c) for c in r) + " |")
    return "\n".join(lines)


def markdown(res: Mapping[str, Any]) -> str:
    cv = res["cv"]
    out = [
        "# Tool retrieval benchmark (gatespec.ranking)",
        "",
        f"Generated by `{res['meta']['command']}` on {res['meta']['date']} (Python "
        f"{res['meta']['python']}, {res['meta']['cpus']} CPUs, load average "
        f"{res['meta']['loadavg_start']} at start, {res['meta']['loadavg_end']} at end).",
        "",
        "hit@k: a gold tool in the top k. MRR: reciprocal rank of the first gold tool. "
        "coverage@5: share of a task's steps with a gold tool in the top 5 (single-tool sets: "
        "each gold tool is a step). Ranker: BM25F (Snowball stems; name, namespace, "
        "description, property names and descriptions) fused with all-MiniLM-L6-v2 (int8 "
        "ONNX, onnxruntime).",
        "",
        "## Whole dev sets through `gatespec rank` (shipped defaults)",
        "",
    ]
    rows = []
    for s in SETS:
        for name, m in res["whole_dev"][s].items():
            rows.append([s, name, m["queries"], m["hit@1"], m["hit@5"], m["mrr"], m["coverage@5"]])
    out.append(fmt_table(["set", "ranker", "queries", "hit@1", "hit@5", "MRR", "coverage@5"], rows))
    out += [
        "",
        "Every parameter was chosen on these queries (held-out fifth excepted, below), so the "
        "held-out and per-fold figures are the ones to trust.",
        "",
        "## Held-out fifth (never used to choose anything)",
        "",
    ]
    rows = []
    for s in SETS:
        for name, m in cv["held_out"][s].items():
            rows.append([s, name, m["queries"], m["hit@1"], m["hit@5"], m["mrr"], m["coverage@5"]])
    out.append(fmt_table(["set", "ranker", "queries", "hit@1", "hit@5", "MRR", "coverage@5"], rows))
    out += [
        "",
        f"Parameters chosen on the other four fifths: `{cv['chosen']}`; grid `{cv['grid']}`.",
        "",
        "## 5-fold cross-validation inside the other four fifths",
        "",
        "Each fold chooses the parameters on four folds and is scored on the fifth: "
        "min / mean / max over the folds.",
        "",
    ]
    rows = []
    for s in SETS:
        sp = cv["spread"][s]
        rows.append(
            [s]
            + [
                "{:.3f} / {:.3f} / {:.3f}".format(*sp[m])
                for m in ("hit@1", "hit@5", "mrr", "coverage@5")
            ]
        )
    out.append(fmt_table(["set", "hit@1", "hit@5", "MRR", "coverage@5"], rows))
    out += [
        "",
        "Choices per fold: " + "; ".join(json.dumps(f["params"]) for f in cv["folds"]) + ".",
        "",
    ]
    sp = res["speed"]
    out += [
        f"## Speed at {SYNTH_SIZE:,} tools",
        "",
        "The MCP catalog replicated under distinct namespaces. Builds in fresh processes.",
        "",
        fmt_table(
            ["measure", "value"],
            [
                [
                    "query p50 / p99 ms, lexical only",
                    f"{sp['query_lexical']['p50_ms']} / {sp['query_lexical']['p99_ms']}",
                ],
                [
                    "query p50 / p99 ms, hybrid (MCP tasks + BFCL queries)",
                    f"{sp['query_hybrid']['p50_ms']} / {sp['query_hybrid']['p99_ms']}",
                ],
                [
                    "query p50 / p99 ms, hybrid (BFCL queries)",
                    f"{sp['query_hybrid_short']['p50_ms']} / {sp['query_hybrid_short']['p99_ms']}",
                ],
                ["index build s, lexical only", sp["lexical_build"]["build_s"]],
                [
                    "index build s, hybrid, cold cache (encodes every tool)",
                    sp["cold_build"]["build_s"],
                ],
                [
                    "index build s, hybrid, warm cache (3 runs)",
                    ", ".join(str(w["build_s"]) for w in sp["warm_build"]),
                ],
                ["RSS added by the build MB, lexical only", sp["lexical_build"]["rss_added_mb"]],
                [
                    "RSS added by the build MB, hybrid (model + vectors)",
                    sp["warm_build"][0]["rss_added_mb"],
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
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args)

    loadavg_start = round(os.getloadavg()[0], 2)
    sets = load_sets(args.data)
    whole: dict[str, Any] = {}
    prep: dict[str, Prepared] = {}
    for s in SETS:
        catalog, qs = sets[s]
        results, status = rank(catalog, qs, 10)
        prep[s] = Prepared(catalog, qs)
        all_idx = range(len(qs))
        whole[s] = {
            "plain BM25": score(prep[s].run_naive(all_idx), qs),
            "gatespec lexical only": score(prep[s].run(None, all_idx), qs),
            "gatespec rank (hybrid)": rank_metrics(qs, results),
        }
        print(s, status, json.dumps(whole[s]), flush=True)
    cv = cross_validate(prep)
    perf = speed(args, [q["query"] for q in sets["mcp"][1]], [q["query"] for q in sets["bfcl"][1]])
    print("speed", json.dumps(perf), flush=True)
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
        },
        "defaults": asdict(DEFAULT_PARAMS),
        "whole_dev": whole,
        "cv": cv,
        "speed": perf,
        "sources": SOURCES,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    md_path.write_text(markdown(result), encoding="utf-8")
    print(f"wrote {args.out} and {md_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
