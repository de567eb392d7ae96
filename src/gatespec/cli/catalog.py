"""`gatespec catalog`: connect every upstream once and print the catalog the gateway would
serve (tab-separated rows, JSON, or the registry's compact list)."""

from __future__ import annotations

import argparse
import inspect
import json
from typing import TYPE_CHECKING, Any

import anyio

from gatespec.cli import running
from gatespec.cli.exits import EXIT_UPSTREAMS_DOWN, UsageError
from gatespec.cli.output import say
from gatespec.cli.signals import until_stopped
from gatespec.config import load_config
from gatespec.profiles import registry
from gatespec.rank_cli import ranking_status

if TYPE_CHECKING:
    from gatespec.cli.running import RuntimeFactory
    from gatespec.profiles.lifecycle import ServedRuntime
    from gatespec.runtime_contract import CatalogListing
    from gatespec.upstream import UpstreamStatus


def run(args: argparse.Namespace, factory: RuntimeFactory | None) -> int:
    config = load_config(args.config)
    # seed 001's listTools(compact=true) is one profile's (the aggregate registry's)
    profile = registry.compact_lister().name if args.compact else config.options.profile
    with running.link(args.config), running.upstreams_stopped():
        runtime = running.runtime(factory, config, profile)
        found: list[tuple[Any, list[UpstreamStatus]]] = []

        async def listed() -> None:
            found.append(
                await _listing(runtime, len(config.servers), running.stubs(config), args.compact)
            )

        status = anyio.run(until_stopped, listed(), False)
    if not found:
        return status
    listing, statuses = found[0]
    if args.compact:
        print(json.dumps(listing, indent=2, ensure_ascii=False))
        return 0
    if args.json:
        print(json.dumps(_as_json(listing, statuses), indent=2, ensure_ascii=False))
    else:
        _print_rows(listing, statuses)
    if statuses and all(s.state != "connected" for s in statuses):
        say(
            f"error: every upstream is unavailable ({len(statuses)} configured); the catalog is empty"
        )
        return EXIT_UPSTREAMS_DOWN
    return 0


async def _listing(
    runtime: ServedRuntime, total: int, stubs: frozenset[str], compact: bool = False
) -> tuple[Any, list[UpstreamStatus]]:
    try:
        statuses = await running.start(runtime, total, stubs)
        if compact:
            from gatespec.profiles.lifecycle import CompactListing

            if not isinstance(runtime, CompactListing):
                raise UsageError(f"the {runtime.profile} profile has no compact listing")
            return await runtime.compact_listing(), statuses
        listing = runtime.catalog_listing()
        if inspect.isawaitable(listing):  # the aggregate registry asks its upstreams
            listing = await listing
        return listing, statuses
    finally:
        with anyio.CancelScope(shield=True):
            await runtime.aclose()


def _print_rows(listing: CatalogListing, statuses: list[UpstreamStatus]) -> None:
    # Tab-separated rows under "#" headings: readable, and easy to cut/grep.
    first, second = listing.columns
    what = "tools" if first == "tool_id" else "entries"
    print(f"# {len(listing.tools)} {what}: {first}\t{second}")
    for tool_id, wire_name in listing.tools:
        print(f"{tool_id}\t{wire_name}")
    print(f"# {len(listing.excluded)} excluded: server\ttool\treason")
    for server, name, reason in listing.excluded:
        print(f"{server}\t{name}\t{reason}")
    down = [s for s in statuses if s.state != "connected"]
    if down:
        print(f"# {len(down)} servers unavailable: server\treason")
        for status in down:
            print(f"{status.key}\t{status.reason or status.state}")


def _as_json(listing: CatalogListing, statuses: list[UpstreamStatus]) -> dict[str, Any]:
    return {
        "tools": [dict(zip(listing.columns, pair, strict=True)) for pair in listing.tools],
        "excluded": [{"server": s, "tool": n, "reason": r} for s, n, r in listing.excluded],
        "servers": [{"key": s.key, "state": s.state, "reason": s.reason} for s in statuses],
        "ranking": ranking_status(),
    }
