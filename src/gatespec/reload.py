"""Registry changes while serving (AM-REGISTRY-RELOAD): the config file is watched (unless
gateway.watch is false), and reread on SIGHUP; a changed server list reaches the runtime's
`reconfigure(config)`.

Watching polls the file's modification time, size and inode once a second: a stat per second
is nothing, works for editors that replace the file (rename) as for those that rewrite it, and
needs no file-watching dependency. An unreadable or invalid file changes nothing (the reason is
logged, and the next good version is picked up); gateway options that cannot change while
serving are logged as needing a restart.
"""

from __future__ import annotations

import logging
import signal
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import fields
from pathlib import Path
from typing import Any, Final, Protocol

import anyio

from gatespec.config import ConfigError, GatewayConfig, load_config

__all__ = ["Reconfigurable", "watch_config"]

logger = logging.getLogger(__name__)

POLL_SECONDS: Final = 1.0
# gateway options that only a restart can change
_FIXED_OPTIONS: Final = ("profile", "transport", "host", "port")


class Reconfigurable(Protocol):
    async def reconfigure(self, config: GatewayConfig) -> Any: ...


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _fixed_changes(old: GatewayConfig, new: GatewayConfig) -> list[str]:
    names = {f.name for f in fields(old.options)}
    return [
        name
        for name in _FIXED_OPTIONS
        if name in names and getattr(old.options, name) != getattr(new.options, name)
    ]


async def watch_config(
    runtime: Reconfigurable,
    config: GatewayConfig,
    *,
    poll: float = POLL_SECONDS,
    loader: Callable[[Path], GatewayConfig] = load_config,
    on_reload: Callable[[GatewayConfig], Awaitable[None]] | None = None,
) -> None:
    """Reconfigure `runtime` whenever its config file changes or SIGHUP arrives (runs until
    cancelled; returns at once for a config that came from no file)."""
    path = config.source
    if path is None:
        return
    current = config
    stamp = _stamp(path)
    hup = _Flag()

    async def reload() -> None:
        nonlocal current
        try:
            fresh = await anyio.to_thread.run_sync(loader, path)
        except ConfigError as exc:
            logger.error("config not reloaded, the running servers stay: %s", exc)
            return
        for name in _fixed_changes(current, fresh):
            logger.warning("gateway.%s changed in %s: restart gatespec to apply it", name, path)
        try:
            changed = await runtime.reconfigure(fresh)
        except Exception as exc:  # a clash the loader cannot see (e.g. two keys normalise alike)
            logger.error("config not applied, the running servers stay: %s", exc)
            return
        current = fresh
        logger.info("config reloaded from %s: %s", path, _in_words(changed))
        if on_reload is not None:
            await on_reload(fresh)

    async with anyio.create_task_group() as tg:
        tg.start_soon(_sighups, hup)
        while True:
            with anyio.move_on_after(poll):
                await hup.wait()
            if hup.is_set():
                hup.clear()
                await reload()
                stamp = _stamp(path)
                continue
            now = _stamp(path)
            if current.options.watch and now is not None and now != stamp:
                stamp = now
                await reload()


class _Flag:
    """An event that can be cleared (set by the SIGHUP task, consumed by the watcher)."""

    def __init__(self) -> None:
        self._event = anyio.Event()

    def set(self) -> None:
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    def clear(self) -> None:
        if self._event.is_set():
            self._event = anyio.Event()

    async def wait(self) -> None:
        await self._event.wait()


async def _sighups(flag: _Flag) -> None:
    """Set `flag` on every SIGHUP for as long as the watcher runs (where the platform has one
    and this is the main thread; elsewhere only the file is watched)."""
    if not hasattr(signal, "SIGHUP"):
        return
    with suppress(NotImplementedError, ValueError, RuntimeError):
        with anyio.open_signal_receiver(signal.SIGHUP) as signals:
            async for _ in signals:
                flag.set()


def _in_words(changed: object) -> str:
    """What a reload changed, as a sentence: "added beta; removed gamma; restarted alpha"."""
    if not changed:
        return "no server changed"
    parts = [
        f"{verb} {', '.join(keys)}"
        for verb, keys in (
            ("added", getattr(changed, "added", ())),
            ("removed", getattr(changed, "removed", ())),
            ("restarted", getattr(changed, "replaced", ())),
        )
        if keys
    ]
    return "; ".join(parts) if parts else str(changed)
