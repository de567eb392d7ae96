"""The lines shown while the upstreams connect: one per upstream, or one updating line on a
terminal, then a summary."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TextIO

from gatespec.cli.output import say

if TYPE_CHECKING:
    from gatespec.upstream import UpstreamPool, UpstreamStatus


class Progress:
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
            say(f"[{done}/{total}] {failed or f'{key}: {state}{stub}'}", self.stream)

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
        say(f"{connected} of {len(statuses)} upstreams connected{tail}", self.stream)
        if self.stubs:
            say(
                f"{len(self.stubs)} of them are stubs that echo calls, not real servers "
                "(serve --config FILE fronts the servers it names)",
                self.stream,
            )
