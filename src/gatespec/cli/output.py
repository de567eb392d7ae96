"""What the `gatespec` command prints besides its results: progress and diagnostics go to
stderr (stdout is the MCP channel under stdio)."""

from __future__ import annotations

import logging
import sys
from typing import TextIO

from gatespec.logs import OneLineFormatter


def say(message: str, stream: TextIO | None = None) -> None:
    print(f"gatespec: {message}", file=stream or sys.stderr, flush=True)


def configure_logging(verbose: int) -> None:
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLineFormatter("gatespec: %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler])
    if verbose == 0:  # the progress lines already say which upstream failed and why
        logging.getLogger("gatespec.upstream.pool").setLevel(logging.ERROR)
        # A reload is news for the operator (at INFO: nothing went wrong), shown by default.
        logging.getLogger("gatespec.reload").setLevel(logging.INFO)
