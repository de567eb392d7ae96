"""The ``gatespec`` command.

    gatespec serve --config FILE [--profile gateway|transparent|search|aggregate]
                   [--transport stdio|http] [--host H] [--port P]
    gatespec serve --demo                 serve the embedded demo catalog
    gatespec catalog --config FILE [--json] [--compact]
    gatespec demo
    gatespec rank --catalog FILE --queries FILE [--k 10] [--out FILE]   (gatespec.rank_cli)
    gatespec install --client NAME --config FILE [--write]              (gatespec.install)
    gatespec conformance …, gatespec vectors export DIR, gatespec fixture-upstream …
                                          forwarded to the conformance kit (gatespec-conformance)
    gatespec spec diff OLD [NEW] …        forwarded to the generator (gatespec.spec_tool)
                                          (both run as child processes: gatespec.delegate)

Progress and diagnostics go to stderr (stdout is the MCP channel under stdio). A user error
(bad config, unknown profile, missing optional module) prints one line, never a traceback.
Exit statuses (EXIT_STATUSES, also in `gatespec --help`): 0 done; 1 serving could not start;
2 usage or configuration error; 3 every configured upstream is unavailable (`catalog`);
78 the config already runs in a gatespec above this one (gatespec.chain); 130 interrupted;
143 terminated (SIGTERM, or a stdio gateway's client is gone); 141 stdout was closed early (`gatespec demo | head`: the rest is dropped
quietly, as a SIGPIPE would).

The runtime is `gatespec.runtime.ProxyRuntime.from_config(config, profile=...)` (the aggregate
profile's is `gatespec.profiles.aggregate.AggregateRuntime`): `start(progress)` connects the upstreams
(progress is shown while they settle), the server layer serves it, and `aclose()` ends it.
While serving, the config file is watched and reread on SIGHUP (gatespec.reload). `serve --demo` serves `gatespec.demo.default_config()` (the embedded default
catalog); `demo` runs `gatespec.demo.run_demo()`, a scripted session against it.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Iterator, Sequence
from importlib import util
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

import anyio

from gatespec import chain, demo, spawn
from gatespec.config import (
    DEFAULT_CONNECT_CONCURRENCY,
    DEFAULT_DRAIN_TIMEOUT,
    ConfigError,
    GatewayConfig,
    GatewayOptions,
    SessionBounds,
    load_config,
)
from gatespec.delegate import run_module
from gatespec.install import add_subcommand as add_install_subcommand
from gatespec.logs import OneLineFormatter
from gatespec.profiles import registry
from gatespec.rank_cli import add_subcommand as add_rank_subcommand
from gatespec.rank_cli import ranking_status
from gatespec.serving import ServeError
from gatespec.spec_tool import add_subcommand as add_spec_subcommand

# The server layer, the upstream layer and the MCP SDK are imported only once the stdio
# upstreams have been started (gatespec.spawn), so their start-up overlaps the SDK's import.
if TYPE_CHECKING:
    from gatespec.access.config import AccessConfig
    from gatespec.profiles.lifecycle import ServedRuntime
    from gatespec.runtime_contract import CatalogListing
    from gatespec.upstream import UpstreamPool, UpstreamStatus

    RuntimeFactory = Callable[[GatewayConfig, str], ServedRuntime]
    """(config, profile) -> an unstarted runtime; tests inject fakes through main(runtime_factory=)."""


EXIT_UPSTREAMS_DOWN = 3
EXIT_PIPE_CLOSED = 141  # 128 + SIGPIPE, what a C program killed by the closed pipe reports
EXIT_STATUSES = {
    0: "done",
    1: "serving could not start (address in use, uvicorn missing)",
    2: "usage or configuration error",
    EXIT_UPSTREAMS_DOWN: "every configured upstream is unavailable (catalog)",
    chain.LOOP_EXIT_STATUS: "the config is already served by a gatespec above this one",
    130: "interrupted",
    128 + signal.SIGTERM: "terminated (SIGTERM, or a stdio gateway's client is gone)",
    EXIT_PIPE_CLOSED: "stdout was closed before the output ended (e.g. piped into head)",
}


class UsageError(Exception):
    """A user error: printed as one line, exit status `status`."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


