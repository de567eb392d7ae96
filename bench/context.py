"""Context cost and browse speed of the gateway surface (issue: runtime).

For the real catalog (../shared/data/tool-retrieval/mcp_catalog.json: 644 tools of 71 MCP
servers, LiveMCPBench Apache-2.0 + github-mcp-server MIT) and for catalogs scaled from 10 to
10,000 tools, counts the exact cl100k_base tokens of what a client loads:

- passthrough: every upstream tool definition as MCP lists it (name, description, inputSchema);
- transparent: the stripped tools/list entries plus the profile's two meta-tools;
- gateway: the three meta-tools (constant whatever the catalog size).

Also: the largest card, catalog build time at 10,000 tools, and tool_browse(query) latency
p50/p99 at 1,000 and 10,000 tools over the dev queries.

Run: `python bench/context.py --out bench/results/context.json`.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from harness import write_result

from gatespec.browse import Browser
from gatespec.cards import build_cards, card_tokens
from gatespec.catalog import Catalog
from gatespec.tokens import count_tokens
from gatespec_surface.budgets import CARD_HARD_CAP_TOKENS
from gatespec_surface.descriptors import tools_for_profile
from gatespec_surface.schemas import STRIPPED_INPUT_SCHEMA

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "tool-retrieval"
SIZES = (10, 100, 1_000, 10_000)


def _tool_json(tool: dict[str, Any]) -> str:
    # The definition as a client receives it from tools/list (and typically puts in context).
    return json.dumps(tool, ensure_ascii=False, separators=(",", ":"))


def load_real() -> dict[str, list[dict[str, Any]]]:
    items = json.loads((DATA / "mcp_catalog.json").read_text(encoding="utf-8"))
    by_server: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        tool = {
            "name": item["name"],
            "description": item.get("description") or "",
            "inputSchema": item["inputSchema"],
        }
        by_server.setdefault(item["server"], []).append(tool)
    return by_server


def scaled(real: dict[str, list[dict[str, Any]]], n: int) -> dict[str, list[dict[str, Any]]]:
    """n tools: the real catalog's tools in a fixed order, copies under fresh server keys."""
    flat = [(server, tool) for server in sorted(real) for tool in real[server]]
    out: dict[str, list[dict[str, Any]]] = {}
    for i in range(n):
        server, tool = flat[i % len(flat)]
        copy_no = i // len(flat)
        key = server if copy_no == 0 else f"{server}-copy{copy_no}"
        out.setdefault(key, []).append(tool)
    return out


def meta_tokens(profile: str) -> int:
    return sum(
        count_tokens(_tool_json(t.model_dump(by_alias=True, exclude_none=True, mode="json")))
        for t in tools_for_profile(profile)
    )


def context_costs(tools_by_server: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    catalog = Catalog.build(tools_by_server)
    cards = build_cards(catalog)
    passthrough = sum(
        count_tokens(_tool_json(t)) for tools in tools_by_server.values() for t in tools
    )
    stripped = [
        {
            "name": catalog.wire_name(item.id),
            "description": cards[item.id]["description"],
            "inputSchema": STRIPPED_INPUT_SCHEMA,
        }
        for item in catalog.items()
    ]
    stripped_tokens = [count_tokens(_tool_json(s)) for s in stripped]
    card_sizes = [card_tokens(c) for c in cards.values()]
    n = len(catalog)
    return {
        "tools": sum(len(t) for t in tools_by_server.values()),
        "catalog_items": n,
        "excluded": len(catalog.excluded),
        "passthrough_tokens": passthrough,
        "transparent_tokens": sum(stripped_tokens) + meta_tokens("transparent"),
        "transparent_per_tool": round(sum(stripped_tokens) / max(n, 1), 1),
        "gateway_tokens": meta_tokens("gateway"),
        "card_tokens_max": max(card_sizes, default=0),
        "card_tokens_mean": round(statistics.fmean(card_sizes), 1) if card_sizes else 0,
        "cards_over_hard_cap": sum(s > CARD_HARD_CAP_TOKENS for s in card_sizes),
    }


def _queries() -> list[str]:
    mcp = json.loads((DATA / "mcp_queries_dev.json").read_text(encoding="utf-8"))
    bfcl = json.loads((DATA / "bfcl_queries_dev.json").read_text(encoding="utf-8"))
    return [q["query"][:512] for q in mcp] + [q["query"][:512] for q in bfcl[:200]]


def browse_speed(
    tools_by_server: dict[str, list[dict[str, Any]]], queries: list[str]
) -> dict[str, Any]:
    gc.collect()
    started = time.perf_counter()
    catalog = Catalog.build(tools_by_server)
    built = time.perf_counter()
    browser = Browser(catalog)
    ready = time.perf_counter()
    latencies = []
    for q in queries:
        t0 = time.perf_counter()
        browser.browse(query=q)
        latencies.append((time.perf_counter() - t0) * 1000)
    latencies.sort()
    return {
        "tools": len(catalog),
        "catalog_build_s": round(built - started, 3),
        "browser_build_s": round(ready - built, 3),
        "browse_p50_ms": round(latencies[len(latencies) // 2], 3),
        "browse_p99_ms": round(latencies[int(len(latencies) * 0.99) - 1], 3),
        "queries": len(latencies),
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "context.json")
    args = parser.parse_args()
    real = load_real()
    result: dict[str, Any] = {"real_catalog": context_costs(real), "scaled": {}}
    for n in SIZES:
        result["scaled"][str(n)] = context_costs(scaled(real, n))
    queries = _queries()
    result["browse"] = {str(n): browse_speed(scaled(real, n), queries) for n in (1_000, 10_000)}
    write_result(args.out, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
