"""gatespec conformance: checks another implementation of the surface against the spec.

Layer 1 (`functions`): the surface's pure functions, answered by an adapter program over JSON
lines (`gatespec conformance functions -- COMMAND`). Layer 2 (`server`): live MCP checks of a
running gateway. Both report through `gatespec_conformance.report`. See docs/conformance.md.

This module stays import-light: `gatespec --help` builds the parsers without loading hypothesis.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

__all__ = ["DEFAULT_MAX_EXAMPLES", "DEFAULT_SIZES", "LEVELS", "docs_path"]

# What a run checks: gatespec's amended spec strictly, or the seeds as written.
LEVELS: Final = ("spec", "seed")

# Drawn cases per family in a default run (hypothesis' own default of 100 doubles the run time
# for little more coverage; CI can raise it with --max-examples).
DEFAULT_MAX_EXAMPLES: Final = 50
# Catalog sizes the size-dependent layer-2 families also run at: around the small-catalog edge
# (a root of one tool), the cluster threshold (24) and a large catalog.
DEFAULT_SIZES: Final = (1, 5, 20, 21, 100, 500)


def docs_path() -> Path:
    """The kit's documentation: shipped inside the installed package (pyproject's
    force-include of docs/), else the source tree's docs/ (an editable install)."""
    here = Path(__file__).resolve().parent
    installed = here / "docs" / "conformance.md"
    return installed if installed.exists() else here.parent.parent / "docs" / "conformance.md"
