"""Start a clean-room implementation (or its kit adapter), optionally with one mutant applied.

    python tests/cleanroom/launch.py [--mutant NAME] IMPL [MODULE] [-- ARGS...]

IMPL is a folder beside this file (tollbooth, switchyard); MODULE defaults to IMPL itself (its
CLI) and may be `adapter` (tests/cleanroom/adapters/IMPL.py, the kit's layer-1 adapter we wrote
around the implementation's own library). A mutant (tests/cleanroom/mutants.py) is a patch of
the implementation applied in this process before it starts: the implementation's files never
change. The implementations import nothing of this repository.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> None:
    mutant = None
    if argv[:1] == ["--mutant"]:
        mutant, argv = argv[1], argv[2:]
    impl, rest = argv[0], argv[1:]
    module = impl
    if rest and rest[0] != "--":
        module, rest = rest[0], rest[1:]
    if rest[:1] == ["--"]:
        rest = rest[1:]
    sys.path.insert(0, str(HERE / impl))
    sys.path.insert(0, str(HERE.parents[1]))  # the repository root: tests.cleanroom.*
    if mutant is not None:
        from tests.cleanroom.mutants import apply

        apply(impl, mutant)
    target = f"tests.cleanroom.adapters.{impl}" if module == "adapter" else module
    sys.argv = [target, *rest]
    runpy.run_module(target, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
