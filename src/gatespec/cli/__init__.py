"""The ``gatespec`` command.

    gatespec serve --config FILE [--profile gateway|transparent|search|aggregate]
                   [--transport stdio|http] [--host H] [--port P]      (cli.serve)
    gatespec serve --demo                 serve the embedded demo catalog
    gatespec catalog --config FILE [--json] [--compact]                 (cli.catalog)
    gatespec demo                                                       (cli.demo)
    gatespec rank --catalog FILE --queries FILE [--k 10] [--out FILE]   (gatespec.rank_cli)
    gatespec install --client NAME --config FILE [--write]              (cli.install)
    gatespec conformance …, gatespec vectors export DIR, gatespec fixture-upstream …
                                          run by the conformance kit (cli.kit)
    gatespec spec diff OLD [NEW] …        run by the generator (cli.spec)
                                          (both run as child processes: cli.delegate)

Every command and option is in cli.parser. Progress and diagnostics go to stderr (stdout is
the MCP channel under stdio; cli.output, cli.progress). A user error (bad config, unknown
profile, missing optional module) prints one line, never a traceback. Exit statuses
(cli.exits.EXIT_STATUSES, also in `gatespec --help`): 0 done; 1 serving could not start;
2 usage or configuration error; 3 every configured upstream is unavailable (`catalog`);
78 the config already runs in a gatespec above this one (gatespec.chain); 130 interrupted;
143 terminated (SIGTERM, or a stdio gateway's client is gone: cli.signals); 141 stdout was
closed early (`gatespec demo | head`: the rest is dropped quietly, as a SIGPIPE would).

The runtime is the profile registry's (`gatespec.profiles.registry`: the catalog profiles'
`gatespec.runtime.ProxyRuntime`, the aggregate profile's
`gatespec.profiles.aggregate.AggregateRuntime`): `start(progress)` connects the upstreams
(progress is shown while they settle; cli.running), the server layer serves it, and
`aclose()` ends it. While serving, the config file is watched and reread on SIGHUP
(gatespec.reload). `serve --demo` serves `cli.demo.default_config()` (the embedded default
catalog); `demo` runs `cli.demo.run_demo()`, a scripted session against it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gatespec.cli import kit
from gatespec.cli.exits import (
    EXIT_PIPE_CLOSED,
    EXIT_STATUSES,
    EXIT_TERMINATED,
    EXIT_UPSTREAMS_DOWN,
    is_broken_pipe,
    user_error,
)
from gatespec.cli.output import configure_logging, say
from gatespec.cli.parser import build_parser
from gatespec.cli.signals import Terminated, record_parent, terminable

if TYPE_CHECKING:
    from gatespec.cli.running import RuntimeFactory

__all__ = ["EXIT_PIPE_CLOSED", "EXIT_STATUSES", "EXIT_UPSTREAMS_DOWN", "main"]


def main(
    argv: Sequence[str] | None = None, *, runtime_factory: RuntimeFactory | None = None
) -> int:
    """Entry point of the console script; returns the exit status."""
    try:
        status = _main(argv, runtime_factory)
        sys.stdout.flush()  # here, where a closed pipe can still be handled
        return status
    except BaseException as exc:
        if not is_broken_pipe(exc):
            raise
        # The reader went away (`gatespec demo | head`): drop the rest of the output, and keep
        # the interpreter's final flush from failing on the closed pipe.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_PIPE_CLOSED


def _main(argv: Sequence[str] | None, runtime_factory: RuntimeFactory | None) -> int:
    kit_args = kit.kit_argv(sys.argv[1:] if argv is None else argv)
    if kit_args is not None:
        return kit.run_kit(kit_args)
    record_parent()
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose)
    try:
        with terminable():
            return int(args.run(args, runtime_factory))
    except KeyboardInterrupt:
        return 130
    except Terminated:
        return EXIT_TERMINATED
    except Exception as exc:
        if is_broken_pipe(exc):
            raise
        found = user_error(exc)
        if found is None:
            raise  # a bug: the traceback is the useful output
        message, status = found
        say(f"error: {message}")
        return status
