"""The development data the learned ranker trains on, and how it is split.

The sets are the shared tool-retrieval dev files (their README: sources and licences). Every
split is a hash of a stable key, so a run is reproducible and a query or tool lands in the
same part on every machine:

* :func:`split_of`: the benchmark's own split of the queries (bench/retrieval.py): 0..4 are
  cross-validation folds, :data:`HELD_OUT` is a fifth that nothing is ever trained or tuned
  on, so the benchmark's held-out figures of the learned ranker stay honest;
* :func:`half_of`: which half of the tools a group falls in for the BY-SERVER / BY-TOOL
  split (MCP tools grouped by server, the others one group per tool): a fold trains on the
  queries whose gold tools all lie in one half and is scored on those whose gold tools all
  lie in the other, so its validation tools never appear in training;
* ordinary folds: :func:`split_of`'s folds, two at a time.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gatespec.ranking.documents import Document

__all__ = [
    "DEFAULT_DATA",
    "FOLDS",
    "HELD_OUT",
    "SETS",
    "DevSet",
    "by_tool_folds",
    "catalog_docs",
    "group_of",
    "half_of",
    "load_sets",
    "ordinary_folds",
    "queries",
    "split_of",
]

DEFAULT_DATA = Path("/work/shared/data/tool-retrieval")
FOLDS = 5
HELD_OUT = FOLDS  # split_of's value for the held-out fifth
SETS = ("mcp", "bfcl", "bfcl_live", "metatool")
# Sets whose tools are grouped by server for the by-server split (the others: by tool; BFCL's
# and MetaTool's "servers" are one label for the whole catalog).
_BY_SERVER = frozenset({"mcp"})


def _hash(key: str) -> int:
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big")


def split_of(query_id: object) -> int:
    """0..4: a cross-validation fold; 5: held out (a fifth of the queries, by id hash)."""
    h = _hash(str(query_id))
    return HELD_OUT if h % 5 == 0 else (h // 5) % FOLDS


def group_of(set_name: str, tool_id: str) -> str:
    """The unit the by-server split keeps together: "server" for MCP, the tool otherwise."""
    return tool_id.split("/", 1)[0] if set_name in _BY_SERVER else tool_id


def half_of(set_name: str, tool_id: str) -> int:
    """0 or 1: the half of the tools `tool_id` belongs to in the by-server split."""
    return _hash(f"half:{group_of(set_name, tool_id)}") % 2


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


@dataclass
class DevSet:
    """One set: its catalog rows and labelled queries."""

    name: str
    catalog: list[dict[str, Any]]
    queries: list[dict[str, Any]] = field(default_factory=list)


def load_sets(data: Path = DEFAULT_DATA) -> dict[str, DevSet]:
    mcp = load_json(data / "mcp_catalog.json")
    bfcl = load_json(data / "bfcl_catalog_dedup.json")
    meta = load_json(data / "metatool_catalog.json")
    return {
        "mcp": DevSet("mcp", mcp, queries(load_json(data / "mcp_queries_dev.json"), "gold")),
        "bfcl": DevSet(
            "bfcl", bfcl, queries(load_json(data / "bfcl_queries_dev.json"), "gold_by_name")
        ),
        "bfcl_live": DevSet(
            "bfcl_live",
            bfcl,
            queries(load_json(data / "bfcl_live_queries_dev.json"), "gold_by_name"),
        ),
        "metatool": DevSet(
            "metatool", meta, queries(load_json(data / "metatool_queries_dev.json"), "gold")
        ),
    }


def trainable(qs: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The queries anything may be trained or tuned on: all but the benchmark's held-out fifth."""
    return [q for q in qs if split_of(q["id"]) != HELD_OUT]


def by_tool_folds(
    set_name: str, qs: Sequence[Mapping[str, Any]]
) -> list[tuple[list[int], list[int]]]:
    """Two (train, validation) folds of positions in `qs`: validation = the queries whose gold
    tools all lie in one half, train = those with no gold tool in that half."""
    halves = [{half_of(set_name, g) for g in q["gold"]} for q in qs]
    folds = []
    for held in (0, 1):
        train = [i for i, h in enumerate(halves) if held not in h]
        val = [i for i, h in enumerate(halves) if h == {held}]
        folds.append((train, val))
    return folds


def ordinary_folds(qs: Sequence[Mapping[str, Any]]) -> list[tuple[list[int], list[int]]]:
    """Two (train, validation) folds of positions in `qs`, by query (folds 0-1 vs 2-4 of
    :func:`split_of`, and the other way round); held-out queries are in neither."""
    parts = [split_of(q["id"]) for q in qs]
    first = [i for i, p in enumerate(parts) if p in (0, 1)]
    second = [i for i, p in enumerate(parts) if p in (2, 3, 4)]
    return [(second, first), (first, second)]
