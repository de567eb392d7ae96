"""A real stdio round trip: the official MCP client -> gatespec -> the kit's fixture upstream.

    python tools/smoke_stdio.py [--errlog FILE] -- GATESPEC-COMMAND...

Serves the gateway profile over stdio (GATESPEC-COMMAND, e.g. ``gatespec`` or ``python -m
gatespec``) in front of ``python -m gatespec_conformance.fixtures.upstream --well-formed-only``
(run by this interpreter), lists the gateway's tools, browses for the fixture's echo tool,
executes it and checks the answer. Exits 0, or 1 saying what went wrong. `make dist` runs it
in a fresh venv against the installed wheels; tests/test_distributions.py runs it with
``python -X importtime`` to see what serving imports. The gateway's stderr goes to --errlog.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

# Seed 000 §4.2: the gateway profile's tools. The fixture's echo tool joins `times` copies of
# `text` with spaces (gatespec_conformance.fixtures.upstream).
GATEWAY_TOOLS = ["tool_browse", "tool_execute", "tool_view"]
ECHO_ARGS = {"text": "smoke", "times": 3}
ECHO_ANSWER = "smoke smoke smoke"


async def round_trip(command: list[str], config: Path, errlog: TextIO) -> str:
    params = StdioServerParameters(
        command=command[0], args=[*command[1:], "serve", "--config", str(config)]
    )
    async with Client(stdio_client(params, errlog=errlog)) as client:
        listed = await client.list_tools()
        names = sorted(t.name for t in listed.tools)
        if names != GATEWAY_TOOLS:
            raise SystemExit(f"tools/list: expected {GATEWAY_TOOLS}, got {names}")
        found = await client.call_tool("tool_browse", {"query": "echo the text back"})
        cards = (found.structured_content or {}).get("cards", [])
        ids = [c["id"] for c in cards if c["id"].startswith("fixture:echo")]
        if not ids:
            raise SystemExit(f"tool_browse found no fixture:echo card: {_text(found)}")
        result = await client.call_tool("tool_execute", {"tool_id": ids[0], "args": ECHO_ARGS})
        if result.is_error or ECHO_ANSWER not in _text(result):
            raise SystemExit(
                f"tool_execute({ids[0]}): expected {ECHO_ANSWER!r}, got {_text(result)}"
            )
        return ids[0]


def _text(result: Any) -> str:
    return " ".join(getattr(part, "text", "") for part in result.content)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--errlog", type=Path, help="the gateway's stderr (default: ours)")
    parser.add_argument("command", nargs="+", help="how to run gatespec")
    args = parser.parse_args()
    upstream = [
        sys.executable,
        "-m",
        "gatespec_conformance.fixtures.upstream",
        "--well-formed-only",
    ]
    with tempfile.TemporaryDirectory(prefix="gatespec-smoke-") as tmp:
        config = Path(tmp) / "gateway.json"
        servers: dict[str, Any] = {"fixture": {"command": upstream[0], "args": upstream[1:]}}
        if os.environ.get("PYTHONPATH"):  # the gateway starts it with a clean environment
            servers["fixture"]["env"] = {"PYTHONPATH": os.environ["PYTHONPATH"]}
        config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
        errlog = args.errlog.open("w", encoding="utf-8") if args.errlog else sys.stderr
        try:
            tool_id = anyio.run(round_trip, args.command, config, errlog)
        finally:
            if args.errlog:
                errlog.close()
    print(f"smoke: stdio round trip through {' '.join(args.command)}: {tool_id} answered")
    return 0


if __name__ == "__main__":
    sys.exit(main())
