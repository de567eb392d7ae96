"""Snapshot: everything the catalog profiles derive from one catalog build (the admitted
catalog, its browser with the cards and the ranking index, the stripped tools/list entries),
swapped whole when the upstreams change, so a request never sees half a refresh."""

from __future__ import annotations

import functools
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

    @functools.cached_property
    def stripped(self) -> tuple[Tool, ...]:
        """The stripped tools/list entries (transparent profile), made on first use: they
        need every card, which the other profiles fit only as browses show them."""
        cards = self.browser.cards
        return tuple(
            Tool(
                name=self.catalog.wire_name(item.id),
                description=cards[item.id]["description"],
                input_schema=dict(STRIPPED_INPUT_SCHEMA),
            )
            for item in self.catalog.items()
        )


def build_snapshot(listed: Catalog) -> Snapshot:
    """Cards (admitting only tools whose card fits, AM-CARD-OVER-CAP), index, tree."""
    # Imported here: the browse tree and its ranking (snowballstemmer, ~7 MiB) are not needed
    # until the first build, which the gateway profile defers to the first browse.
    from gatespec.browse import Browser

    catalog, cards = admit_cards(listed)
    return Snapshot(catalog, Browser(catalog, cards))


def restricted_snapshot(snapshot: Snapshot, visible: frozenset[str]) -> Snapshot:
    """The snapshot of the visible tools only (AM-ACCESS-NO-LEAK); a restricted catalog keeps
    each tool's wire name, so its stripped entries are the visible ones of `snapshot`'s."""
    catalog = snapshot.catalog.restricted_to(visible)
    return Snapshot(catalog, snapshot.browser.restricted_to(catalog))
