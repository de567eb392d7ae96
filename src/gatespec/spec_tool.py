"""`gatespec spec …`: the spec tooling of a gatespec repository, forwarded.

    gatespec spec diff OLD [NEW] [--format text|json]   (python -m generator diff ...)
    gatespec spec changelog OLD [NEW] | lock | version-check

The tooling is the generator's (generator/evolution.py): the maintainers' tool, which needs the
spec's IR and is not in the wheel. It is imported only when asked for, from a repository
checkout: the current folder or one above it, or the checkout this runtime runs from (an
editable install). Anywhere else the command says so and exits 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["add_subcommand", "run"]

_MARKERS = ("generator/__main__.py", "spec/surface.yaml")


def checkouts() -> list[Path]:
    """Folders that may be a gatespec repository checkout, nearest first."""
    here = Path.cwd().resolve()
    return [here, *here.parents, Path(__file__).resolve().parents[2]]


class MissingExtras(Exception):
    """The checkout's generator is there, one of its dependencies is not installed."""


def _generator_main() -> Callable[[list[str]], int] | None:
    root = next((r for r in checkouts() if all((r / m).is_file() for m in _MARKERS)), None)
    if root is not None and str(root) not in sys.path:
        sys.path.insert(0, str(root))
    try:
        module = importlib.import_module("generator.__main__")
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("generator"):
            # gatespec installed from a wheel without the extras: jinja2 and co. are missing
            raise MissingExtras(exc.name or str(exc)) from exc
        return None
    main: Callable[[list[str]], int] | None = getattr(module, "main", None)
    return main if hasattr(module, "evolution") else None  # gatespec's generator, no other


def run(argv: list[str]) -> int:
    try:
        main = _generator_main()
    except MissingExtras as exc:
        print(
            f"gatespec: error: spec tooling needs the generator's dependencies (module {exc} is "
            "not installed): install them with `pip install 'gatespec[generator]'` (or "
            "`make install` in the checkout)",
            file=sys.stderr,
        )
        return 2
    if main is None:
        print(
            "gatespec: error: spec tooling needs the gatespec repository (its generator/ and "
            "spec/): run `gatespec spec ...` inside a checkout, or `python -m generator ...` there",
            file=sys.stderr,
        )
        return 2
    return int(main(argv))


class _Help(argparse.Action):
    """`gatespec spec --help` is the generator's help."""

    def __call__(self, *_args: Any, **_kwargs: Any) -> None:
        sys.exit(run(["--help"]))


def add_subcommand(commands: Any) -> None:
    """Register `spec` on the CLI's subparsers; everything after it goes to the generator."""
    cmd = commands.add_parser(
        "spec",
        help="spec diff/changelog/version-check (in a repository checkout)",
        description="What a spec change breaks, the changelog and version discipline: forwarded "
        "to `python -m generator` (diff, changelog, lock, version-check) in a repository checkout.",
        add_help=False,
    )
    cmd.add_argument("-h", "--help", action=_Help, nargs=0)
    cmd.add_argument("rest", nargs=argparse.REMAINDER)
    cmd.set_defaults(run=lambda args, _factory: run(args.rest))
