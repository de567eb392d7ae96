"""Snapshot: everything the catalog profiles derive from one catalog build (the admitted
catalog, its browser with the cards and the ranking index, the stripped tools/list entries),
swapped whole when the upstreams change, so a request never sees half a refresh."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mcp.types import Tool

from gatespec.cards import admit_cards
from gatespec.catalog import Catalog
from gatespec_surface.schemas import STRIPPED_INPUT_SCHEMA

if TYPE_CHECKING:
    from gatespec.browse import Browser

__all__ = ["Snapshot", "build_snapshot", "restricted_snapshot"]


@dataclass(frozen=True)
class Snapshot:
    """One catalog build, as every operation of the catalog profiles reads it."""

    catalog: Catalog
    browser: Browser
    stripped: tuple[Tool, ...]


def build_snapshot(listed: Catalog) -> Snapshot:
    """Cards (admitting only tools whose card fits, AM-CARD-OVER-CAP), index, tree, stripped."""
    # Imported here: the browse tree and its ranking (snowballstemmer, ~7 MiB) are not needed
    # until the first build, which the gateway profile defers to the first browse.
    from gatespec.browse import Browser

    catalog, cards = admit_cards(listed)
    stripped = tuple(
        Tool(
            name=catalog.wire_name(item.id),
            description=cards[item.id]["description"],
            input_schema=dict(STRIPPED_INPUT_SCHEMA),
        )
        for item in catalog.items()
    )
    return Snapshot(catalog, Browser(catalog, cards), stripped)


def restricted_snapshot(snapshot: Snapshot, visible: frozenset[str]) -> Snapshot:
    """The snapshot of the visible tools only (AM-ACCESS-NO-LEAK)."""
    catalog = snapshot.catalog.restricted_to(visible)
    stripped = tuple(
        entry
        for item, entry in zip(snapshot.catalog.items(), snapshot.stripped, strict=True)
        if item.id in visible
    )
    return Snapshot(catalog, snapshot.browser.restricted_to(catalog), stripped)
