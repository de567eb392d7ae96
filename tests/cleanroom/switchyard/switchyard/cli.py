"""`python -m switchyard serve --profile search|aggregate --config PATH [--http HOST:PORT]`"""

from __future__ import annotations

import argparse
import logging
import sys

import anyio

from .app import PROFILES, Gateway
from .config import ConfigError, load_config


def parse_hostport(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        raise argparse.ArgumentTypeError("expected HOST:PORT")
    host = host.strip("[]") or "127.0.0.1"
    return host, int(port)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="switchyard", description="MCP gateway")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the gateway")
    serve.add_argument("--profile", required=True, choices=PROFILES)
    serve.add_argument("--config", required=True, help="path to the JSON config file")
    serve.add_argument("--http", type=parse_hostport, default=None, metavar="HOST:PORT",
                       help="serve Streamable HTTP (/mcp) and HTTP+SSE (/sse, /messages) instead of stdio")
    serve.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    return parser


async def _run(profile: str, config, http: tuple[str, int] | None) -> None:
    async with Gateway(profile, config) as gateway:
        if http is None:
            await gateway.serve_stdio()
        else:
            await gateway.serve_http(*http)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Logs go to stderr: over stdio, stdout carries the protocol.
    logging.basicConfig(level=args.log_level, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"switchyard: {exc}", file=sys.stderr)
        return 2
    try:
        anyio.run(_run, args.profile, config, args.http)
    except KeyboardInterrupt:
        pass
    return 0
