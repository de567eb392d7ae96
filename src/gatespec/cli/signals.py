"""How a running command is stopped: SIGTERM unwinds like Ctrl-C (every `finally` runs, so
no upstream is left behind), and a stdio gateway whose client process is gone stops too."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Awaitable, Iterator

import anyio

from gatespec.cli.exits import EXIT_TERMINATED
from gatespec.cli.output import say

_PARENT_POLL = 0.5  # seconds between checks that the process that started us still exists
_PARENT = [os.getppid()]  # the process that started us (record_parent() records it again)


class Terminated(BaseException):
    """SIGTERM before the event loop took the signal over (see until_stopped)."""


@contextlib.contextmanager
def held() -> Iterator[None]:
    """SIGINT and SIGTERM only take note while the block runs (start-up: spawning the
    upstreams, importing the SDK) and are acted on when it ends: KeyboardInterrupt or
    Terminated, raised there. An exception raised from a signal handler surfaces wherever the
    interpreter happens to be, and some places drop it: a SIGINT landing in a weakref callback
    of the import machinery was printed as "Exception ignored in ..." and lost, and the gateway
    went on to wait for its upstreams (tests/faults/test_signals.py caught it)."""
    if threading.current_thread() is not threading.main_thread():  # pragma: no cover
        yield
        return
    caught: list[int] = []

    def note(signum: int, frame: object) -> None:
        caught.append(signum)

    previous = {sig: signal.signal(sig, note) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if caught:
        raise KeyboardInterrupt if caught[0] == signal.SIGINT else Terminated


def record_parent() -> None:
    """Remember the process that started us, as early as can be: a client may die during
    start-up."""
    _PARENT[0] = os.getppid()


@contextlib.contextmanager
def terminable() -> Iterator[None]:
    """SIGTERM unwinds like Ctrl-C, so every `finally` (stopping the upstreams started early)
    runs; while the event loop runs, until_stopped handles it instead."""

    def terminate(signum: int, frame: object) -> None:
        raise Terminated

    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, terminate)
        try:
            yield
        finally:
            signal.signal(signal.SIGTERM, previous)
    else:  # pragma: no cover - signal handlers belong to the main thread
        yield


async def until_stopped(main: Awaitable[object], watch_parent: bool) -> int:
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
        say(f"stopped ({stopped[0]}); upstreams closed")
        return EXIT_TERMINATED
    return 0
