"""The `gatespec` command line: every command, its options and their help texts. Each command
records its handler as `run(args, runtime_factory) -> exit status`."""

from __future__ import annotations

import argparse
from typing import Any

from gatespec import rank_cli
from gatespec.cli import catalog, demo, install, kit, serve, spec
from gatespec.cli.exits import EXIT_UPSTREAMS_DOWN, exit_statuses
from gatespec.config import GatewayOptions
from gatespec.profiles import registry


class HelpFormatter(argparse.HelpFormatter):
    """An option with a default says what it is (an option left unset says so in its text)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        unset = action.default in (None, False, argparse.SUPPRESS)
        if unset or "default" in text or not action.option_strings:
            return text
        return f"{text} (default: %(default)s)"


class _TopHelp(argparse.RawDescriptionHelpFormatter, HelpFormatter):
    """The top level keeps its exit-status table as written."""


_DEFAULTS = GatewayOptions()  # what serve uses when neither the option nor the config says


def command(commands: Any, name: str, help: str, description: str) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        name, help=help, description=description, formatter_class=HelpFormatter
    )
    return parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gatespec",
        description="A spec-driven MCP gateway in front of many MCP servers.\n"
        "`gatespec COMMAND --help` describes each command.",
        epilog=exit_statuses(),
        formatter_class=_TopHelp,
    )
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="more logging (-vv: debug)"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_serve(commands)
    _add_catalog(commands)
    demo_cmd = command(
        commands,
        "demo",
        "run the built-in demonstration",
        "A scripted agent session against the embedded catalog of five MCP reference servers, "
        "served by stubs that echo calls: browse, a refused call, execute, view, and the "
        "context cost next to passing every tool through. Needs no configuration.",
    )
    demo_cmd.set_defaults(run=lambda args, _factory: demo.run_demo())
    rank_cli.add_subcommand(commands, command)
    install.add_subcommand(commands, command)
    spec.add_subcommand(commands)
    kit.add_subcommands(commands)
    return parser


def _add_serve(commands: Any) -> None:
    cmd = command(
        commands,
        "serve",
        "serve the gateway over stdio or HTTP",
        "Connect to every upstream in the config and serve the gateway's profile to one MCP "
        "client over stdio, or to many over HTTP (Streamable HTTP at /mcp, legacy SSE at /sse). "
        "Options given here override the config's gateway block.",
    )
    source = cmd.add_mutually_exclusive_group(required=True)
    source.add_argument("--config", metavar="FILE", help="mcpServers config (JSON or YAML)")
    source.add_argument(
        "--demo",
        action="store_true",
        help="serve the embedded catalog through stubs that echo calls (no real servers)",
    )
    cmd.add_argument(
        "--profile",
        "--mode",  # the option's name before 0.2, still accepted
        dest="profile",
        choices=registry.SERVED,
        help=f"exposure profile (default: the config's gateway.profile, else {_DEFAULTS.profile})",
    )
    cmd.add_argument(
        "--transport",
        choices=("stdio", "http"),
        help=f"how clients connect (default: the config's gateway.transport, else {_DEFAULTS.transport})",
    )
    cmd.add_argument(
        "--host",
        help=f"HTTP bind address (default: the config's gateway.host, else {_DEFAULTS.host})",
    )
    cmd.add_argument(
        "--port",
        type=_port,
        help=f"HTTP port, 0 picks a free one (default: the config's gateway.port, else {_DEFAULTS.port})",
    )
    cmd.add_argument(
        "--metrics-port",
        type=_port,
        help="serving stdio: also serve Prometheus metrics at http://HOST:PORT/metrics and "
        "the status page at /status (default: the config's gateway.metrics_port, else none; "
        "over HTTP both are always served beside /mcp)",
    )
    cmd.set_defaults(run=serve.run)


def _add_catalog(commands: Any) -> None:
    cmd = command(
        commands,
        "catalog",
        "list tool ids, wire names and exclusions",
        "Connect to every upstream in the config once and print the catalog the gateway would "
        "serve: every tool id and wire name, every excluded tool and why, and every upstream "
        f"that is unavailable. Exits {EXIT_UPSTREAMS_DOWN} when every configured upstream is "
        "unavailable.",
    )
    cmd.add_argument("--config", metavar="FILE", required=True, help="mcpServers config")
    cmd.add_argument("--json", action="store_true", help="one JSON document on stdout")
    cmd.add_argument(
        "--compact",
        action="store_true",
        help="the registry's compact tool list: server__tool, description and server (JSON)",
    )
    cmd.set_defaults(run=catalog.run)


def _port(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number 0-65535, got {text!r}")
    return int(text)
