"""The functions of layer 1's JSON-lines protocol (docs/conformance.md, "The adapter protocol").

The generated FUNCTIONS (those with vector files) come first, then the kit's own: runtime
algorithms with no vector file whose expected answers the kit computes itself.
"""

from __future__ import annotations

from typing import Final

from gatespec_surface.vectors import FUNCTIONS

__all__ = ["KIT_FUNCTIONS", "all_functions"]

KIT_FUNCTIONS: Final = ("truncate_description", "count_tokens")


def all_functions() -> list[str]:
    """Every function the protocol may send: the generated ones, then the kit's."""
    return [*FUNCTIONS, *KIT_FUNCTIONS]
