"""python -m tests.independent_gateway --config FILE [--profile gateway|transparent] [--cache-stable]"""

from __future__ import annotations

import argparse
import sys

import anyio

from .cards import encoder
from .server import PROFILES, serve
from .upstream import load_config


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.independent_gateway")
    parser.add_argument("--config", required=True, help="mcpServers JSON file")
    parser.add_argument("--profile", choices=sorted(PROFILES), default="gateway")
    parser.add_argument("--cache-stable", action="store_true", help="seed 000 §5 ordering")
    options = parser.parse_args(argv)
    try:
        targets = load_config(options.config)
    except (OSError, ValueError) as exc:
        print(f"independent_gateway: bad config: {exc}", file=sys.stderr)
        return 2
    encoder()  # load cl100k_base before serving: exits loudly if it is missing
    anyio.run(serve, targets, options.profile, options.cache_stable)
    return 0


if __name__ == "__main__":
    sys.exit(main())
