"""python -m tests.independent_gateway --config FILE [--profile P] [--cache-stable]
[--transport stdio|http --port N --access FILE]"""

from __future__ import annotations

import argparse
import sys

import anyio

from .cards import encoder
from .server import SERVED, serve
from .upstream import load_config


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.independent_gateway")
    parser.add_argument("--config", required=True, help="mcpServers JSON file")
    parser.add_argument("--profile", choices=SERVED, default="gateway")
    parser.add_argument("--cache-stable", action="store_true", help="seed 000 §5 ordering")
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--port", type=int, default=0, help="HTTP port (search, with --access)")
    parser.add_argument("--access", help="identities JSON: tokens and allow globs (HTTP)")
    options = parser.parse_args(argv)
    if options.transport == "http" and (options.profile != "search" or not options.access):
        parser.error("--transport http serves the search profile behind --access identities")
    try:
        targets = load_config(options.config)
    except (OSError, ValueError) as exc:
        print(f"independent_gateway: bad config: {exc}", file=sys.stderr)
        return 2
    encoder()  # load cl100k_base before serving: exits loudly if it is missing
    anyio.run(serve, targets, options)
    return 0


if __name__ == "__main__":
    sys.exit(main())
