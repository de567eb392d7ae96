"""FastMCP's proxy (the peer users pick), as a user would run it, for bench/execute.py.

`create_proxy(config, mode="auto")` with an mcpServers config: without mode="auto" FastMCP
mirrors the client's protocol era upstream and so drops a handshake-era upstream for a
2026-07-28 client. Needs the `bench` optional dependencies (`make bench` installs them).

Run: `python bench/fastmcp_proxy.py --config gateway.json [--http PORT]`
"""

import argparse
import json
from pathlib import Path

from fastmcp.server import create_proxy


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", type=Path, required=True)
    parser.add_argument("--http", type=int, metavar="PORT")
    args = parser.parse_args()
    proxy = create_proxy(json.loads(args.config.read_text()), mode="auto", name="fastmcp-proxy")
    if args.http is None:
        proxy.run(transport="stdio", show_banner=False, log_level="WARNING")
    else:
        proxy.run(
            transport="http",
            host="127.0.0.1",
            port=args.http,
            path="/mcp",
            show_banner=False,
            log_level="WARNING",
        )


if __name__ == "__main__":
    main()
