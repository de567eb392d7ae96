"""A stdio MCP server (handshake era, no SDK) that misbehaves on request, for the fault suite.

Usage: python upstream.py [--pid-file F] [--hang] [--say-argv] [--stderr TEXT]
                          [--exit-after-stderr CODE] [--env-on-stderr NAME]
--hang             never answer anything (the handshake hangs), after writing the pid file
--say-argv         write the command line to stderr at start
--stderr TEXT      write TEXT to stderr at start
--exit-after-stderr CODE   then exit with CODE before the handshake
--env-on-stderr NAME       write NAME=<value of that variable> to stderr at start
--delay SECONDS    wait that long before answering anything (a slow handshake)
--log PATH         append the text of every echo call to PATH, one line each, before
                   answering (the load tests count lost and duplicated upstream calls)
--echo-as MODE     echo answers badly: `utf8` (one invalid UTF-8 byte in the line), `deep`
                   (a result nested 100,000 deep), `noisy` (a notification over the result
                   cap first, then the real answer), `junk` (not JSON at all; garbage only)
Tools: echo(text); big(bytes, hold_file, started_file): answer with a result line of about
`bytes` bytes, writing its first half, then `started_file`, then waiting for `hold_file` to
exist before the rest; crash(): exit mid-call; fail(env): an isError result quoting that
environment variable's value; hang(): never answered; garbage(how): answered the way
`--echo-as how` answers echo (web_upstream.py has the same tools over HTTP).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

TOOLS = [
    {
        "name": "echo",
        "description": "Echo the text back.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    },
    {
        "name": "big",
        "description": "Answer with a very large result.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "bytes": {"type": "integer"},
                "hold_file": {"type": "string"},
                "started_file": {"type": "string"},
            },
            "required": ["bytes"],
        },
    },
    {"name": "crash", "description": "Exit mid-call.", "inputSchema": {"type": "object"}},
    {"name": "hang", "description": "Never answer.", "inputSchema": {"type": "object"}},
    {
        "name": "garbage",
        "description": "Answer with bytes that are no JSON-RPC message.",
        "inputSchema": {"type": "object", "properties": {"how": {"type": "string"}}},
    },
    {
        "name": "fail",
        "description": "Fail with an isError result quoting an environment variable.",
        "inputSchema": {"type": "object", "properties": {"env": {"type": "string"}}},
    },
]


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def big(request_id: Any, args: dict[str, Any]) -> None:
    size = int(args["bytes"])
    opening = {"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text"}]}}
    head = json.dumps(opening)[: -len("}]}}")] + ', "text": "'
    body = "x" * size
    tail = '"}], "isError": false}}\n'
    half = len(body) // 2
    sys.stdout.write(head + body[:half])
    sys.stdout.flush()
    if args.get("started_file"):
        Path(args["started_file"]).write_text("started")
    hold = args.get("hold_file")
    while hold and not Path(hold).exists():
        time.sleep(0.01)
    sys.stdout.write(body[half:] + tail)
    sys.stdout.flush()


def echo_as(mode: str, request_id: Any, text: str) -> None:
    """An echo answer the way `--echo-as MODE` asks (module docstring)."""
    result = {"content": [{"type": "text", "text": text}], "isError": False}
    if mode == "noisy":
        from gatespec_surface.budgets import MAX_UPSTREAM_RESULT_BYTES

        noise = "n" * (MAX_UPSTREAM_RESULT_BYTES + 1024)
        params = {"level": "info", "data": noise}
        send({"jsonrpc": "2.0", "method": "notifications/message", "params": params})
        send({"jsonrpc": "2.0", "id": request_id, "result": result})
        return
    line = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()
    if mode == "junk":
        line = b"this is not JSON at all"
    elif mode == "utf8":
        line = line.replace(b'"text": "', b'"text": "\xff', 1)
    elif mode == "deep":
        nested = b"[" * 100_000 + b"]" * 100_000
        line = line.replace(b'"isError"', b'"deep": ' + nested + b', "isError"', 1)
    sys.stdout.buffer.write(line + b"\n")
    sys.stdout.buffer.flush()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pid-file")
    parser.add_argument("--hang", action="store_true")
    parser.add_argument("--say-argv", action="store_true")
    parser.add_argument("--stderr")
    parser.add_argument("--exit-after-stderr", type=int)
    parser.add_argument("--env-on-stderr")
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--echo-as", choices=["utf8", "deep", "noisy"])
    parser.add_argument("--log")
    opts, _ = parser.parse_known_args()
    if opts.pid_file:
        Path(opts.pid_file).write_text(str(os.getpid()))
    if opts.say_argv:
        sys.stderr.write("started as: " + " ".join(sys.argv) + "\n")
    if opts.stderr:
        sys.stderr.write(opts.stderr + "\n")
    if opts.env_on_stderr:
        sys.stderr.write(f"{opts.env_on_stderr}={os.environ.get(opts.env_on_stderr)}\n")
    sys.stderr.flush()
    if opts.exit_after_stderr is not None:
        sys.exit(opts.exit_after_stderr)
    if opts.hang:
        while True:
            time.sleep(3600)
    time.sleep(opts.delay)
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue  # a notification
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "faults", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": TOOLS}
        elif method == "tools/call":
            name = message["params"]["name"]
            args = message["params"].get("arguments") or {}
            if name == "big":
                big(request_id, args)
                continue
            if name == "crash":
                os._exit(3)
            if name == "hang":
                continue
            if name == "garbage":
                echo_as(str(args.get("how")), request_id, "bad")
                continue
            if name == "fail":
                said = f"login failed with key {os.environ.get(str(args.get('env')))}"
                result = {"content": [{"type": "text", "text": said}], "isError": True}
                send({"jsonrpc": "2.0", "id": request_id, "result": result})
                continue
            text = str(args.get("text", ""))
            if name == "echo" and opts.log:
                with open(opts.log, "a", encoding="utf-8") as log:  # one write per line
                    log.write(text + "\n")
            if name == "echo" and opts.echo_as:
                echo_as(opts.echo_as, request_id, text)
                continue
            result = {"content": [{"type": "text", "text": text}], "isError": False}
        else:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {"code": -32601, "message": f"no method {method}"},
                }
            )
            continue
        send({"jsonrpc": "2.0", "id": request_id, "result": result})


if __name__ == "__main__":
    main()
