"""`gatespec serve`: connect the upstreams and serve the profile over stdio or HTTP, watching
the config for changes, until stopped."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, cast

import anyio

from gatespec.cli import running
from gatespec.cli.demo import default_config
from gatespec.cli.exits import UsageError
from gatespec.cli.output import say
from gatespec.cli.signals import held, until_stopped
from gatespec.config import DEFAULT_DRAIN_TIMEOUT, GatewayConfig, SessionBounds, load_config
from gatespec.profiles import registry

if TYPE_CHECKING:
    from gatespec.access.config import AccessConfig
    from gatespec.cli.running import RuntimeFactory
    from gatespec.profiles.lifecycle import ServedRuntime


def run(args: argparse.Namespace, factory: RuntimeFactory | None) -> int:
    config = default_config() if args.demo else load_config(args.config)
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

    with running.link(args.config), running.upstreams_stopped(), tracing.traced(options.tracing):
        with held():  # a stop during start-up is acted on once the SDK is imported
            runtime = running.runtime(factory, config, profile)
        main = _serve_async(
            runtime,
            len(config.servers),
            transport,
            host,
            port,
            web_log,
            access,
            running.stubs(config),
            options.drain_timeout,
            options.sessions,
            config,
            args.metrics_port if args.metrics_port is not None else options.metrics_port,
        )
        # A stdio gateway without the client that started it has nobody to serve.
        return anyio.run(until_stopped, main, transport == "stdio")


def _check_http_access(access: AccessConfig | None, host: str) -> None:
    """HTTP callers are identified by bearer tokens, or not at all: say so before serving."""
    if access is not None and not access.authenticates:
        raise UsageError(
            "gateway.access names no tokens and no jwt: HTTP callers could not be identified "
            "(add identities with tokens, or jwt; stdio_identity applies to stdio only)"
        )
    if access is None and host not in ("127.0.0.1", "localhost", "::1"):
        say(
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
        await running.start(runtime, total, stubs, first_ready=True)
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
                say(f"serving the {runtime.profile} profile over stdio")
                with observe_port(server, host, metrics_port, access) as url:
                    if url is not None:
                        say(f"metrics at {url}/metrics, status page at {url}/status")
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