def main(
    argv: Sequence[str] | None = None, *, runtime_factory: RuntimeFactory | None = None
) -> int:
    """Entry point of the console script; returns the exit status."""
    try:
        status = _main(argv, runtime_factory)
        sys.stdout.flush()  # here, where a closed pipe can still be handled
        return status
    except BaseException as exc:
        if not _is_broken_pipe(exc):
            raise
        # The reader went away (`gatespec demo | head`): drop the rest of the output, and keep
        # the interpreter's final flush from failing on the closed pipe.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_PIPE_CLOSED


def _is_broken_pipe(exc: BaseException) -> bool:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return isinstance(exc, BrokenPipeError)


def _main(argv: Sequence[str] | None, runtime_factory: RuntimeFactory | None) -> int:
    forwarded = _kit_argv(sys.argv[1:] if argv is None else argv)
    if forwarded is not None:
        return _forward(forwarded)
    _PARENT[0] = os.getppid()  # as early as can be: a client may die during start-up
    parser = _parser()
    args = parser.parse_args(argv)
    _configure_logging(args.verbose)
    try:
        with _terminable():
            return int(args.run(args, runtime_factory))
    except KeyboardInterrupt:
        return 130
    except _Terminated:
        return 128 + signal.SIGTERM
    except Exception as exc:
        if _is_broken_pipe(exc):
            raise
        found = _user_error(exc)
        if found is None:
            raise  # a bug: the traceback is the useful output
        message, status = found
        _say(f"error: {message}")
        return status


class _Terminated(BaseException):
    """SIGTERM before the event loop took the signal over (see _until_stopped)."""


@contextlib.contextmanager
def _terminable() -> Iterator[None]:
    """SIGTERM unwinds like Ctrl-C, so every `finally` (stopping the upstreams started early)
    runs; while the event loop runs, _until_stopped handles it instead."""

    def terminate(signum: int, frame: object) -> None:
        raise _Terminated

    if threading_is_main():
        previous = signal.signal(signal.SIGTERM, terminate)
        try:
            yield
        finally:
            signal.signal(signal.SIGTERM, previous)
    else:  # pragma: no cover - signal handlers belong to the main thread
        yield


def threading_is_main() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _user_error(exc: BaseException) -> tuple[str, int] | None:
    """(message, exit status) for an error the user can fix, also inside a task group."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    if isinstance(exc, ConfigError):
        return str(exc), 2
    if isinstance(exc, UsageError):
        return str(exc), exc.status
    if isinstance(exc, ServeError):
        return str(exc), 1
    if isinstance(exc, chain.ChainLoop):
        return str(exc), chain.LOOP_EXIT_STATUS
    return None


# -- argument parsing ----------------------------------------------------------------------


class HelpFormatter(argparse.HelpFormatter):
    """An option with a default says what it is (an option left unset says so in its text)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        unset = action.default in (None, False, argparse.SUPPRESS)
        if unset or "default" in text or not action.option_strings:
            return text
        return f"{text} (default: %(default)s)"


class _TopHelp(argparse.RawDescriptionHelpFormatter, HelpFormatter):
    """The top level keeps its exit-status table as written."""


_DEFAULTS = GatewayOptions()  # what serve uses when neither the option nor the config says


def _exit_statuses() -> str:
    return "exit statuses:\n" + "\n".join(f"  {n:<4} {what}" for n, what in EXIT_STATUSES.items())


