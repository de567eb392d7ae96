"""Tracemalloc snapshots on request, for bench/memory.py --tracemalloc: a proxy started with
this folder on PYTHONPATH, PYTHONTRACEMALLOC=1 and GATESPEC_BENCH_SNAPSHOTS=<dir> dumps
<dir>/snap-N.pickle when <dir>/take-N appears. A thread of its own watches for the file: a
signal would reach whichever thread the kernel picks, and an idle event loop's main thread may
not run the handler until the next request."""

import os
import threading
import time
import tracemalloc
from pathlib import Path

_DIR = os.environ.get("GATESPEC_BENCH_SNAPSHOTS")


def _watch(folder: Path) -> None:
    n = 0
    while True:
        trigger = folder / f"take-{n}"
        if trigger.exists():
            tracemalloc.take_snapshot().dump(str(folder / f"snap-{n}.tmp"))
            os.replace(folder / f"snap-{n}.tmp", folder / f"snap-{n}.pickle")
            trigger.unlink()
            n += 1
        time.sleep(0.05)


if _DIR and tracemalloc.is_tracing():
    threading.Thread(target=_watch, args=(Path(_DIR),), name="bench-snapshots", daemon=True).start()
