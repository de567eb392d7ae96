"""A task group that can be opened and closed from anywhere.

Upstream connections run in long-lived tasks, which anyio places in a task group; a task group
must be exited by the task that entered it, at the same cancel-scope depth. A group entered
lazily inside `start()` or `connect()` breaks as soon as the caller wraps that call in a
timeout but not the matching `aclose()`. So on asyncio (the gateway's backend) the group lives
in a host task of its own, and open/close are plain method calls from any task. Elsewhere
(trio) the group is entered in the calling task, with the usual same-task rule.
"""

from __future__ import annotations

import asyncio

import anyio
from anyio.abc import TaskGroup


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class TaskHost:
    def __init__(self) -> None:
        self._tg: TaskGroup | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop: anyio.Event | None = None
        self._entered_here = False

    @property
    def task_group(self) -> TaskGroup | None:
        return self._tg

    async def open(self) -> TaskGroup:
        if self._tg is not None:
            return self._tg
        loop = _running_loop()
        if loop is not None:
            ready = anyio.Event()
            self._stop = anyio.Event()
            self._task = loop.create_task(self._host(ready, self._stop))
            await ready.wait()
        else:  # pragma: no cover - non-asyncio backends
            tg = anyio.create_task_group()
            await tg.__aenter__()
            self._tg, self._entered_here = tg, True
        assert self._tg is not None
        return self._tg

    async def _host(self, ready: anyio.Event, stop: anyio.Event) -> None:
        async with anyio.create_task_group() as tg:
            self._tg = tg
            ready.set()
            await stop.wait()
            # Owners retire their tasks before closing; whatever is left is abandoned work.
            tg.cancel_scope.cancel()
        self._tg = None

    async def close(self) -> None:
        if self._task is not None:
            task, self._task = self._task, None
            assert self._stop is not None
            self._stop.set()
            await task
        elif self._entered_here and self._tg is not None:  # pragma: no cover - non-asyncio
            tg, self._tg, self._entered_here = self._tg, None, False
            tg.cancel_scope.cancel()
            await tg.__aexit__(None, None, None)
