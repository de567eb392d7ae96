"""Commands that belong to the conformance kit, a package of its own (gatespec_conformance):
gatespec is an implementation it checks, so the runtime never imports it; these run it as
`python -m gatespec_conformance` (gatespec.cli.delegate)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from importlib import util
from typing import Any

from gatespec.cli.delegate import run_module
from gatespec.cli.output import say

KIT_COMMANDS = {
    "conformance": "check an implementation against the spec (gatespec-conformance)",
    "vectors": "the language-neutral test vectors (gatespec-conformance vectors)",
    "fixture-upstream": "the kit's fixture MCP server (gatespec-conformance fixture-upstream)",
}
_GLOBAL_FLAGS = ("-v", "-vv", "-vvv", "--verbose")


def kit_argv(argv: Sequence[str]) -> list[str] | None:
    """The kit's argv when `argv` names one of its commands (``conformance X`` becomes ``X``)."""
    args = list(argv)
    while args and args[0] in _GLOBAL_FLAGS:
        args.pop(0)
    if not args or args[0] not in KIT_COMMANDS:
        return None
    return args[1:] if args[0] == "conformance" else args


def run_kit(argv: list[str] | None) -> int:
    """The kit's command, run as `python -m gatespec_conformance` (its exit status is ours)."""
    if util.find_spec("gatespec_conformance") is None:
        say(
            "error: the conformance kit is not installed (Python package gatespec_conformance); "
            "install it, then run gatespec-conformance"
        )
        return 2
    return run_module("gatespec_conformance", argv or [])


def add_subcommands(commands: Any) -> None:
    """The kit's commands in `gatespec --help`; main() runs them before parsing."""
    for name, text in KIT_COMMANDS.items():
        cmd = commands.add_parser(name, help=text, description=text, add_help=False)
        cmd.add_argument("rest", nargs=argparse.REMAINDER)
        cmd.set_defaults(run=lambda args, _f, name=name: run_kit(kit_argv([name, *args.rest])))
