"""CLI: ``python -m tollbooth serve --profile gateway|transparent --config PATH``."""

from __future__ import annotations

import argparse
import logging
import sys

import anyio


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tollbooth", description="MCP gateway / transparent proxy")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve", help="serve MCP over stdio in front of the configured upstreams")
    s.add_argument("--profile", choices=("gateway", "transparent"), required=True)
    s.add_argument("--config", required=True, help="client-style JSON/YAML config with 'mcpServers'")
    s.add_argument("--cache-stable", action="store_true", default=None, help="seed 000 §5 cache-stable browsing")
    s.add_argument("--top-k", type=int, default=None)
    s.add_argument("--call-timeout", type=float, default=None)
    s.add_argument("--connect-timeout", type=float, default=None)
    s.add_argument("--namespace-source", choices=("infer", "server"), default=None)
    s.add_argument("--encode-names", action="store_true", default=None)
    s.add_argument("--proxy-result", choices=("passthrough", "envelope"), default=None)
    s.add_argument("--log-level", default="WARNING")
    return p


def main(argv: list[str] | None = None) -> int:
    ns = _parser().parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=ns.log_level.upper(), format="tollbooth %(levelname)s %(name)s: %(message)s")
    from .config import load_settings
    from .serve import serve

    settings = load_settings(ns.config)
    for attr in ("cache_stable", "top_k", "call_timeout", "connect_timeout", "namespace_source", "encode_names", "proxy_result"):
        value = getattr(ns, attr)
        if value is not None:
            setattr(settings, attr, value)
    settings.namespaces()
    anyio.run(serve, settings, ns.profile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
