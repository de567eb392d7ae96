"""`gatespec spec …`: the spec tooling of a gatespec repository, run as its own program.

    gatespec spec diff OLD [NEW] [--format text|json]   (python -m generator diff ...)
    gatespec spec changelog OLD [NEW] | lock | version-check

The tooling is the generator's (generator/evolution/): the maintainers' tool, which needs the
spec's IR and is not in the wheel. It runs as `python -m generator` in a child process, from a
repository checkout: the current folder or one above it, or the checkout this runtime runs from
(an editable install). Anywhere else, or without the generator's dependencies (the
`generator` extra), the command says so and exits 2.
"""

from __future__ import annotations

import argparse
import re
import sys
from importlib import metadata, util
from pathlib import Path
from typing import Any

from gatespec.cli.delegate import run_module, with_path

__all__ = ["add_subcommand", "run"]

_MARKERS = ("generator/__main__.py", "spec/surface.yaml")
_EXTRA = re.compile(r"""extra\s*==\s*["']generator["']""")


def checkouts() -> list[Path]:
    """Folders that may be a gatespec repository checkout, nearest first."""
    here = Path.cwd().resolve()
    return [here, *here.parents, Path(__file__).resolve().parents[3]]


def missing_extras() -> list[str]:
    """The generator extra's packages (gatespec's own metadata lists them) that cannot be
    found; none when gatespec runs uninstalled, from its sources."""
    try:
        requires = metadata.requires("gatespec") or []
    except metadata.PackageNotFoundError:
        return []
    wanted = [re.split(r"[\s;<>=!~\[]", r, maxsplit=1)[0] for r in requires if _EXTRA.search(r)]
    return [name for name in wanted if util.find_spec(name.replace("-", "_").lower()) is None]


def run(argv: list[str]) -> int:
    root = next((r for r in checkouts() if all((r / m).is_file() for m in _MARKERS)), None)
    if root is None:
        print(
            "gatespec: error: spec tooling needs the gatespec repository (its generator/ and "
            "spec/): run `gatespec spec ...` inside a checkout, or `python -m generator ...` there",
            file=sys.stderr,
        )
        return 2
    missing = missing_extras()
    if missing:
        print(
            f"gatespec: error: spec tooling needs the generator's dependencies "
            f"({', '.join(missing)} not installed): install them with "
            "`pip install 'gatespec[generator]'` (or `make install` in the checkout)",
            file=sys.stderr,
        )
        return 2
    return run_module("generator", argv, with_path(str(root)))


class _Help(argparse.Action):
    """`gatespec spec --help` is the generator's help."""

    def __call__(self, *_args: Any, **_kwargs: Any) -> None:
        sys.exit(run(["--help"]))


def add_subcommand(commands: Any) -> None:
    """Register `spec` on the CLI's subparsers; everything after it goes to the generator."""
    cmd = commands.add_parser(
        "spec",
        help="spec diff/changelog/version-check (in a repository checkout)",
        description="What a spec change breaks, the changelog and version discipline: run by "
        "`python -m generator` (diff, changelog, lock, version-check) in a repository checkout.",
        add_help=False,
    )
    cmd.add_argument("-h", "--help", action=_Help, nargs=0)
    cmd.add_argument("rest", nargs=argparse.REMAINDER)
    cmd.set_defaults(run=lambda args, _factory: run(args.rest))
