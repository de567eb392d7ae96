"""The ``gatespec`` command.

    gatespec serve --config FILE [--profile gateway|transparent] [--transport stdio|http]
                   [--host H] [--port P]
    gatespec serve --demo                 serve the embedded demo catalog
    gatespec catalog --config FILE [--json]
    gatespec demo
    gatespec rank --catalog FILE --queries FILE [--k 10] [--out FILE]   (gatespec.rank_cli)
    gatespec conformance …, gatespec vectors export DIR, gatespec fixture-upstream …
                                          forwarded to the conformance kit (gatespec-conformance)
    gatespec spec diff OLD [NEW] …        forwarded to the generator (gatespec.spec_tool)

Progress and diagnostics go to stderr (stdout is the MCP channel under stdio). A user error
(bad config, unknown profile, missing optional module) prints one line and exits 2 (usage) or 1,
never a traceback.

The runtime is `gatespec.runtime.ProxyRuntime.from_config(config, profile=...)`: `start(progress)`
connects the upstreams (progress is shown while they settle), the server layer serves it, and
`aclose()` ends it. `serve --demo` serves `gatespec.demo.default_config()` (the embedded default
catalog); `demo` runs `gatespec.demo.run_demo()`, a scripted session against it.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TextIO

import anyio

from gatespec import demo, spawn
from gatespec.config import DEFAULT_CONNECT_CONCURRENCY, ConfigError, GatewayConfig, load_config
from gatespec.logs import OneLineFormatter
from gatespec.rank_cli import add_subcommand as add_rank_subcommand
from gatespec.rank_cli import ranking_status
from gatespec.serving import SERVED_PROFILES, ServeError
from gatespec.spec_tool import add_subcommand as add_spec_subcommand

# The server layer, the upstream layer and the MCP SDK are imported only once the stdio
# upstreams have been started (gatespec.spawn), so their start-up overlaps the SDK's import.
if TYPE_CHECKING:
    from gatespec.core import CatalogListing, GatewayRuntime
    from gatespec.upstream import ProgressCallback, UpstreamPool, UpstreamStatus

    class ServedRuntime(GatewayRuntime, Protocol):
        """What the CLI needs beyond the server layer's protocol (ProxyRuntime has it all)."""

        pool: UpstreamPool

        async def start(self, progress: ProgressCallback | None = None) -> list[UpstreamStatus]: ...

        async def keep_upstreams(self) -> None: ...

        async def aclose(self) -> None: ...

        def catalog_listing(self) -> CatalogListing: ...

    RuntimeFactory = Callable[[GatewayConfig, str], ServedRuntime]
    """(config, profile) -> an unstarted runtime; tests inject fakes through main(runtime_factory=)."""


def _proxy_runtime(config: GatewayConfig, profile: str) -> ServedRuntime:
    # Imported on use: argument and config errors need none of the catalog machinery, and
    # the stdio upstreams start while it loads (see _runtime).
    from gatespec.runtime import ProxyRuntime

    return ProxyRuntime.from_config(config, profile=profile)


