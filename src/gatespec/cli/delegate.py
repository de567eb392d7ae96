"""Commands of the gatespec CLI that belong to another program (the conformance kit, the
generator), run as that program: a child process of this interpreter (`python -m ...`) with
our stdin, stdout and stderr, whose exit status is ours. The runtime never imports them."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence

__all__ = ["run_module", "with_path"]


def run_module(module: str, argv: Sequence[str], env: Mapping[str, str] | None = None) -> int:
    """`python -m module argv...`; its exit status (128 + N when signal N ended it, as a
    shell reports it)."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()  # what we printed comes before what the child prints
    done = subprocess.run([sys.executable, "-m", module, *argv], env=env, check=False)
    return 128 - done.returncode if done.returncode < 0 else done.returncode


def with_path(folder: str) -> dict[str, str]:
    """This process's environment with `folder` first on PYTHONPATH."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (folder, env.get("PYTHONPATH")) if p)
    return env
