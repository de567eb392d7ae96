"""Generated invalid inputs, 100,000 per meta-tool of every served profile (issue 12's goal:
0 crashes and 0 unanswered requests). The inputs and the counting are tests/faults/fuzzing.py's
(the fast suite runs 100 of each); here each meta-tool runs in a worker process.

Run: `python bench/fuzz.py --out bench/results/fuzz.json [--count N] [--jobs J]`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("GATESPEC_SEMANTIC", "off")  # lexical ranking: the inputs are invalid

from harness import write_result  # noqa: E402

from tests.faults.fuzzing import meta_tools, run  # noqa: E402


def one(job: tuple[str, str, int]) -> dict[str, Any]:
    profile, tool, count = job
    started = time.perf_counter()
    tally = run(profile, tool, count)
    seconds = time.perf_counter() - started
    return {
        "profile": profile,
        "meta_tool": tool,
        "inputs": tally.inputs,
        "typed_errors": tally.typed,
        "crashes": len(tally.crashes),
        "crash_examples": tally.crashes[:5],
        "unanswered": tally.unanswered,
        "codes": dict(tally.codes.most_common()),
        "seconds": round(seconds, 1),
        "inputs_per_s": round(tally.inputs / seconds),
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    jobs = [(profile, tool, args.count) for profile, tool in meta_tools()]
    with ProcessPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(one, jobs))
    result = {
        "count_per_meta_tool": args.count,
        "rows": rows,
        "total_inputs": sum(r["inputs"] for r in rows),
        "total_crashes": sum(r["crashes"] for r in rows),
        "total_unanswered": sum(r["unanswered"] for r in rows),
    }
    write_result(args.out, result)
    return 0 if result["total_crashes"] == 0 and result["total_unanswered"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