def _command(commands: Any, name: str, help: str, description: str) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        name, help=help, description=description, formatter_class=HelpFormatter
    )
    return parser


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gatespec",
        description="A spec-driven MCP gateway in front of many MCP servers.\n"
        "`gatespec COMMAND --help` describes each command.",
        epilog=_exit_statuses(),
        formatter_class=_TopHelp,
    )
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="more logging (-vv: debug)"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = _command(
        commands,
        "serve",
        "serve the gateway over stdio or HTTP",
        "Connect to every upstream in the config and serve the gateway's profile to one MCP "
        "client over stdio, or to many over HTTP (Streamable HTTP at /mcp, legacy SSE at /sse). "
        "Options given here override the config's gateway block.",
    )
    source = serve.add_mutually_exclusive_group(required=True)
    source.add_argument("--config", metavar="FILE", help="mcpServers config (JSON or YAML)")
    source.add_argument(
        "--demo",
        action="store_true",
        help="serve the embedded catalog through stubs that echo calls (no real servers)",
    )
    serve.add_argument(
        "--profile",
        "--mode",  # the option's name before 0.2, still accepted
        dest="profile",
        choices=registry.SERVED,
        help=f"exposure profile (default: the config's gateway.profile, else {_DEFAULTS.profile})",
    )
    serve.add_argument(
        "--transport",
        choices=("stdio", "http"),
        help=f"how clients connect (default: the config's gateway.transport, else {_DEFAULTS.transport})",
    )
    serve.add_argument(
        "--host",
        help=f"HTTP bind address (default: the config's gateway.host, else {_DEFAULTS.host})",
    )
    serve.add_argument(
        "--port",
        type=_port,
        help=f"HTTP port, 0 picks a free one (default: the config's gateway.port, else {_DEFAULTS.port})",
    )
    serve.add_argument(
        "--metrics-port",
        type=_port,
        help="serving stdio: also serve Prometheus metrics at http://HOST:PORT/metrics and "
        "the status page at /status (default: the config's gateway.metrics_port, else none; "
        "over HTTP both are always served beside /mcp)",
    )
    serve.set_defaults(run=_serve)

    catalog = _command(
        commands,
        "catalog",
        "list tool ids, wire names and exclusions",
        "Connect to every upstream in the config once and print the catalog the gateway would "
        "serve: every tool id and wire name, every excluded tool and why, and every upstream "
        f"that is unavailable. Exits {EXIT_UPSTREAMS_DOWN} when every configured upstream is "
        "unavailable.",
    )
    catalog.add_argument("--config", metavar="FILE", required=True, help="mcpServers config")
    catalog.add_argument("--json", action="store_true", help="one JSON document on stdout")
    catalog.add_argument(
        "--compact",
        action="store_true",
        help="the registry's compact tool list: server__tool, description and server (JSON)",
    )
    catalog.set_defaults(run=_catalog)

    demo_cmd = _command(
        commands,
        "demo",
        "run the built-in demonstration",
        "A scripted agent session against the embedded catalog of five MCP reference servers, "
        "served by stubs that echo calls: browse, a refused call, execute, view, and the "
        "context cost next to passing every tool through. Needs no configuration.",
    )
    demo_cmd.set_defaults(run=_demo)
    add_rank_subcommand(commands, _command)
    add_install_subcommand(commands, _command)
    add_spec_subcommand(commands)
    for name, text in _KIT_COMMANDS.items():
        forward = commands.add_parser(name, help=text, description=text, add_help=False)
        forward.add_argument("rest", nargs=argparse.REMAINDER)
        forward.set_defaults(
            run=lambda args, _f, name=name: _forward(_kit_argv([name, *args.rest]))
        )
    return parser


# -- the conformance kit -------------------------------------------------------------------

# Commands that belong to the conformance kit, a package of its own (gatespec_conformance):
# gatespec is an implementation it checks, so the runtime never imports it; these forward.
_KIT_COMMANDS = {
    "conformance": "check an implementation against the spec (gatespec-conformance)",
    "vectors": "the language-neutral test vectors (gatespec-conformance vectors)",
    "fixture-upstream": "the kit's fixture MCP server (gatespec-conformance fixture-upstream)",
}
_GLOBAL_FLAGS = ("-v", "-vv", "-vvv", "--verbose")


def _kit_argv(argv: Sequence[str]) -> list[str] | None:
    """The kit's argv when `argv` names one of its commands (``conformance X`` becomes ``X``)."""
    args = list(argv)
    while args and args[0] in _GLOBAL_FLAGS:
        args.pop(0)
    if not args or args[0] not in _KIT_COMMANDS:
        return None
    return args[1:] if args[0] == "conformance" else args


def _forward(kit_argv: list[str] | None) -> int:
    """The kit's command, run as `python -m gatespec_conformance` (its exit status is ours)."""
    if util.find_spec("gatespec_conformance") is None:
        _say(
            "error: the conformance kit is not installed (Python package gatespec_conformance); "
            "install it, then run gatespec-conformance"
        )
        return 2
    return run_module("gatespec_conformance", kit_argv or [])


