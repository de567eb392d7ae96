"""The kit, run in this process against a clean-room implementation (or one of its mutants)
started by tests/cleanroom/launch.py: layer 1 through our adapter around the implementation's
own library, layer 2 through the implementation's own command line."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gatespec_conformance import cli
from tests.conformance.mutants.harness import MAX_EXAMPLES, run_kit

LAUNCH = str(Path(__file__).resolve().parent / "launch.py")


def launch(impl: str, *args: str, mutant: str | None = None) -> list[str]:
    head = [sys.executable, LAUNCH, *(["--mutant", mutant] if mutant else []), impl]
    return [*head, *args]


def serve_command(impl: str, profile: str, *extra: str, mutant: str | None = None) -> list[str]:
    return launch(
        impl, "--", "serve", "--profile", profile, *extra, "--config", "{mcp_config}", mutant=mutant
    )


def run_functions(
    directory: Path,
    impl: str,
    level: str,
    *,
    select: Sequence[str] = (),
    expected_failures: str | None = None,
    mutant: str | None = None,
    max_examples: str = MAX_EXAMPLES,
) -> tuple[int, dict[str, Any]]:
    """`gatespec-conformance functions` against the implementation's adapter."""
    report = directory / f"functions-{time.monotonic_ns()}.json"
    argv = ["functions", "--level", level, "--max-examples", max_examples, "-q"]
    argv += ["--format", "json", "-o", str(report)]
    for pattern in select:
        argv += ["--select", pattern]
    if expected_failures is not None:
        listed = directory / "expected-failures.txt"
        listed.write_text(expected_failures)
        argv += ["--expected-failures", str(listed)]
    status = cli.main([*argv, "--", *launch(impl, "adapter", mutant=mutant)])
    return status, json.loads(report.read_text())


def run_server(
    directory: Path,
    impl: str,
    profile: str,
    level: str,
    *,
    extra: Sequence[str] = (),
    options: Sequence[str] = (),
    select: Sequence[str] = (),
    expected_failures: str | None = None,
    mutant: str | None = None,
) -> tuple[int, dict[str, Any]]:
    """`gatespec-conformance server` against the implementation serving `profile` over stdio
    in front of the kit's fixture ({mcp_config})."""
    return run_kit(
        directory,
        profile,
        command=serve_command(impl, profile, *extra, mutant=mutant),
        options=["--level", level, "--hang-timeout", "5", "--timeout", "10", *options],
        select=select,
        expected_failures=expected_failures,
    )


def failures(report: dict[str, Any]) -> list[tuple[str, str, tuple[str, ...]]]:
    """(check, cause, requirements) of every unexpected failure."""
    out = []
    for check in report["checks"]:
        if check["outcome"] != "fail":
            continue
        for failure in check.get("failures") or [
            {"cause": check.get("reason", ""), "requirements": []}
        ]:
            reqs = tuple(_req_id(r) for r in failure.get("requirements", []))
            out.append((check["name"], failure.get("cause", ""), reqs))
    return out


def _req_id(ref: Any) -> str:
    return ref if isinstance(ref, str) else str(ref.get("id"))
