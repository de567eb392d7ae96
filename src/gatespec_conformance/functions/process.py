"""The adapter under test as a child process speaking the JSON-lines protocol (docs/conformance.md):
requests, timeouts, crashes and restarts."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Sequence
from typing import Any

# ------------------------------------------------------------------ the adapter process


class AdapterFailure(Exception):
    """The adapter cannot go on answering: it exited, timed out or broke the protocol."""


class AdapterProcess:
    """One adapter subprocess. Lines are read by a thread into a queue so that every wait has
    a timeout; stderr is kept (last lines) to explain a crash."""

    def __init__(self, command: Sequence[str], env: dict[str, str] | None = None) -> None:
        self.command = list(command)
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._stderr: deque[str] = deque(maxlen=20)

    def start(self) -> None:
        try:
            self.proc = subprocess.Popen(
                self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self.env,
                start_new_session=True,  # so that stop() can end the adapter's own children
            )
        except OSError as exc:
            raise AdapterFailure(f"cannot start adapter {self.command!r}: {exc}") from exc
        self._lines = queue.Queue()
        self._stderr.clear()
        threading.Thread(
            target=self._pump_stdout, args=(self.proc, self._lines), daemon=True
        ).start()
        threading.Thread(target=self._pump_stderr, args=(self.proc,), daemon=True).start()

    @staticmethod
    def _pump_stdout(proc: subprocess.Popen[bytes], lines: queue.Queue[bytes | None]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    def _pump_stderr(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            self._stderr.append(line.decode("utf-8", "replace").rstrip())

    def stderr_tail(self, n: int = 5) -> str:
        lines = list(self._stderr)[-n:]
        return " | ".join(lines)

    def _exited(self, during: str) -> AdapterFailure:
        assert self.proc is not None
        try:
            status = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            status = None
        time.sleep(0.05)  # let the stderr pump catch the last words
        tail = self.stderr_tail()
        said = f"; its stderr ends: {tail}" if tail else ""
        how = f"exited with status {status}" if status is not None else "closed its stdout"
        return AdapterFailure(f"adapter {how} {during}{said}")

    def request(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send one request and wait for the answer with the same id."""
        if self.proc is None or self.proc.stdin is None:
            raise AdapterFailure("adapter is not running")
        data = (json.dumps(message, ensure_ascii=True, allow_nan=False) + "\n").encode("ascii")
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._exited("before reading this request") from None
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AdapterFailure(f"no answer within {timeout:g}s") from None
        if line is None:
            raise self._exited("while answering this request")
        try:
            reply = json.loads(line)
        except json.JSONDecodeError:
            shown = line[:200].decode("utf-8", "replace")
            raise AdapterFailure(
                f"protocol: adapter wrote a line that is not JSON: {shown!r}"
            ) from None
        if not isinstance(reply, dict) or reply.get("id") != message["id"]:
            raise AdapterFailure(
                f"protocol: expected an object with id {message['id']}, got {line[:200]!r}"
            )
        return reply

    def stop(self, kill: bool = False) -> None:
        """Close stdin (the normal end) and wait briefly; then, or at once with `kill` (a hung
        or broken adapter), end the adapter's process group."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            if proc.stdin is not None:
                proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=0 if kill else 2)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # its own session: see start()
            except (ProcessLookupError, PermissionError, AttributeError):
                proc.kill()
            proc.wait()
