"""The recent calls of a served gateway, kept per identity for the status page.

`CallLog` is a server middleware (mcp's `Server.middleware`: it wraps every inbound request of
every transport), so the profiles' servers need no hook of their own. It records the requests
that reach tools and upstreams (tools/call, and the aggregate profile's routed requests): when,
who, what was called, how long it took and how it ended. Arguments and error messages are
redacted (gatespec.secrets: every remembered ${VAR} value) before they are cut, and kept short.

Calls are keyed by the caller's identity (`Identity.key`) and read back only by that key: one
identity never sees another's calls, whatever it may see otherwise. The log is bounded: a
ring of RECENT_CALLS per identity and at most MAX_IDENTITIES identities (the least recently
active one goes first).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, Final

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult

from gatespec.access import Identity
from gatespec.secrets import redact
from gatespec_surface.text import clip

__all__ = ["RECORDED_METHODS", "CallLog", "RecordedCall"]

logger = logging.getLogger(__name__)

RECENT_CALLS: Final = 50  # per identity
MAX_IDENTITIES: Final = 1000
SHOWN_CHARS: Final = 160  # of an argument list or an error message
# The requests that run something upstream (the others list or negotiate).
RECORDED_METHODS: Final = frozenset(
    {"tools/call", "prompts/get", "resources/read", "completion/complete"}
)
# The argument that names the upstream tool a meta-tool runs, per meta-tool.
_TARGET_ARGUMENT: Final = {
    "tool_execute": "tool_id",
    "tool_hydrate": "tool_id",
    "call": "operation",
}


@dataclass(frozen=True)
class RecordedCall:
    at: float  # epoch seconds
    method: str
    name: str  # the tool (or prompt, resource) the client named
    target: str | None  # the upstream tool a meta-tool ran, when its arguments name one
    ms: float
    outcome: str  # "ok", a spec error code, "upstream" (the tool's own isError) or "error"
    arguments: str  # redacted, cut
    message: str | None  # why it failed (redacted, cut)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def _shown(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return clip(redact(text), SHOWN_CHARS)


def _outcome(result: HandlerResult) -> tuple[str, str | None]:
    """How a result ended: ("ok", None), or its error code and message."""
    if isinstance(result, CallToolResult):  # read in place: dumping it cost every call ~2%
        if result.is_error is not True:
            return "ok", None
        payload: object = result.structured_content
        first = result.content[0] if result.content else None
        text = getattr(first, "text", None)
    elif isinstance(result, Mapping) and result.get("isError") is True:
        payload = result.get("structuredContent")
        content = result.get("content") or [{}]
        text = content[0].get("text") if isinstance(content[0], Mapping) else None
    else:
        return "ok", None
    if not isinstance(payload, Mapping):
        try:
            payload = json.loads(text) if isinstance(text, str) else None
        except ValueError:
            payload = {"message": text}
    if isinstance(payload, Mapping) and isinstance(payload.get("code"), str):
        return str(payload["code"]), _shown(payload.get("message", ""))
    message = payload.get("message") if isinstance(payload, Mapping) else None
    return "upstream", _shown(message) if message else None


class CallLog:
    """Recent calls by identity; also the middleware that records them (module docstring)."""

    def __init__(self, identify: Callable[[ServerRequestContext[Any, Any]], Identity | None]):
        self.identify = identify  # who makes a request (None: nobody verified, not recorded)
        self._calls: OrderedDict[str, deque[RecordedCall]] = OrderedDict()
        # Read from the stdio status port's thread as well as written by the event loop.
        self._lock = threading.Lock()

    def record(self, identity: Identity, call: RecordedCall) -> None:
        with self._lock:
            ring = self._calls.get(identity.key)
            if ring is None:
                ring = self._calls[identity.key] = deque(maxlen=RECENT_CALLS)
                while len(self._calls) > MAX_IDENTITIES:
                    self._calls.popitem(last=False)
            else:
                self._calls.move_to_end(identity.key)
            ring.append(call)

    def recent(self, identity: Identity) -> list[RecordedCall]:
        """`identity`'s own recent calls, newest first."""
        with self._lock:
            return list(reversed(self._calls.get(identity.key, ())))

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.method not in RECORDED_METHODS or ctx.request_id is None:
            return await call_next(ctx)
        started = time.perf_counter()
        outcome: tuple[str, str | None] = ("error", None)
        try:
            result = await call_next(ctx)
            outcome = _outcome(result)
            return result
        except MCPError as exc:  # a routed request's failure (aggregate profile)
            outcome = ("error", _shown(exc.error.message))
            raise
        finally:
            self._note(ctx, time.perf_counter() - started, outcome)

    def _note(
        self, ctx: ServerRequestContext[Any, Any], seconds: float, outcome: tuple[str, str | None]
    ) -> None:
        try:  # recording never breaks the call it records
            identity = self.identify(ctx)
            if identity is None:
                return
            params = ctx.params or {}
            name = params.get("name") or params.get("uri") or ""
            arguments = params.get("arguments") or {}
            key = _TARGET_ARGUMENT.get(str(name))
            target = arguments.get(key) if key and isinstance(arguments, Mapping) else None
            self.record(
                identity,
                RecordedCall(
                    at=time.time(),
                    method=ctx.method,
                    name=_shown(name),
                    target=_shown(target) if isinstance(target, str) else None,
                    ms=round(seconds * 1000, 2),
                    outcome=outcome[0],
                    arguments=_shown(arguments),
                    message=outcome[1],
                ),
            )
        except Exception:
            logger.debug("recording a call for the status page failed", exc_info=True)
