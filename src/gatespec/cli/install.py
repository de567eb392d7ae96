"""`gatespec install --client NAME --config FILE [--write]`: the gateway's entry for an MCP
client's configuration file.

    gatespec install --client claude-desktop|cursor|vscode|claude-code --config FILE
                     [--name gatespec] [--command CMD] [--write [--client-config PATH]]

Prints the snippet (stdout) and where it goes (stderr). With --write it adds the entry to the
client's file: a copy of the file is kept first (PATH.bak, PATH.bak.1, …), every other key is
kept, and a file that is not plain JSON (VS Code allows comments) is refused, not rewritten.
The entry runs this installation's gatespec by absolute path (desktop clients do not see the
shell's PATH) unless --command says otherwise (e.g. ``--command "uvx gatespec"``).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CLIENTS", "InstallError", "add_subcommand", "entry", "write_entry"]


class InstallError(Exception):
    """A client file that cannot be used, or a missing gatespec config (exit status 2)."""


@dataclass(frozen=True)
class ClientFile:
    title: str
    key: str  # the object that maps server names to entries
    typed: bool  # whether entries carry "type": "stdio"
    path: str  # the usual file (user-wide, or relative to the project for project files)


CLIENTS = {
    "claude-desktop": ClientFile(
        "Claude Desktop",
        "mcpServers",
        False,
        {
            "darwin": "~/Library/Application Support/Claude/claude_desktop_config.json",
            "win32": "%APPDATA%/Claude/claude_desktop_config.json",
        }.get(sys.platform, "~/.config/Claude/claude_desktop_config.json"),
    ),
    "cursor": ClientFile("Cursor", "mcpServers", False, "~/.cursor/mcp.json"),
    "vscode": ClientFile("VS Code", "servers", True, ".vscode/mcp.json"),
    "claude-code": ClientFile("Claude Code", "mcpServers", True, ".mcp.json"),
}


def _gatespec_command() -> list[str]:
    """This installation's gatespec, by absolute path."""
    script = Path(sys.executable).parent / "gatespec"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "gatespec"]


def entry(client: str, config: Path, command: list[str] | None = None) -> dict[str, Any]:
    """The client's entry that serves gatespec over stdio with `config`."""
    argv = [*(command or _gatespec_command()), "serve", "--config", str(config)]
    found: dict[str, Any] = {"type": "stdio"} if CLIENTS[client].typed else {}
    found.update(command=argv[0], args=argv[1:])
    return found


def _backup(path: Path) -> Path:
    backup = path.with_name(path.name + ".bak")
    n = 0
    while backup.exists():
        n += 1
        backup = path.with_name(f"{path.name}.bak.{n}")
    shutil.copy2(path, backup)
    return backup


def write_entry(path: Path, key: str, name: str, value: dict[str, Any]) -> str:
    """Add or replace `name` under `key` in the JSON file at `path`; says what it did."""
    document: dict[str, Any] = {}
    if path.exists():
        try:
            loaded = json.loads(path.read_text(encoding="utf-8") or "{}")
        except ValueError as exc:
            raise InstallError(
                f"{path} is not plain JSON ({exc}); add the snippet by hand (gatespec install "
                "without --write prints it)"
            ) from None
        if not isinstance(loaded, dict) or not isinstance(loaded.get(key, {}), dict):
            raise InstallError(f"{path}: expected a JSON object with an object {key!r}")
        document = loaded
    servers = document.setdefault(key, {})
    if servers.get(name) == value:
        return f"{path} already has this {name!r} entry; nothing written"
    backup = _backup(path) if path.exists() else None
    servers[name] = value
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".gatespec-tmp")
    temporary.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", "utf-8")
    temporary.replace(path)
    kept = f" (the previous file is {backup})" if backup else ""
    return f"wrote the {name!r} entry to {path}{kept}; restart the client to load it"


# What an MCP client passes to the servers it starts is little more than these (desktop
# clients do not see the shell's environment).
_CLIENT_ENVIRONMENT = ("PATH", "HOME")


def _startable(config: Path) -> None:
    """Refuse a config the gateway could not start from, and warn about one that starts only
    with a variable of this shell that the client will not pass on (issue 24: `make run`'s
    config needs ${GATESPEC_ROOT}, which only make sets)."""
    from gatespec.config import ConfigError, load_config

    client_env = {k: os.environ[k] for k in _CLIENT_ENVIRONMENT if k in os.environ}
    try:
        load_config(config, environ=client_env)
        return
    except ConfigError as exc:
        problem = exc
    try:
        load_config(config)
    except ConfigError as exc:
        raise InstallError(f"the gateway cannot start with this config: {exc}") from None
    print(
        f"gatespec: warning: this config loads here but not with only {', '.join(client_env)} "
        f"set, which is about all a client passes: {problem}; give the variable a default "
        '(${VAR:-default}) or set it in the entry\'s "env"',
        file=sys.stderr,
    )


def add_subcommand(commands: Any, command: Any) -> None:
    """Register `install` through the CLI's `command(commands, name, help, description)`."""
    cmd = command(
        commands,
        "install",
        "print (or add) the gateway's entry for an MCP client's config",
        "Print the entry that makes an MCP client start this gateway over stdio, and the file "
        "it belongs in. With --write, add it to that file (the previous file is kept as .bak).",
    )
    cmd.add_argument("--client", required=True, choices=tuple(CLIENTS), help="the MCP client")
    cmd.add_argument(
        "--config", required=True, type=Path, metavar="FILE", help="the gateway's mcpServers config"
    )
    cmd.add_argument("--name", default="gatespec", help="the server's name in the client")
    cmd.add_argument(
        "--command",
        help="how the client starts gatespec, e.g. 'uvx gatespec' "
        "(default: this installation's gatespec, by absolute path)",
    )
    cmd.add_argument("--write", action="store_true", help="add the entry to the client's file")
    cmd.add_argument(
        "--client-config",
        type=Path,
        metavar="PATH",
        help="the client's file to write (default: the client's usual file)",
    )
    cmd.set_defaults(run=lambda args, _factory: run(args))


def run(args: argparse.Namespace) -> int:
    client = CLIENTS[args.client]
    config = args.config.expanduser().resolve()
    try:
        if not config.is_file():
            raise InstallError(f"{config}: no such file (the gateway's config comes first)")
        _startable(config)
        value = entry(args.client, config, shlex.split(args.command) if args.command else None)
        target = args.client_config or Path(os.path.expandvars(client.path)).expanduser()
        if args.write:
            done = write_entry(target, client.key, args.name, value)
            print(f"gatespec: {done}", file=sys.stderr)
            return 0
    except InstallError as exc:
        print(f"gatespec: error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps({client.key: {args.name: value}}, indent=2, ensure_ascii=False))
    print(
        f"gatespec: add this to {client.title}'s {target} (merge it into {client.key!r}), or "
        "run again with --write",
        file=sys.stderr,
    )
    if args.client == "claude-code":
        line = shlex.join(
            ["claude", "mcp", "add", args.name, "--", value["command"], *value["args"]]
        )
        print(f"gatespec: or: {line}", file=sys.stderr)
    return 0
