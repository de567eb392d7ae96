"""Run a command as a child, appending to LOG what it was started with (its GATESPEC_CHAIN)
and how it ended. Usage: python record.py LOG NAME COMMAND [ARGS...]"""

from __future__ import annotations

import os
import subprocess
import sys


def main() -> int:
    log, name, *command = sys.argv[1:]
    with open(log, "a") as out:
        out.write(f"{name} start {os.environ.get('GATESPEC_CHAIN', '')}\n")
    status = subprocess.call(command)
    with open(log, "a") as out:
        out.write(f"{name} exit {status}\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