class UsageError(Exception):
    """A user error: printed as one line, exit status `status`."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


def main(
    argv: Sequence[str] | None = None, *, runtime_factory: RuntimeFactory | None = None
) -> int:
    """Entry point of the console script; returns the exit status."""
    forwarded = _kit_argv(sys.argv[1:] if argv is None else argv)
    if forwarded is not None:
        return _forward(forwarded)
    parser = _parser()
    args = parser.parse_args(argv)
    _configure_logging(args.verbose)
    try:
        return int(args.run(args, runtime_factory))
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        found = _user_error(exc)
        if found is None:
            raise  # a bug: the traceback is the useful output
        message, status = found
        _say(f"error: {message}")
        return status


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
    return None


# -- argument parsing ----------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gatespec", description="A spec-driven MCP gateway in front of many MCP servers."
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="serve the gateway over stdio or HTTP")
    source = serve.add_mutually_exclusive_group(required=True)
    source.add_argument("--config", metavar="FILE", help="mcpServers config (JSON or YAML)")
    source.add_argument("--demo", action="store_true", help="serve the embedded demo catalog")
    serve.add_argument(
        "--profile",
        "--mode",  # the option's name before 0.2, still accepted
        dest="profile",
        choices=SERVED_PROFILES,
        help="exposure profile (default: the config's gateway.profile, else gateway)",
    )
    serve.add_argument("--transport", choices=("stdio", "http"), help="how clients connect")
    serve.add_argument("--host", help="HTTP bind address (default from config: 127.0.0.1)")
    serve.add_argument("--port", type=_port, help="HTTP port (0 picks a free one)")
    serve.set_defaults(run=_serve)

    catalog = commands.add_parser("catalog", help="list tool ids, wire names and exclusions")
    catalog.add_argument("--config", metavar="FILE", required=True)
    catalog.add_argument("--json", action="store_true", help="one JSON document on stdout")
    catalog.set_defaults(run=_catalog)

    demo_cmd = commands.add_parser("demo", help="run the built-in demonstration")
    demo_cmd.set_defaults(run=_demo)
    add_rank_subcommand(commands)
    add_spec_subcommand(commands)
    for name, text in _KIT_COMMANDS.items():
        forward = commands.add_parser(name, help=text, add_help=False)
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
    try:
        kit = importlib.import_module("gatespec_conformance.cli")
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("gatespec_conformance"):
            raise
        _say(
            "error: the conformance kit is not installed (Python package gatespec_conformance); "
            "install it, then run gatespec-conformance"
        )
        return 2
    return int(kit.main(kit_argv or []))


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
    profile = args.profile or options.profile
    if profile not in SERVED_PROFILES:
        raise UsageError(
            f"profile {profile!r} is not served yet (served: {', '.join(SERVED_PROFILES)})"
        )
    transport = args.transport or options.transport
    host = args.host or options.host
    port = args.port if args.port is not None else options.port
    web_log = "warning" if args.verbose == 0 else "info" if args.verbose == 1 else "debug"
    try:
        runtime = _runtime(factory, config, profile)
        anyio.run(_serve_async, runtime, len(config.servers), transport, host, port, web_log)
    finally:
        spawn.discard_early()
    return 0


def _runtime(factory: RuntimeFactory | None, config: GatewayConfig, profile: str) -> ServedRuntime:
    """Start the stdio upstreams, then build the runtime (importing the SDK meanwhile)."""
    spawn.spawn_early(config.servers.values(), DEFAULT_CONNECT_CONCURRENCY)
    return (factory or _proxy_runtime)(config, profile)


async def _serve_async(
    runtime: ServedRuntime, total: int, transport: str, host: str, port: int, web_log: str
) -> None:
    from gatespec.server import bind_http, build_server, print_ready, serve_http, serve_stdio

    # Bind first: a taken port should fail before minutes of upstream start-up.
    sock = bind_http(host, port) if transport == "http" else None
    try:
        await _start(runtime, total)
        server = build_server(runtime, fallback_session=transport)
        async with anyio.create_task_group() as tg:
            # Upstreams that failed or die are retried in the background while serving.
            tg.start_soon(runtime.keep_upstreams)
            if sock is None:
                _say(f"serving the {runtime.profile} profile over stdio")
                await serve_stdio(server)
            else:
                await serve_http(
                    server, host, port, sock=sock, on_ready=print_ready, log_level=web_log
                )
            tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):  # close upstreams even when cancelled
            await runtime.aclose()
        if sock is not None:
            sock.close()


class _Progress:
    """start(progress=...): one line per upstream, or one updating line on a terminal."""

    def __init__(self, pool: UpstreamPool, total: int, stream: TextIO | None = None) -> None:
        self.pool = pool
        self.total = total
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()

    def __call__(self, key: str, state: str, done: int, total: int) -> None:
        reason = self.pool.status(key).reason
        failed = f"{key}: failed: {reason}" if state == "failed" else None
        if self.tty:
            if failed:
                self.stream.write(f"\r\033[Kgatespec: {failed}\n")
            self.stream.write(f"\r\033[Kgatespec: connecting upstreams {done}/{total}")
            self.stream.flush()
        else:
            _say(f"[{done}/{total}] {failed or f'{key}: {state}'}", self.stream)

    def finish(self, statuses: list[UpstreamStatus]) -> None:
        if self.tty and self.total:
            self.stream.write("\r\033[K")
        connected = sum(1 for s in statuses if s.state == "connected")
        failed = len(statuses) - connected
        tail = f" ({failed} failed; they are retried on refresh)" if failed else ""
        _say(f"{connected} of {len(statuses)} upstreams connected{tail}", self.stream)


async def _start(runtime: ServedRuntime, total: int) -> list[UpstreamStatus]:
    if total == 0:
        _say("no upstream servers configured (the catalog is empty)")
    progress = _Progress(runtime.pool, total)
    statuses = await runtime.start(progress=progress)
    if total:
        progress.finish(statuses)
    _say(f"ranking: {ranking_status()}")  # never silent about running without the model
    return statuses


# -- catalog -------------------------------------------------------------------------------


def _catalog(args: argparse.Namespace, factory: RuntimeFactory | None) -> int:
    config = load_config(args.config)
    profile = config.options.profile if config.options.profile in SERVED_PROFILES else "gateway"
    try:
        runtime = _runtime(factory, config, profile)
        listing, statuses = anyio.run(_catalog_async, runtime, len(config.servers))
    finally:
        spawn.discard_early()
    if args.json:
        print(json.dumps(_catalog_json(listing, statuses), indent=2, ensure_ascii=False))
    else:
        _print_catalog(listing, statuses)
    return 0


async def _catalog_async(
    runtime: ServedRuntime, total: int
) -> tuple[CatalogListing, list[UpstreamStatus]]:
    try:
        statuses = await _start(runtime, total)
        return runtime.catalog_listing(), statuses
    finally:
        with anyio.CancelScope(shield=True):
            await runtime.aclose()


def _print_catalog(listing: CatalogListing, statuses: list[UpstreamStatus]) -> None:
    # Tab-separated rows under "#" headings: readable, and easy to cut/grep.
    print(f"# {len(listing.tools)} tools: tool_id\twire_name")
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
        "tools": [{"tool_id": t, "wire_name": w} for t, w in listing.tools],
        "excluded": [{"server": s, "tool": n, "reason": r} for s, n, r in listing.excluded],
        "servers": [{"key": s.key, "state": s.state, "reason": s.reason} for s in statuses],
        "ranking": ranking_status(),
    }


# -- demo ----------------------------------------------------------------------------------


def _demo(args: argparse.Namespace, factory: RuntimeFactory | None) -> int:
    return demo.run_demo()


if __name__ == "__main__":
    sys.exit(main())
