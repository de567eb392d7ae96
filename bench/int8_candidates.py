"""Candidates for a default query encoder in int8 arithmetic (issues 26/27): build, cosine to
the float32 queries, CPU per query, and ranking quality with the tool memory (dev data only).
docs/int8_queries.md has the figures and the decision.

    nice -n 10 python bench/int8_candidates.py build            # every candidate file
    nice -n 10 python bench/int8_candidates.py sensitivity      # each MatMul quantised alone
    nice -n 10 python bench/int8_candidates.py vectors NAME...  # dev query vectors, cosines
    nice -n 10 python bench/int8_candidates.py timing --passes 5 NAME...   # NAME@1: 1 thread
    nice -n 10 python bench/int8_candidates.py quality NAME...  # with the shipped memory setting
    nice -n 10 python bench/int8_candidates.py flips NAME...    # queries whose hit@5 changes

Files go to /tmp/int8c. The nbits8_* candidates (MatMulNBits) need the onnx-ir package, which
gatespec does not depend on (measured with it installed apart: pip install --target DIR onnx-ir,
DIR on PYTHONPATH). "float32_batched" is the noise floor: the float32 vectors encoded in
batches (float rounding only).

Every query is encoded alone (as tool_browse encodes it): dynamic quantisation scales the
activations per run, so a batch would give each query another vector than it gets at run time.
Never reads the held-out fifth (data.trainable).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from gatespec.ranking.encoder import MiniLmEncoder, _model_file  # noqa: E402
from gatespec.ranking.train.data import SETS, load_sets, trainable  # noqa: E402
from gatespec_surface.budgets import QUERY_MAX_CHARS  # noqa: E402

WORK = Path("/tmp/int8c")
# MatMuls with a constant weight, per layer: Q, K, V, attention output, FFN in, FFN out (the
# torch-exported graph's node names, read from the folded file).
LAYERS = [
    (
        "node_MatMul_56",
        "node_MatMul_48",
        "node_MatMul_64",
        "node_MatMul_104",
        "node_MatMul_106",
        "node_MatMul_115",
    ),
    (
        "node_MatMul_125",
        "node_MatMul_117",
        "node_MatMul_133",
        "node_MatMul_171",
        "node_MatMul_173",
        "node_MatMul_182",
    ),
    (
        "node_MatMul_192",
        "node_MatMul_184",
        "node_MatMul_200",
        "node_MatMul_238",
        "node_MatMul_240",
        "node_MatMul_249",
    ),
    (
        "node_MatMul_259",
        "node_MatMul_251",
        "node_MatMul_267",
        "node_MatMul_305",
        "node_MatMul_307",
        "node_MatMul_316",
    ),
    (
        "node_MatMul_326",
        "node_MatMul_318",
        "node_MatMul_334",
        "node_MatMul_372",
        "node_MatMul_374",
        "node_MatMul_383",
    ),
    (
        "node_MatMul_393",
        "node_MatMul_385",
        "node_MatMul_401",
        "node_MatMul_439",
        "node_MatMul_441",
        "node_MatMul_450",
    ),
]
ROLES = ("q", "k", "v", "attn_out", "ffn_in", "ffn_out")


def folded() -> Path:
    import onnxruntime as ort

    out = WORK / "folded.onnx"
    if not out.is_file():
        WORK.mkdir(parents=True, exist_ok=True)
        model, _ = _model_file()
        o = ort.SessionOptions()
        o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        o.optimized_model_filepath = str(out)
        o.log_severity_level = 3
        ort.InferenceSession(str(model), o, providers=["CPUExecutionProvider"])
    return out


def quantise(name: str, **kw: Any) -> Path:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out = WORK / f"{name}.onnx"
    if not out.is_file() and "nbits" in kw:
        # MatMulNBits: int8 weights in blocks along K; accuracy_level 4 quantises the
        # activations to int8 per block too (int8 products), not per tensor.
        import onnx
        from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

        q = MatMulNBitsQuantizer(onnx.load(folded()), **kw["nbits"])
        q.process()
        q.model.save_model_to_file(str(out), False)
        return out
    if not out.is_file():
        kw.setdefault("weight_type", QuantType.QInt8)
        kw.setdefault("op_types_to_quantize", ["MatMul", "Gather"])
        quantize_dynamic(folded(), out, **kw)
    return out


def node(layer: int, role: str) -> str:
    return LAYERS[layer][ROLES.index(role)]


CANDIDATES: dict[str, dict[str, Any]] = {
    "today": {"per_channel": True},
    "tensor": {"per_channel": False},
    "reduce": {"per_channel": True, "reduce_range": True},
    "matmul_only": {"per_channel": True, "op_types_to_quantize": ["MatMul"]},
    "act_sym": {"per_channel": True, "extra_options": {"ActivationSymmetric": True}},
}


def _keep(*pairs: tuple[int, str]) -> dict[str, Any]:
    """Per channel, as today, with the named MatMuls left in float32."""
    return {"per_channel": True, "nodes_to_exclude": [node(layer, role) for layer, role in pairs]}


# From `sensitivity`: the FFN MatMuls move the vectors most (layer 0's output most of all).
CANDIDATES |= {
    "keep_ffn_out0": _keep((0, "ffn_out")),
    "keep_ffn0": _keep((0, "ffn_in"), (0, "ffn_out")),
    "keep_ffn_out012": _keep((0, "ffn_out"), (1, "ffn_out"), (2, "ffn_out")),
    "keep_ffn01": _keep((0, "ffn_in"), (0, "ffn_out"), (1, "ffn_in"), (1, "ffn_out")),
    "nbits8_b32": {
        "nbits": {"bits": 8, "block_size": 32, "is_symmetric": True, "accuracy_level": 4}
    },
    "nbits8_b128": {
        "nbits": {"bits": 8, "block_size": 128, "is_symmetric": True, "accuracy_level": 4}
    },
    "nbits8_b32_asym": {
        "nbits": {"bits": 8, "block_size": 32, "is_symmetric": False, "accuracy_level": 4}
    },
    "nbits8_b256": {
        "nbits": {"bits": 8, "block_size": 256, "is_symmetric": True, "accuracy_level": 4}
    },
    "nbits8_b64": {
        "nbits": {"bits": 8, "block_size": 64, "is_symmetric": True, "accuracy_level": 4}
    },
    "keep_ffn_all": _keep(*((n, r) for n in range(6) for r in ("ffn_in", "ffn_out"))),
}


def dev_texts() -> dict[str, list[str]]:
    sets = load_sets()
    return {s: [q["query"][:QUERY_MAX_CHARS] for q in trainable(sets[s].queries)] for s in SETS}


def encoder(name: str, threads: int | None = None) -> MiniLmEncoder:
    """NAME or NAME@THREADS (intra-op threads; default: the gateway's, min(2, cores))."""
    if "@" in name:
        name, n = name.split("@")
        threads = int(n)
    if name == "float32":
        path, sha = _model_file()
        return MiniLmEncoder(path, sha, threads)
    return MiniLmEncoder(WORK / f"{name}.onnx", name, threads)


def one_by_one(enc: MiniLmEncoder, texts: list[str]) -> np.ndarray:
    return np.vstack([enc.encode([t], query=True) for t in texts])


def sample(texts: dict[str, list[str]], n: int) -> list[str]:
    """The timing / sensitivity sample: every MCP task, then BFCL queries to n."""
    rest = texts["bfcl"][:: max(1, len(texts["bfcl"]) // (n - len(texts["mcp"])))]
    return (texts["mcp"] + rest)[:n]


def cosines(ref: np.ndarray, got: np.ndarray) -> dict[str, float]:
    c = np.einsum("nd,nd->n", ref, got)
    return {
        "min": round(float(c.min()), 4),
        "p1": round(float(np.percentile(c, 1)), 4),
        "mean": round(float(c.mean()), 5),
    }


def cmd_build(args: argparse.Namespace) -> None:
    for name in args.names or CANDIDATES:
        t0 = time.process_time()
        quantise(name, **CANDIDATES[name])
        print(name, f"{time.process_time() - t0:.1f} s CPU", flush=True)


def cmd_sensitivity(args: argparse.Namespace) -> None:
    """Each weight MatMul quantised ALONE (per channel): how far it moves the vectors."""
    texts = sample(dev_texts(), args.n)
    ref = one_by_one(encoder("float32"), texts)
    rows = []
    for layer in range(6):
        for role in ROLES:
            n = node(layer, role)
            name = f"only_{layer}_{role}"
            quantise(name, per_channel=True, op_types_to_quantize=["MatMul"], nodes_to_quantize=[n])
            got = one_by_one(encoder(name), texts)
            c = cosines(ref, got)
            rows.append({"layer": layer, "role": role, **c})
            print(json.dumps(rows[-1]), flush=True)
            (WORK / f"{name}.onnx").unlink()
    (WORK / "sensitivity.json").write_text(json.dumps(rows, indent=1))


def vectors(name: str, texts: dict[str, list[str]]) -> dict[str, np.ndarray]:
    out = {}
    enc = None
    for s in SETS:
        f = WORK / f"vec_{name}_{s}.npy"
        if not f.is_file() and name == "float32_batched":
            # The noise floor: float32 vectors encoded in batches (bench/retrieval.py's, through
            # the embedding cache), which differ from one-by-one encoding by float rounding only.
            from gatespec.ranking.train.memory_cv import encode_queries

            enc = enc or encoder("float32")
            np.save(f, encode_queries(enc, texts[s]))
        if not f.is_file():
            enc = enc or encoder(name)
            t0 = time.monotonic()
            np.save(f, one_by_one(enc, texts[s]))
            print(name, s, len(texts[s]), f"{time.monotonic() - t0:.0f} s", flush=True)
        out[s] = np.load(f)
    return out


def cmd_vectors(args: argparse.Namespace) -> None:
    texts = dev_texts()
    ref = vectors("float32", texts)
    for name in args.names:
        got = vectors(name, texts)
        allc = cosines(np.vstack([ref[s] for s in SETS]), np.vstack([got[s] for s in SETS]))
        per = {s: cosines(ref[s], got[s]) for s in SETS}
        print(json.dumps({"candidate": name, "all": allc, **per}), flush=True)


def cmd_timing(args: argparse.Namespace) -> None:
    """CPU ms per query (process_time), one query at a time, candidates interleaved."""
    texts = sample(dev_texts(), args.n)
    encs = {name: encoder(name) for name in ["float32", *args.names]}
    for enc in encs.values():  # warm: first runs allocate
        one_by_one(enc, texts[:20])
    got: dict[str, list[float]] = {name: [] for name in encs}
    wall: dict[str, list[float]] = {name: [] for name in encs}
    for p in range(args.passes):
        order = list(encs) if p % 2 == 0 else list(reversed(encs))
        for name in order:
            t0, w0 = time.process_time(), time.perf_counter()
            one_by_one(encs[name], texts)
            got[name].append((time.process_time() - t0) * 1000 / len(texts))
            wall[name].append((time.perf_counter() - w0) * 1000 / len(texts))
    base = statistics.median(got["float32"])
    for name, v in got.items():
        med = statistics.median(v)
        row = {
            "candidate": name,
            "median_ms": round(med, 3),
            "passes": [round(x, 2) for x in v],
            "vs_float32": round(med / base, 3),
            "wall_median_ms": round(statistics.median(wall[name]), 3),
        }
        print(json.dumps(row))


MEMORY_RECORD = ROOT / "src" / "gatespec" / "ranking" / "tool_memory.json"


def cmd_quality(args: argparse.Namespace) -> None:
    """The shipped memory setting (tool_memory.json), memory built from the training part of
    each split, float32 queries vs each candidate's: the dev folds (memory from the other four,
    rows pooled) and the by-server / by-tool split (gatespec.ranking.train.memory_cv)."""
    from gatespec.rank_cli import METRICS
    from gatespec.ranking.memory import ToolMemory
    from gatespec.ranking.train.data import FOLDS
    from gatespec.ranking.train.memory_cv import MemoryEval, MemorySet, tool_queries

    class Eval(MemoryEval):
        """Query vectors from `prep`, the memory's prototypes from `protos`."""

        def __init__(self, prep: Any, protos: Any) -> None:
            super().__init__(prep)
            self.protos = protos

        def memory(self, picked: Any, k: int, least: int) -> ToolMemory:
            return ToolMemory.build(tool_queries(self.protos, picked, least), k, 1.0, 0.0)

    choice = json.loads(MEMORY_RECORD.read_text())["choice"]
    x = (choice["centre"], choice["weight"])
    k, least = choice["prototypes"], choice["min_queries"]
    sets = load_sets()
    texts = dev_texts()
    base = {s: MemorySet.of(sets[s].catalog, trainable(sets[s].queries)) for s in SETS}

    def with_vectors(q: dict[str, np.ndarray]) -> dict[str, Any]:
        out = {}
        for s in SETS:
            m = MemorySet()
            m.docs, m.ids, m.queries, m.lexical, m.vectors = (
                base[s].docs,
                base[s].ids,
                base[s].queries,
                base[s].lexical,
                base[s].vectors,
            )
            m.query_vectors = q[s]
            m.sims = q[s] @ m.vectors.T
            out[s] = m
        return out

    h5, c5 = METRICS.index("hit@5"), METRICS.index("coverage@5")

    def figures(ev: MemoryEval) -> dict[str, dict[str, float]]:
        cv: dict[Any, dict[str, list[np.ndarray]]] = {None: {}, x: {}}
        for f in range(FOLDS):
            got = ev.score([g for g in range(FOLDS) if g != f], [f], k, least, [None, x])
            for key in (None, x):
                for s in SETS:
                    cv[key].setdefault(s, []).append(got[key][s])
        split = ev.by_tool(range(FOLDS), k, least, [None, x])
        out = {}
        for tag, key in (("nomem", None), ("mem", x)):
            for part, rows in (
                ("cv", {s: np.vstack(cv[key][s]) for s in SETS}),
                ("split", split[key]),
            ):
                fig = {s: float(rows[s][:, h5].mean()) for s in SETS}
                fig["mcp_cov"] = float(rows["mcp"][:, c5].mean())
                out[f"{part}_{tag}"] = fig
        return out

    f32 = vectors("float32", texts)
    ref = figures(Eval(with_vectors(f32), with_vectors(f32)))
    print(
        json.dumps(
            {
                "candidate": "float32",
                **{k2: {s: round(v, 4) for s, v in d.items()} for k2, d in ref.items()},
            }
        ),
        flush=True,
    )
    results = {"float32": ref}
    for name in args.names:
        q = vectors(name, texts)
        for protos in ("f32", "own"):
            ev = Eval(with_vectors(q), with_vectors(f32 if protos == "f32" else q))
            got = figures(ev)
            results[f"{name}/{protos}"] = got
            delta = {
                part: {s: round(got[part][s] - ref[part][s], 4) for s in got[part]} for part in got
            }
            worst = min(v for part in ("cv_mem", "split_mem") for v in delta[part].values())
            print(
                json.dumps(
                    {
                        "candidate": name,
                        "protos": protos,
                        "worst_with_memory": round(worst, 4),
                        "delta": delta,
                    }
                ),
                flush=True,
            )
    (WORK / f"quality_{'_'.join(args.names)}.json").write_text(json.dumps(results, indent=1))


def cmd_flips(args: argparse.Namespace) -> None:
    """The dev queries whose hit@5 a candidate changes (today's defaults, no memory): the
    first gold tool's rank under float32 and candidate queries, and the two vectors' cosine."""
    from gatespec.ranking.fusion import DEFAULT_PARAMS
    from gatespec.ranking.ranker import fused_scores, top_scores
    from gatespec.ranking.train.memory_cv import MemorySet

    sets = load_sets()
    texts = dev_texts()
    f32 = vectors("float32", texts)
    for s in SETS:
        m = MemorySet.of(sets[s].catalog, trainable(sets[s].queries))
        cands = {name: vectors(name, texts)[s] for name in args.names}

        def first_gold(i: int, q: np.ndarray, m: Any = m) -> int:
            fused, found = fused_scores(
                m.lexical[i], q @ m.vectors.T, DEFAULT_PARAMS, vectors=m.vectors
            )
            hits, _ = top_scores(fused, found, m.ids, 20, None)
            gold = set(m.queries[i]["gold"])
            return next((r + 1 for r, (h, _) in enumerate(hits) if h in gold), 99)

        for i in range(len(m.queries)):
            ref = first_gold(i, f32[s][i])
            for name, q in cands.items():
                got = first_gold(i, q[i])
                if (ref <= 5) != (got <= 5):
                    cos = float(f32[s][i] @ q[i])
                    print(
                        json.dumps(
                            {
                                "set": s,
                                "candidate": name,
                                "query": m.queries[i]["id"],
                                "rank_f32": ref,
                                "rank": got,
                                "cos": round(cos, 4),
                            }
                        ),
                        flush=True,
                    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd")
    ap.add_argument("names", nargs="*")
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--passes", type=int, default=5)
    args = ap.parse_intermixed_args()
    {
        "build": cmd_build,
        "sensitivity": cmd_sensitivity,
        "vectors": cmd_vectors,
        "timing": cmd_timing,
        "quality": cmd_quality,
        "flips": cmd_flips,
    }[args.cmd](args)


if __name__ == "__main__":
    main()