def _port(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number 0-65535, got {text!r}")
    return int(text)


def _configure_logging(verbose: int) -> None:
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLineFormatter("gatespec: %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler])
    if verbose == 0:  # the progress lines already say which upstream failed and why
        logging.getLogger("gatespec.upstream.pool").setLevel(logging.ERROR)
        # A reload is news for the operator (at INFO: nothing went wrong), shown by default.
        logging.getLogger("gatespec.reload").setLevel(logging.INFO)


def _say(message: str, stream: TextIO | None = None) -> None:
    print(f"gatespec: {message}", file=stream or sys.stderr, flush=True)


# -- hooks ---------------------------------------------------------------------------------


# -- serve ---------------------------------------------------------------------------------


def _serve(args: argparse.Namespace, factory: RuntimeFactory | None) -> int:
    if args.demo:
        config = demo.default_config()
    else:
        config = load_config(args.config)
    options = config.options
    try:
        profile = registry.profile_named(args.profile or options.profile).name
    except registry.UnknownProfile as exc:
        raise UsageError(str(exc)) from None
    transport = args.transport or options.transport
    host = args.host or options.host
    port = args.port if args.port is not None else options.port
    web_log = "warning" if args.verbose == 0 else "info" if args.verbose == 1 else "debug"
    access = config.options.access
    if transport == "http":
        _check_http_access(access, host)
    from gatespec.observe import tracing  # OpenTelemetry, if asked for

    with _link(args.config), _upstreams_stopped(), tracing.traced(options.tracing):
        runtime = _runtime(factory, config, profile)
        main = _serve_async(
            runtime,
            len(config.servers),
            transport,
            host,
            port,
            web_log,
            access,
            _stubs(config),
            options.drain_timeout,
            options.sessions,
            config,
            args.metrics_port if args.metrics_port is not None else options.metrics_port,
        )
        # A stdio gateway without the client that started it has nobody to serve.
        return anyio.run(_until_stopped, main, transport == "stdio")


def _link(config: str | None) -> contextlib.AbstractContextManager[None]:
    """This process as a link of the chain of gatespec configs (gatespec.chain)."""
    return chain.entered(Path(config)) if config else contextlib.nullcontext()


@contextlib.contextmanager
def _upstreams_stopped() -> Iterator[None]:
    """However the command ends, no stdio upstream it started is left running."""
    try:
        yield
    finally:
        spawn.discard_early()


_PARENT_POLL = 0.5  # seconds between checks that the process that started us still exists
_PARENT = [os.getppid()]  # the process that started us (main() records it again)


async def _until_stopped(main: Awaitable[object], watch_parent: bool) -> int:
    """Run `main`; on SIGTERM (or, with watch_parent, when the parent process is gone) cancel
    it, so its clean-up closes every upstream, and exit 143 (128 + SIGTERM). SIGINT is
    asyncio's: it cancels the same way and ends as KeyboardInterrupt (exit 130)."""
    stopped: list[str] = []
    parent = _PARENT[0]

    async def on_signal(scope: anyio.CancelScope) -> None:
        with anyio.open_signal_receiver(signal.SIGTERM) as signals:
            draining = False
            async for _ in signals:
                # Serving HTTP: the server drains (calls in flight finish, bounded by
                # gateway.drain_timeout) and `main` returns by itself, closing the upstreams;
                # the SIGTERM uvicorn raises again once drained is part of the same stop.
                transports = sys.modules.get("gatespec.server.transports")
                if draining or (transports is not None and transports.drain_serving()):
                    draining = True
                    continue
                stopped.append("SIGTERM")
                scope.cancel()
                return

    async def on_orphaned(scope: anyio.CancelScope) -> None:
        while os.getppid() == parent:
            await anyio.sleep(_PARENT_POLL)
        stopped.append("the parent process is gone")
        scope.cancel()

    async with anyio.create_task_group() as tg:
        tg.start_soon(on_signal, tg.cancel_scope)
        if watch_parent:
            tg.start_soon(on_orphaned, tg.cancel_scope)
        await main
        tg.cancel_scope.cancel()
    if stopped:
        _say(f"stopped ({stopped[0]}); upstreams closed")
        return 128 + signal.SIGTERM
    return 0


def _runtime(factory: RuntimeFactory | None, config: GatewayConfig, profile: str) -> ServedRuntime:
    """Start the stdio upstreams, then build the runtime (importing the SDK meanwhile)."""
    spawn.spawn_early(config.servers.values(), DEFAULT_CONNECT_CONCURRENCY)
    return (factory or registry.profile_named(profile).runtime)(config, profile)


def _check_http_access(access: AccessConfig | None, host: str) -> None:
    """HTTP callers are identified by bearer tokens, or not at all: say so before serving."""
    if access is not None and not access.authenticates:
        raise UsageError(
            "gateway.access names no tokens and no jwt: HTTP callers could not be identified "
            "(add identities with tokens, or jwt; stdio_identity applies to stdio only)"
        )
    if access is None and host not in ("127.0.0.1", "localhost", "::1"):
        _say(
            f"warning: serving {host} without gateway.access: anyone who reaches the port may "
            "call every upstream tool"
        )


async def _serve_async(
    runtime: ServedRuntime,
    total: int,
    transport: str,
    host: str,
    port: int,
    web_log: str,
    access: AccessConfig | None = None,
    stubs: frozenset[str] = frozenset(),
    drain_timeout: float = DEFAULT_DRAIN_TIMEOUT,
    sessions: SessionBounds | None = None,
    config: GatewayConfig | None = None,
    metrics_port: int | None = None,
) -> None:
    from gatespec.access import LOCAL
    from gatespec.observe.port import observe_port
    from gatespec.server.transports import bind_http, print_ready, serve_http, serve_stdio

    # Bind first: a taken port should fail before minutes of upstream start-up.
    sock = bind_http(host, port) if transport == "http" else None
    try:
        await _start(runtime, total, stubs, first_ready=True)
        identity = access.stdio_identity if access is not None else LOCAL
        server = registry.build_server(
            runtime, fallback_session=transport, fallback_identity=identity
        )
        async with anyio.create_task_group() as tg:
            # Upstreams that failed or die are retried in the background while serving.
            tg.start_soon(runtime.keep_upstreams)
            follow_peers = getattr(runtime, "follow_peers", None)  # replicas (gatespec.state)
            if follow_peers is not None:
                tg.start_soon(follow_peers)
            if config is not None and hasattr(runtime, "reconfigure"):
                from gatespec.reload import Reconfigurable, watch_config

                tg.start_soon(watch_config, cast("Reconfigurable", runtime), config)
            if sock is None:
                _say(f"serving the {runtime.profile} profile over stdio")
                with observe_port(server, host, metrics_port, access) as url:
                    if url is not None:
                        _say(f"metrics at {url}/metrics, status page at {url}/status")
                    await serve_stdio(server, drain_timeout)
            else:
                await serve_http(
                    server,
                    host,
                    port,
                    sock=sock,
                    on_ready=print_ready,
                    log_level=web_log,
                    access=access,
                    drain_timeout=drain_timeout,
                    sessions=sessions,
                )
            tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):  # close upstreams even when cancelled
            await runtime.aclose()
        if sock is not None:
            sock.close()


def _stubs(config: GatewayConfig) -> frozenset[str]:
    """The upstreams that are stubs (a captured tool list; calls echoed), not servers."""
    return frozenset(key for key, s in config.servers.items() if s.transport == "stub")


class _Progress:
    """start(progress=...): one line per upstream, or one updating line on a terminal. A stub
    upstream is called one: nothing real answers its calls."""

    def __init__(
        self,
        pool: UpstreamPool,
        total: int,
        stream: TextIO | None = None,
        stubs: frozenset[str] = frozenset(),
    ) -> None:
        self.pool = pool
        self.total = total
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.stubs = stubs

    def __call__(self, key: str, state: str, done: int, total: int) -> None:
        reason = self.pool.status(key).reason
        failed = f"{key}: failed: {reason}" if state == "failed" else None
        if self.tty:
            if failed:
                self.stream.write(f"\r\033[Kgatespec: {failed}\n")
            self.stream.write(f"\r\033[Kgatespec: connecting upstreams {done}/{total}")
            self.stream.flush()
        else:
            stub = " (stub: captured tools, calls are echoed)" if key in self.stubs else ""
            _say(f"[{done}/{total}] {failed or f'{key}: {state}{stub}'}", self.stream)

    def finish(self, statuses: list[UpstreamStatus]) -> None:
        if self.tty and self.total:
            self.stream.write("\r\033[K")
        connected = sum(1 for s in statuses if s.state == "connected")
        failed = sum(1 for s in statuses if s.state == "failed")
        pending = len(statuses) - connected - failed
        notes = [f"{failed} failed; they are retried on refresh" if failed else ""]
        notes.append(f"{pending} still connecting, served as they connect" if pending else "")
        tail = "; ".join(n for n in notes if n)
        tail = f" ({tail})" if tail else ""
        _say(f"{connected} of {len(statuses)} upstreams connected{tail}", self.stream)
        if self.stubs:
            _say(
                f"{len(self.stubs)} of them are stubs that echo calls, not real servers "
                "(serve --config FILE fronts the servers it names)",
                self.stream,
            )


async def _start(
    runtime: ServedRuntime,
    total: int,
    stubs: frozenset[str] = frozenset(),
    *,
    first_ready: bool = False,
) -> list[UpstreamStatus]:
    """Start the upstreams: all of them (catalog), or, to serve, until the first is ready
    (AM-SERVE-FIRST-READY: the others join as they connect)."""
    if total == 0:
        _say("no upstream servers configured (the catalog is empty)")
    progress = _Progress(runtime.pool, total, stubs=stubs)
    statuses = await runtime.start(progress=progress, first_ready=first_ready)
    if total:
        progress.finish(statuses)
    if registry.profile_named(runtime.profile).ranks:
        _say(f"ranking: {ranking_status()}")  # never silent about running without the model
    return statuses


# -- catalog -------------------------------------------------------------------------------


def _catalog(args: argparse.Namespace, factory: RuntimeFactory | None) -> int:
    config = load_config(args.config)
    # seed 001's listTools(compact=true) is one profile's (the aggregate registry's)
    profile = registry.compact_lister().name if args.compact else config.options.profile
    with _link(args.config), _upstreams_stopped():
        runtime = _runtime(factory, config, profile)
        found: list[tuple[Any, list[UpstreamStatus]]] = []

        async def listed() -> None:
            found.append(
                await _catalog_async(runtime, len(config.servers), _stubs(config), args.compact)
            )

        status = anyio.run(_until_stopped, listed(), False)
    if not found:
        return status
    listing, statuses = found[0]
    if args.compact:
        print(json.dumps(listing, indent=2, ensure_ascii=False))
        return 0
    if args.json:
        print(json.dumps(_catalog_json(listing, statuses), indent=2, ensure_ascii=False))
    else:
        _print_catalog(listing, statuses)
    if statuses and all(s.state != "connected" for s in statuses):
        _say(
            f"error: every upstream is unavailable ({len(statuses)} configured); the catalog is empty"
        )
        return EXIT_UPSTREAMS_DOWN
    return 0


async def _catalog_async(
    runtime: ServedRuntime, total: int, stubs: frozenset[str], compact: bool = False
) -> tuple[Any, list[UpstreamStatus]]:
    try:
        statuses = await _start(runtime, total, stubs)
        if compact:
            from gatespec.profiles.lifecycle import CompactListing

            if not isinstance(runtime, CompactListing):
                raise UsageError(f"the {runtime.profile} profile has no compact listing")
            return await runtime.compact_listing(), statuses
        listing = runtime.catalog_listing()
        if inspect.isawaitable(listing):  # the aggregate registry asks its upstreams
            listing = await listing
        return listing, statuses
    finally:
        with anyio.CancelScope(shield=True):
            await runtime.aclose()


def _print_catalog(listing: CatalogListing, statuses: list[UpstreamStatus]) -> None:
    # Tab-separated rows under "#" headings: readable, and easy to cut/grep.
    first, second = listing.columns
    what = "tools" if first == "tool_id" else "entries"
    print(f"# {len(listing.tools)} {what}: {first}\t{second}")
    for tool_id, wire_name in listing.tools:
        print(f"{tool_id}\t{wire_name}")
    print(f"# {len(listing.excluded)} excluded: server\ttool\treason")
    for server, name, reason in listing.excluded:
        print(f"{server}\t{name}\t{reason}")
    down = [s for s in statuses if s.state != "connected"]
    if down:
        print(f"# {len(down)} servers unavailable: server\treason")
        for status in down:
            print(f"{status.key}\t{status.reason or status.state}")


def _catalog_json(listing: CatalogListing, statuses: list[UpstreamStatus]) -> dict[str, Any]:
    return {
        "tools": [dict(zip(listing.columns, pair, strict=True)) for pair in listing.tools],
        "excluded": [{"server": s, "tool": n, "reason": r} for s, n, r in listing.excluded],
        "servers": [{"key": s.key, "state": s.state, "reason": s.reason} for s in statuses],
        "ranking": ranking_status(),
    }


# -- demo ----------------------------------------------------------------------------------


def _demo(args: argparse.Namespace, factory: RuntimeFactory | None) -> int:
    return demo.run_demo()


if __name__ == "__main__":
    sys.exit(main())
