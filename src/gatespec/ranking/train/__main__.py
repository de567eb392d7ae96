"""`python -m gatespec.ranking.train`: cross-validate, decide, fit and export (pipeline.py);
with --memory, the tool memory instead (memory_cv.py)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from gatespec.ranking.train.data import DEFAULT_DATA
from gatespec.ranking.train.pipeline import Grid, regate, run


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gatespec.ranking.train", description=__doc__)
    ap.add_argument("--out", type=Path, default=Path("ranker/gatespec_ranker"))
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--layers", type=int, nargs="+", default=list(Grid.layers))
    ap.add_argument("--lrs", type=float, nargs="+", default=list(Grid.lrs))
    ap.add_argument("--steps", type=int, default=Grid.steps)
    ap.add_argument("--every", type=int, default=Grid.every)
    ap.add_argument("--val-cap", type=int, default=Grid.val_cap)
    ap.add_argument(
        "--resume",
        type=Path,
        metavar="FILE",
        help="take the fold figures from a stopped run's folds.partial.json (no cross-validation)",
    )
    ap.add_argument(
        "--regate",
        action="store_true",
        help="choose and gate again from --out's folds.json, keeping its artifact (no training)",
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="a small subsample and a short run, to try the pipeline (writes no artifact)",
    )
    ap.add_argument(
        "--memory",
        action="store_true",
        help="build the tool memory (gatespec/ranking/tool_memory.npz) from the dev queries, "
        "its weight chosen by cross-validation (no training)",
    )
    args = ap.parse_args(argv)
    if args.memory:
        from gatespec.ranking.train.memory_cv import build

        print(build(data=args.data)["choice"], file=sys.stderr)
        return 0
    if args.regate:
        print(regate(args.out)["verdict"]["why"], file=sys.stderr)
        return 0
    grid = Grid(
        layers=tuple(args.layers),
        lrs=tuple(args.lrs),
        steps=args.steps,
        every=args.every,
        val_cap=args.val_cap,
    )
    if args.quick:
        grid = Grid(layers=(2,), lrs=(5e-5,), steps=4, every=2, val_cap=40, train_cap=300)
    result = run(args.out, grid, args.data, export=not args.quick, resume=args.resume)
    print(result["verdict"]["why"], file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
