"""Fine-tuning the query tower: contrastive loss against the shipped model's tool vectors.

Only queries pass through the model being trained; every tool keeps the vector the shipped
model gives it (the catalog's cached vectors stay valid, nothing is re-encoded). A query's
loss is the cross-entropy of its gold tools (several for a multi-step task: their summed
probability) among its candidates: the gold tools, BM25's best non-gold tools (hard
negatives, gatespec.ranking.train.negatives) and a few random ones, at a fixed temperature.
The embeddings and the lower layers stay frozen; :class:`Recipe` says how many of the top
layers train, at which learning rate, for how many steps.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gatespec.ranking.encoder import QUERY_MAX_TOKENS, WordPieces

if TYPE_CHECKING:
    import numpy as np
    import torch

__all__ = ["Example", "Recipe", "encode", "train"]

LAYERS = 6
# Training cuts queries shorter than serving does (QUERY_MAX_TOKENS): a batch is padded to its
# longest query, and a few long multi-step tasks would double the cost of every step.
TRAIN_MAX_TOKENS = 64


@dataclass(frozen=True)
class Recipe:
    layers: int  # how many of the top transformer layers train (6: all of them)
    lr: float
    steps: int
    batch: int = 16
    scale: float = 20.0  # 1 / temperature of the softmax over candidates
    seed: int = 0


@dataclass(frozen=True)
class Example:
    """One training query: its text, its catalog's key, gold and negative tool positions."""

    text: str
    catalog: str
    gold: tuple[int, ...]
    negatives: tuple[int, ...]


def pooled(model: torch.nn.Module, ids: np.ndarray, mask: np.ndarray) -> torch.Tensor:
    """Mean pooling over the attention mask, L2-normalised (the model's own pipeline)."""
    import torch

    hidden = model(
        input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask)
    ).last_hidden_state
    weights = torch.from_numpy(mask).unsqueeze(-1).to(hidden.dtype)
    vectors = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
    return torch.nn.functional.normalize(vectors, dim=-1)


def encode(model: torch.nn.Module, pieces: WordPieces, texts: Sequence[str]) -> np.ndarray:
    """Query vectors from the torch model (evaluation; no gradients)."""
    import numpy as np
    import torch

    model.eval()
    rows = pieces.ids(texts, QUERY_MAX_TOKENS)
    order = sorted(range(len(rows)), key=lambda i: len(rows[i]))
    out = np.zeros((len(texts), 384), dtype=np.float32)
    with torch.no_grad():
        for start in range(0, len(order), 64):
            chunk = order[start : start + 64]
            ids, mask = pieces.pad([rows[i] for i in chunk])
            out[chunk] = pooled(model, ids, mask).numpy()
    return out


def freeze(model: torch.nn.Module, layers: int) -> list[torch.nn.Parameter]:
    """Freeze all but the top `layers` transformer layers; the parameters left to train."""
    trained = {f"encoder.layer.{i}." for i in range(LAYERS - layers, LAYERS)}
    out = []
    for name, param in model.named_parameters():
        param.requires_grad = any(name.startswith(t) for t in trained)
        if param.requires_grad:
            out.append(param)
    return out


def batches(examples: Sequence[Example], recipe: Recipe) -> list[list[Example]]:
    """`recipe.steps` batches, each drawn evenly from the catalogs present (the largest set
    would otherwise be nearly all of every batch), reproducibly from `recipe.seed`."""
    rng = random.Random(recipe.seed)
    by_catalog: dict[str, list[Example]] = {}
    for ex in examples:
        by_catalog.setdefault(ex.catalog, []).append(ex)
    pools = {k: [] for k in by_catalog}  # type: dict[str, list[Example]]
    keys = sorted(by_catalog)
    out = []
    turn = 0
    for _ in range(recipe.steps):
        batch = []
        for _ in range(recipe.batch):
            key = keys[turn % len(keys)]
            turn += 1
            if not pools[key]:
                pools[key] = list(by_catalog[key])
                rng.shuffle(pools[key])
            batch.append(pools[key].pop())
        out.append(batch)
    return out


def train(
    model: torch.nn.Module,
    pieces: WordPieces,
    examples: Sequence[Example],
    tool_vectors: Mapping[str, np.ndarray],
    recipe: Recipe,
    checkpoint: Callable[[int], None] | None = None,
    every: int = 0,
) -> None:
    """Train `model` in place; `checkpoint(step)` after every `every` steps (and at 0)."""
    import torch

    torch.manual_seed(recipe.seed)
    params = freeze(model, recipe.layers)
    opt = torch.optim.AdamW(params, lr=recipe.lr, weight_decay=0.01)
    warmup = max(1, recipe.steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warmup) * max(0.0, 1 - s / recipe.steps)
    )
    tools = {k: torch.from_numpy(v) for k, v in tool_vectors.items()}
    if checkpoint is not None:
        checkpoint(0)
    for step, batch in enumerate(batches(examples, recipe), 1):
        model.train()
        ids, mask = pieces.batch([ex.text for ex in batch], TRAIN_MAX_TOKENS)
        vectors = pooled(model, ids, mask)
        losses = []
        for n, ex in enumerate(batch):
            cand = list(ex.gold) + list(ex.negatives)
            logits = recipe.scale * (tools[ex.catalog][cand] @ vectors[n])
            gold = logits[: len(ex.gold)]
            losses.append(torch.logsumexp(logits, 0) - torch.logsumexp(gold, 0))
        loss = torch.stack(losses).mean()
        loss.backward()
        opt.step()
        sched.step()
        opt.zero_grad()
        if checkpoint is not None and every and step % every == 0:
            checkpoint(step)
