"""`gatespec rank`: rank a catalog for a list of queries exactly as tool_browse(query) would.

    gatespec rank --catalog FILE --queries FILE [--k 10] [--out FILE] [--no-learned] [--no-memory]

The catalog is the shared tool-retrieval format, ``[{server, name, description, inputSchema}]``
(the server is the namespace); the queries are ``[{id, query}]``. Writes
``[{id, ranked: ["server/name", ...]}]`` (stdout without --out). Queries that carry ``gold``
(a list of "server/name") also get hit@1, hit@5, MRR and coverage@5 (``gold_groups``, one list
per step, when present; else each gold tool is a step) on stderr.

The ranking is the gateway's own: the catalog is admitted as the gateway admits it (tools it
would exclude are reported and cannot be ranked), a Browser ranks it with the semantic index
complete, and each query's cards come back in tool_browse's order.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gatespec_surface.budgets import BROWSE_MAX_TOP_K

if TYPE_CHECKING:  # imported on use: the gatespec CLI imports this module on every start
    from gatespec.browse import Browser

__all__ = ["METRICS", "add_subcommand", "metrics", "query_metrics", "rank", "ranking_status"]

METRICS = ("hit@1", "hit@5", "mrr", "coverage@5")


class RankInputError(Exception):
    """A catalog or query file that cannot be used (exit status 2)."""


def add_subcommand(commands: Any, command: Any) -> None:
    """Register `rank` through the CLI's `command(commands, name, help, description)`; its
    handler returns the exit status."""
    cmd = command(
        commands,
        "rank",
        "rank a catalog for queries as tool_browse would",
        "Rank a catalog for a list of queries exactly as tool_browse(query) would, and print "
        "hit@1, hit@5, MRR and coverage@5 on stderr when the queries carry gold answers.",
    )
    cmd.add_argument(
        "--catalog",
        required=True,
        type=Path,
        metavar="FILE",
        help="JSON array of {server, name, description, inputSchema}",
    )
    cmd.add_argument(
        "--queries",
        required=True,
        type=Path,
        metavar="FILE",
        help="JSON array of {id, query, gold?}",
    )
    cmd.add_argument("--k", type=int, default=10, help=f"results per query, 1-{BROWSE_MAX_TOP_K}")
    cmd.add_argument("--out", type=Path, metavar="FILE", help="write JSON here (default: stdout)")
    cmd.add_argument(
        "--no-learned",
        action="store_true",
        help="encode queries with the shipped model, not the learned query tower "
        "(gatespec-ranker), for comparison; the same as GATESPEC_LEARNED=off",
    )
    cmd.add_argument(
        "--no-memory",
        action="store_true",
        help="rank without the tool memory (what the dev queries of known tools looked like), "
        "for comparison; the same as GATESPEC_MEMORY=off",
    )
    cmd.set_defaults(run=lambda args, _factory: run(args))


def ranking_status() -> str:
    """Whether queries are ranked hybrid or lexically only, and why (for start-up lines and
    `gatespec catalog`). Checks the switch, the packages and the model file; never loads the
    model (that waits for the first query)."""
    from gatespec.ranking.loading import availability

    return availability().detail


def _load(path: Path, what: str) -> list[Mapping[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RankInputError(f"{what} {path}: {exc}") from None
    if not isinstance(data, list) or not all(isinstance(r, Mapping) for r in data):
        raise RankInputError(f"{what} {path}: expected a JSON array of objects")
    return data


def _browser(rows: Sequence[Mapping[str, Any]]) -> tuple[Browser, dict[str, str]]:
    from gatespec.browse import Browser
    from gatespec.cards import admit_cards
    from gatespec.catalog import Catalog

    by_server: dict[str, list[dict[str, Any]]] = {}
    for n, row in enumerate(rows):
        if not isinstance(row.get("server"), str) or not isinstance(row.get("name"), str):
            raise RankInputError(f"catalog entry {n}: needs string 'server' and 'name'")
        tool = {k: row[k] for k in ("name", "description", "inputSchema") if k in row}
        tool.setdefault("inputSchema", {"type": "object"})
        by_server.setdefault(row["server"], []).append(tool)
    catalog, cards = admit_cards(Catalog.build(by_server))
    for ex in catalog.excluded:
        print(f"gatespec: excluded {ex.server}/{ex.name}: {ex.reason}", file=sys.stderr)
    names = {
        item.id: f"{item.metadata['server']}/{item.metadata['upstream_name']}"
        for item in catalog.items()
    }
    return Browser(catalog, cards, background=False), names


def rank(
    catalog: Sequence[Mapping[str, Any]], queries: Sequence[Mapping[str, Any]], k: int = 10
) -> tuple[list[dict[str, Any]], str]:
    """[{id, ranked}] for every query, and the ranking status line."""
    if not 1 <= k <= BROWSE_MAX_TOP_K:
        raise RankInputError(f"--k must be between 1 and {BROWSE_MAX_TOP_K}")
    browser, names = _browser(catalog)
    out = []
    for n, q in enumerate(queries):
        text = q.get("query")
        if not isinstance(text, str) or not text:
            raise RankInputError(f"query {n}: 'query' must be a non-empty string")
        resp = browser.browse(query=text, top_k=k)
        # A query that matches nothing is answered with the namespaces, as a path browse: no
        # tool is ranked.
        ranked = [] if "path" in resp.structured else [names[c["id"]] for c in resp.cards]
        out.append({"id": q.get("id", n), "ranked": ranked})
    return out, browser.ranker.status


def query_metrics(query: Mapping[str, Any], ranked: Sequence[str]) -> tuple[float, ...] | None:
    """(hit@1, hit@5, reciprocal rank, coverage@5) of one ranking, or None when the query
    carries no gold."""
    gold = query.get("gold")
    if not isinstance(gold, list) or not gold:
        return None
    first = next((i for i, t in enumerate(ranked, 1) if t in gold), None)
    groups = query.get("gold_groups") or [[g] for g in gold]
    top5 = set(ranked[:5])
    return (
        float(first == 1),
        float(first is not None and first <= 5),
        1 / first if first is not None else 0.0,
        sum(1 for g in groups if top5.intersection(g)) / len(groups),
    )


def metrics(
    queries: Sequence[Mapping[str, Any]], results: Sequence[Mapping[str, Any]]
) -> dict[str, float] | None:
    """hit@1, hit@5, MRR and coverage@5 over the queries that carry gold (None if none do)."""
    rows = [
        m
        for q, r in zip(queries, results, strict=True)
        if (m := query_metrics(q, list(r["ranked"]))) is not None
    ]
    if not rows:
        return None
    n = len(rows)
    means = [sum(col) / n for col in zip(*rows, strict=True)]
    return {"queries": n, **{name: round(v, 4) for name, v in zip(METRICS, means, strict=True)}}


def run(args: argparse.Namespace) -> int:
    if args.no_learned:  # read when the model loads, on the first query
        from gatespec.ranking.learned import OFF_ENV

        os.environ[OFF_ENV] = "off"
    if args.no_memory:  # read when the memory loads, on the first query
        from gatespec.ranking.memory import OFF_ENV as MEMORY_OFF

        os.environ[MEMORY_OFF] = "off"
    try:
        catalog = _load(args.catalog, "catalog")
        queries = _load(args.queries, "queries")
        results, status = rank(catalog, queries, args.k)
    except RankInputError as exc:
        print(f"gatespec: error: {exc}", file=sys.stderr)
        return 2
    print(f"gatespec: {status}", file=sys.stderr)
    text = json.dumps(results, ensure_ascii=False, indent=1) + "\n"
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    scores = metrics(queries, results)
    if scores is not None:
        print("gatespec: " + ", ".join(f"{k} {v}" for k, v in scores.items()), file=sys.stderr)
    return 0
