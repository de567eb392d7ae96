"""What every kit command shares: the usage error (exit 2), the run and report options, and
finishing a run: expected failures applied, the report written in each format asked for."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Collection, Sequence
from typing import Any, TextIO

from gatespec_conformance import DEFAULT_MAX_EXAMPLES, LEVELS
from gatespec_conformance.formats import report_json, write_junit, write_text
from gatespec_conformance.report import (
    ENFORCE,
    CheckResult,
    ExpectedFailures,
    Report,
)

__all__ = [
    "KitUsageError",
    "add_report_options",
    "add_run_options",
    "expected_failures",
    "finish",
    "positive_float",
    "say",
]


class KitUsageError(Exception):
    """A mistake in the command line or its files: one line, exit status 2."""


def say(message: str) -> None:
    print(f"gatespec-conformance: {message}", file=sys.stderr, flush=True)


def positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def _count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return int(text)


def add_report_options(parser: argparse.ArgumentParser) -> None:
    """Level, selection, expected failures and report formats (the same for every layer)."""
    group = parser.add_argument_group("level, selection and reports")
    group.add_argument(
        "--level",
        choices=LEVELS,
        default="spec",
        help="spec (default): gatespec's amended spec, strictly; seed: the seeds' statements "
        "as written, tolerant where they are silent",
    )
    group.add_argument(
        "--select",
        action="append",
        default=[],
        metavar="PATTERN",
        help="run only checks whose name, requirement id or amendment id matches this glob "
        "(repeatable)",
    )
    group.add_argument(
        "--deselect",
        action="append",
        default=[],
        metavar="PATTERN",
        help="leave out checks whose name, requirement id or amendment id matches (repeatable)",
    )
    group.add_argument(
        "--enforce",
        choices=sorted(ENFORCE),
        default="should",
        help="which failures fail the run: must (MUST-level only) or should (default: all "
        "but MAY-only checks)",
    )
    group.add_argument(
        "--expected-failures",
        metavar="FILE",
        help="check names or globs expected to fail, one per line, optionally ' :: MESSAGE'; a "
        "listed check that passes is 'stale' and fails the run",
    )
    group.add_argument(
        "--format", choices=("text", "json"), default="text", help="report format (default text)"
    )
    group.add_argument(
        "--output", "-o", metavar="FILE", help="write the report here (default stdout)"
    )
    group.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report")
    group.add_argument(
        "--all-failures", action="store_true", help="text report: every failure, not one per family"
    )
    group.add_argument("--quiet", "-q", action="store_true", help="no progress display on stderr")
    group.add_argument("--list", action="store_true", help="list the selected checks and exit")


def expected_failures(args: argparse.Namespace) -> ExpectedFailures:
    if not args.expected_failures:
        return ExpectedFailures()
    try:
        return ExpectedFailures.load(args.expected_failures)
    except OSError as exc:
        raise KitUsageError(f"cannot read --expected-failures: {exc}") from None


def finish(
    args: argparse.Namespace,
    suite: str,
    results: Sequence[CheckResult],
    suite_names: Collection[str],
    info: dict[str, Any],
    notes: Sequence[str] = (),
    judged: Callable[[str], bool] | None = None,
) -> int:
    """Apply the expected-failures file, write the report(s); the run's exit status.

    `judged(pattern)`, when given, picks the entries this run may confirm or call stale (a
    layer-2 run of one profile leaves the other profile's entries alone)."""
    expected = expected_failures(args)
    if judged is not None:
        expected.entries = [e for e in expected.entries if judged(e.pattern)]
    results, stale = expected.apply(suite, results, suite_names)
    info = {**info, "level": args.level, "enforce": args.enforce}
    report = Report(
        suite, list(results), stale, info, list(notes), expected.unconfirmed, args.enforce
    )
    if args.junit:
        write_junit([report], args.junit)
    out: TextIO = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    try:
        if args.format == "json":
            json.dump(report_json(report), out, indent=1, ensure_ascii=False)
            out.write("\n")
        else:
            write_text(report, out, verbose=args.all_failures)
    finally:
        if out is not sys.stdout:
            out.close()
    return report.exit_status()


def add_run_options(
    p: argparse.ArgumentParser,
    *,
    examples_help: str,
    timeout: tuple[float, str],
    startup_help: str,
    restarts: tuple[int, str],
) -> None:
    """The options both layers share for drawing cases and minding the process under test."""
    p.add_argument("--seed", type=_count, default=0, help="seed of the drawn cases (default 0)")
    p.add_argument(
        "--max-examples", type=_count, default=DEFAULT_MAX_EXAMPLES, metavar="N", help=examples_help
    )
    p.add_argument(
        "--timeout",
        type=positive_float,
        default=timeout[0],
        help=f"{timeout[1]} (default {timeout[0]:g})",
    )
    p.add_argument(
        "--startup-timeout", type=positive_float, default=60.0, help=f"{startup_help} (default 60)"
    )
    p.add_argument("--restarts", type=_count, default=restarts[0], help=restarts[1])
