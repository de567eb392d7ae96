"""The ``gatespec-conformance`` command (also ``python -m gatespec_conformance``).

    gatespec-conformance functions [options] [-- COMMAND...]   layer 1: pure functions
    gatespec-conformance server --profile P [options] [--url URL | -- COMMAND...]
                                                               layer 2: live MCP checks
    gatespec-conformance vectors export DIR                    the language-neutral vectors
    gatespec-conformance fixture-upstream [--call-log FILE]    layer 2's upstream MCP server

``gatespec conformance …``, ``gatespec vectors export`` and ``gatespec fixture-upstream`` forward
here. `add_report_options` and `finish` are the parts every layer shares: the same flags and
the same level, selection, expected-failures, text, JSON and JUnit handling.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gatespec_conformance import DEFAULT_SIZES, docs_path
from gatespec_conformance.fixtures.upstream import positive_count
from gatespec_conformance.options import (
    KitUsageError,
    add_report_options,
    add_run_options,
    expected_failures,
    finish,
    positive_float,
    say,
)
from gatespec_conformance.report import (
    Progress,
    Selector,
)

__all__ = ["KitUsageError", "add_report_options", "build_parser", "finish", "main"]


# ------------------------------------------------------------------ functions (layer 1)


def _functions(args: argparse.Namespace, *_: Any) -> int:
    from gatespec_conformance.functions import run as fx
    from gatespec_surface import SPEC_HASH, SPEC_VERSION

    expected_failures(args)  # a missing file is a usage error before minutes of work
    notes: list[str] = []
    command = list(args.adapter)
    if command[:1] == ["--"]:
        command = command[1:]
    own = not command  # gatespec is only ever an implementation under test: its command line
    command = command or [sys.executable, "-m", "gatespec.adapter"]
    if not args.list:
        _script_exists(command)  # before the cases are drawn (a minute)
    every = [c.at_level(args.level) for c in fx.build_cases(args.seed, args.max_examples, notes)]
    selector = Selector(args.select, args.deselect)
    cases = [c for c in every if selector.matches(c.name, c.requirement_ids, c.amended_by)]
    if not cases:
        shown = " ".join([*args.select, *(f"--deselect {d}" for d in args.deselect)])
        raise KitUsageError(f"--select {shown} selects none of {len(every)} checks")
    orphans = sorted({c.group or c.name.rsplit("/", 1)[0] for c in cases if not c.requirements})
    if orphans:  # worth saying: such a failure breaks no stated requirement (yet)
        unbound = sum(1 for c in cases if not c.requirements)
        notes.append(
            f"{unbound} checks evidence no requirement (the spec states a rule no requirement "
            "holds): " + ", ".join(orphans)
        )
    if args.list:
        for c in cases:
            reqs = ", ".join(r.shown() for r in c.requirements) or "-"
            print(f"{c.name}\t{reqs}" + (f"\tskip: {c.skip}" if c.skip else ""))
        return 0
    if own:
        notes.append("no adapter command given: checking gatespec's adapter (gatespec.adapter)")
    progress = Progress(fx.SUITE, len(cases), enabled=not args.quiet)
    try:
        results, run = fx.run_cases(
            command,
            cases,
            timeout=args.timeout,
            startup_timeout=args.startup_timeout,
            restarts=args.restarts,
            progress=progress,
            level=args.level,
        )
    finally:
        progress.close()
    info = {
        "implementation": run.implementation,
        "adapter_spec_version": run.spec_version,
        "spec_version": SPEC_VERSION,
        "spec_hash": SPEC_HASH[:16],
        "seed": args.seed,
        "max_examples": args.max_examples,
        "restarts": run.restarts,
        "command": " ".join(command),
    }
    return finish(args, fx.SUITE, results, [c.name for c in every], info, [*notes, *run.notes])


def _script_exists(command: list[str]) -> None:
    """A Python script the command names that is not there is one usage error before any check
    runs (the quick start's docs/examples path holds only in a source checkout), instead of an
    adapter that dies at its first answer."""
    if len(command) < 2 or not Path(command[0]).name.startswith("python"):
        return
    script = command[1]
    if script.startswith("-") or Path(script).exists():
        return
    shipped = docs_path().parent / "examples" / Path(script).name
    hint = f"; the kit ships it at {shipped}" if shipped.is_file() else ""
    raise KitUsageError(f"{script}: no such file (relative to {Path.cwd()}){hint}")


def _add_functions(commands: Any) -> None:
    p = commands.add_parser(
        "functions",
        help="check another implementation's pure functions through an adapter program",
        description="Layer 1: start the adapter COMMAND and check its answers to every vector "
        "case and to cases drawn from the generated strategies (docs/conformance.md). Without "
        "a COMMAND, gatespec's own reference adapter is checked.",
    )
    add_run_options(
        p,
        examples_help="drawn cases per family (default %(default)s; 0: vector cases only)",
        timeout=(10.0, "seconds per answer"),
        startup_help="seconds for the handshake",
        restarts=(3, "restart the adapter this many times after a crash or timeout (default 3)"),
    )
    add_report_options(p)
    # dest "adapter", not "command": the host CLI's subparsers already use that name.
    p.add_argument("adapter", nargs="*", metavar="-- COMMAND", help="the adapter program")
    p.set_defaults(run=_guarded(_functions))


# ------------------------------------------------------------------ server (layer 2)


def _server(args: argparse.Namespace, *_: Any) -> int:
    import functools
    import shutil
    import time
    from pathlib import Path

    import anyio

    from gatespec_conformance.live import run as sv
    from gatespec_conformance.live.checks import family_requirements
    from gatespec_conformance.live.client import PROTOCOLS, CallLog, Target
    from gatespec_conformance.live.facts import LiveOptions

    expected_failures(args)
    if args.profile not in sv.SERVED:
        raise KitUsageError(f"--profile must be one of {', '.join(sv.SERVED)}")
    if args.protocol not in PROTOCOLS:
        raise KitUsageError(f"--protocol must be one of {', '.join(PROTOCOLS)}")
    command = list(args.iut)
    if command[:1] == ["--"]:
        command = command[1:]
    if args.url and command:
        raise KitUsageError("give either --url or a COMMAND, not both")
    notes: list[str] = []
    selector = Selector(args.select, args.deselect)
    families = sv.plan(args.profile, selector, notes)
    if not families:
        raise KitUsageError(f"--select {' '.join(args.select)} selects no {args.profile} check")
    options = LiveOptions(
        profile=args.profile,
        seed=args.seed,
        max_examples=args.max_examples,
        timeout=args.timeout,
        hang_timeout=args.hang_timeout,
        cache_stable=args.cache_stable,
        namespace=args.namespace,
        connect_timeout=args.startup_timeout,
        level=args.level,
        tools=args.tools,
        well_formed_only=args.well_formed_only,
        restricted_token=_secret(args.restricted_token),
        expired_token=_secret(args.expired_token),
    )
    if args.list:
        for family in families:
            refs = family_requirements(family, args.profile)
            shown = ", ".join(r.shown() for r in refs) or "-"
            print(f"{family.name(args.profile)}\t{shown}")
            for case in family.draw(args.seed, args.max_examples) if family.draw else ():
                print(f"{family.name(args.profile)}/{case.case}\t{shown}")
        return 0
    workdir = sv.make_workdir()
    sized: list[Any] = []
    try:
        if args.url:
            target = Target(url=args.url, protocol=args.protocol, token=_secret(args.token))
            log = CallLog(args.call_log) if args.call_log else None
            if log is None:
                notes.append("no --call-log: checks that prove what reached upstream are skipped")
            if args.sizes:
                notes.append("--url: the size-dependent families ran on the served catalog only")
        else:
            if not command:
                notes.append("no COMMAND given: checking gatespec itself")
            fixture = (args.tools, args.well_formed_only)
            call_log = Path(args.call_log) if args.call_log else None
            target, log = _stdio_target(args, command, workdir, call_log, *fixture)
            options = dataclasses.replace(options, config_file=_own_config(command, workdir))
            for n in args.sizes:
                size_target, size_log = _stdio_target(
                    args, command, workdir / f"tools-{n}", None, n, True
                )
                sized.append(sv.Sized(n, size_target, size_log))
        started = time.monotonic()
        run = anyio.run(
            functools.partial(
                sv.run_suite,
                target,
                options,
                log,
                selector,
                restarts=args.restarts,
                progress_enabled=not args.quiet,
                sized=sized,
            )
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if args.select and not run.results:
        # A family such as errors/payload judges the answers the other families collected: on
        # its own it has nothing to judge, and an empty run must not read as a pass.
        raise KitUsageError(
            f"--select {' '.join(args.select)} ran no check (errors/payload, for one, judges the "
            "error answers of the families it runs with: select those too)"
        )
    sv.describe_run(run, options, target, started)
    return finish(
        args,
        sv.SUITE,
        run.results,
        run.names,
        run.info,
        [*notes, *run.notes],
        judged=sv.entry_filter(args.profile, run.ran),
    )


def _secret(value: str | None) -> str | None:
    """A token option: the token, or "env:NAME" for the value of environment variable NAME
    (so that a token need not appear on a command line)."""
    import os

    if value is None or not value.startswith("env:"):
        return value
    name = value[len("env:") :]
    if name not in os.environ:
        raise KitUsageError(f"environment variable {name} is not set")
    return os.environ[name]


def _stdio_target(
    args: argparse.Namespace,
    command: list[str],
    directory: Any,
    call_log: Any,
    tools: int | None,
    well_formed_only: bool,
) -> tuple[Any, Any]:
    """(the IUT started over stdio fronting a fixture of this size, that fixture's call log)."""
    from gatespec_conformance.live import run as sv
    from gatespec_conformance.live.client import CallLog, Target

    files = sv.fixture_files(directory, call_log, tools, well_formed_only, args.profile)
    if not command:
        command = sv.default_gatespec_command(
            args.profile, args.cache_stable, directory, tools, well_formed_only
        )
    argv = tuple(sv.expand_command(command, files))
    return Target(command=argv, env=files.env(), protocol=args.protocol), CallLog(files.call_log)


def _own_config(command: list[str], directory: Any) -> Any:
    """The IUT's config file when the kit wrote it: the default command's, or the {mcp_config}
    file a COMMAND names (None otherwise)."""
    from pathlib import Path

    if not command:
        return Path(directory) / "gatespec.json"
    if any("{mcp_config}" in arg for arg in command):
        return Path(directory) / "mcp.json"
    return None


def _sizes(text: str) -> list[int]:
    """ "1,20,100"; "" for none, also as the literal quotes '' or "" that reach the kit when
    the option sits inside a quoted string (KIT_OPTS="--sizes ''")."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1].strip()
    if not text:
        return []
    try:
        sizes = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected sizes like 1,20,100, got {text!r}") from None
    if any(n < 1 for n in sizes):
        raise argparse.ArgumentTypeError("every size is at least 1")
    return sizes


def _add_server(commands: Any) -> None:
    p = commands.add_parser(
        "server",
        help="live MCP checks of a running gateway fronting the fixture upstream",
        description="Layer 2: start the IUT COMMAND over stdio (or reach it at --url) and "
        "check its live MCP surface for one profile (docs/conformance.md). COMMAND may use "
        "{fixture_command}, {call_log}, {mcp_config} and {python}. Without a COMMAND or "
        "--url, gatespec itself is checked.",
    )
    p.add_argument(
        "--profile",
        required=True,
        metavar="PROFILE",
        help="gateway, transparent, search or aggregate",
    )
    p.add_argument("--url", metavar="URL", help="a running IUT's Streamable HTTP endpoint")
    p.add_argument(
        "--call-log",
        metavar="FILE",
        help="the fixture's call log (with --url: the file given to fixture-upstream)",
    )
    p.add_argument("--namespace", help="the fixture's namespace in the IUT (default: discover)")
    tokens = p.add_argument_group(
        "identities (with --url; a value env:NAME reads environment variable NAME)"
    )
    tokens.add_argument(
        "--token", metavar="TOKEN", help="bearer token of the run's identity (sees every tool)"
    )
    tokens.add_argument(
        "--restricted-token",
        metavar="TOKEN",
        help="bearer token of an identity that may see only the fixture tools the access "
        "checks name (docs/conformance.md, Access control); enables the access/* checks",
    )
    tokens.add_argument(
        "--expired-token", metavar="TOKEN", help="an expired token the IUT must refuse"
    )
    p.add_argument(
        "--cache-stable",
        action="store_true",
        help="the IUT was started with cache_stable: run the §5 session checks",
    )
    p.add_argument(
        "--protocol",
        default="auto",
        metavar="MODE",
        help="client protocol: auto (default), legacy or 2026-07-28",
    )
    add_run_options(
        p,
        examples_help="drawn cases per family (default %(default)s)",
        timeout=(30.0, "seconds per call"),
        startup_help="seconds to connect",
        restarts=(
            2,
            "reconnect (stdio: restart) the IUT this many times after it dies (default 2)",
        ),
    )
    p.add_argument(
        "--tools",
        type=positive_count,
        metavar="N",
        help="the fixture serves N well-formed tools (its first N, then generated ones)",
    )
    p.add_argument(
        "--well-formed-only",
        action="store_true",
        help="the fixture serves no malformed or must-be-excluded entries",
    )
    p.add_argument(
        "--sizes",
        type=_sizes,
        default=list(DEFAULT_SIZES),
        metavar="N,N,...",
        help="also run the size-dependent families (root browse, walk, clusters) on fixtures of "
        "these sizes, well-formed only (default %(default)s; '' for none; stdio only)",
    )
    p.add_argument(
        "--hang-timeout",
        type=positive_float,
        default=60.0,
        help="seconds within which the hanging tool must give TIMEOUT (default 60)",
    )
    add_report_options(p)
    p.add_argument("iut", nargs="*", metavar="-- COMMAND", help="the IUT's command (stdio)")
    p.set_defaults(run=_guarded(_server))


# ------------------------------------------------------------------ fixture upstream


def _fixture(args: argparse.Namespace, *_: Any) -> int:
    from gatespec_conformance.fixtures import upstream as fixture_upstream

    return fixture_upstream.run(args)


def _add_fixture(commands: Any) -> None:
    from gatespec_conformance.fixtures import (
        upstream as fixture_upstream,  # light: the SDK is imported on use
    )

    p = commands.add_parser(
        "fixture-upstream",
        help="a stdio MCP server with layer 2's known, adversarial catalog",
        description="Serve the fixture upstream over stdio (docs/conformance.md). Every "
        "tools/call is appended to --call-log as one JSON line {name, arguments, ts}.",
    )
    fixture_upstream.add_arguments(p)
    p.set_defaults(run=_guarded(_fixture))


# ------------------------------------------------------------------ vectors export


def _export(args: argparse.Namespace, *_: Any) -> int:
    from gatespec_conformance.functions.run import export_vectors

    try:
        index = export_vectors(args.directory)
    except OSError as exc:
        raise KitUsageError(f"cannot write {args.directory}: {exc}") from None
    cases = sum(f.get("cases", 0) for f in index["files"])
    say(
        f"wrote {len(index['files'])} files and index.json to {args.directory} "
        f"(spec {index['spec_version']}, {cases} cases, {len(index['functions'])} functions)"
    )
    return 0


def _add_vectors(commands: Any) -> None:
    vectors = commands.add_parser(
        "vectors",
        help="the language-neutral test vectors",
        description="The spec's expected answers as JSON files any implementation can run.",
    )
    sub = vectors.add_subparsers(dest="vectors_command", required=True, metavar="COMMAND")
    export = sub.add_parser(
        "export",
        help="copy the vector files, meta-schema.json, schemas.json and an index to DIR",
        description="Write every vector file, meta-schema.json (the vectors' own schema), "
        "schemas.json (the surface's models and meta-tool inputs) and index.json to DIR.",
    )
    export.add_argument("directory", metavar="DIR")
    export.set_defaults(run=_guarded(_export))


# ------------------------------------------------------------------ wiring


def _guarded(handler: Any) -> Any:
    """User errors print one line and return 2, whatever the host CLI does with exceptions."""

    def run(args: argparse.Namespace, *rest: Any) -> int:
        try:
            return int(handler(args, *rest))
        except KitUsageError as exc:
            say(f"error: {exc}")
            return 2

    return run


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gatespec-conformance",
        description="Check an implementation of the gatespec surface against the seeds and "
        "the spec (docs/conformance.md).",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_functions(commands)
    _add_server(commands)
    _add_vectors(commands)
    _add_fixture(commands)
    # "docs/conformance.md" in the help texts: say where this installation keeps it.
    where = f"documentation (docs/conformance.md): {docs_path()}"
    for command in (parser, *commands.choices.values()):
        command.epilog = where
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``gatespec-conformance``; returns the exit status."""
    try:
        status = _run(build_parser().parse_args(argv))
        sys.stdout.flush()  # here, where a closed pipe can still be handled
        return status
    except BrokenPipeError:
        # The reader of stdout went away (`… --list | head`): drop the rest quietly, as a
        # SIGPIPE would (128 + 13), and keep the interpreter's final flush from failing.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def _run(args: argparse.Namespace) -> int:
    try:
        return int(args.run(args))
    except ModuleNotFoundError as exc:
        if exc.name != "hypothesis":
            raise
        # The kit draws its cases with hypothesis, an extra: serving gatespec never needs it.
        say('error: the conformance kit needs hypothesis: pip install "gatespec[conformance]"')
        return 2


if __name__ == "__main__":
    sys.exit(main())
