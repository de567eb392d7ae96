"""What an upstream answer over the size cap becomes (AM-RESULT-SIZE-CAP), on every transport.

The answer is skipped unparsed; the request it answered gets `oversized_error`, whose
JSON-RPC code (OVERSIZED_CODE) never leaves the gateway: the upstream layer turns it into
UPSTREAM_ERROR kind too_large. Where the transport cannot tell which request an answer was for
(stdio lines, legacy SSE events), `Oversized` works it out from the requests awaiting an answer
and the two ends of the skipped bytes.
"""

from __future__ import annotations

import json
import re
from contextlib import suppress
from typing import Any, Final

import mcp_types as types
from mcp.shared.message import SessionMessage

from gatespec_surface.budgets import MAX_UPSTREAM_RESULT_BYTES

__all__ = ["EDGE", "OVERSIZED_CODE", "Oversized", "oversized_error"]

OVERSIZED_CODE: Final = -32090  # never leaves the gateway: the upstream layer types it
EDGE: Final = 1024  # bytes kept of each end of a skipped answer, to find its id
_ID: Final = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.){0,256}")')


def oversized_error(
    request: types.RequestId, size: int, limit: int = MAX_UPSTREAM_RESULT_BYTES, what: str = ""
) -> SessionMessage:
    """The answer a request over the cap gets instead of its own; `what` names a limit other
    than MAX_UPSTREAM_RESULT_BYTES."""
    error = types.ErrorData(
        code=OVERSIZED_CODE,
        message=f"the answer is over {size:,} bytes; the gateway reads at most "
        f"{limit:,} bytes ({what or 'MAX_UPSTREAM_RESULT_BYTES'})",
    )
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=request, error=error))


class Oversized:
    """Which request an oversized line (or event) answered, without parsing it.

    The outbound side records the id of every request the session sends (`sent`) and the
    inbound side forgets it when its answer passes (`answered`), so the requests awaiting an
    answer are known. An oversized line answers one of them: with one outstanding, that one;
    otherwise the outstanding id that appears as an "id" member in the line's first or last
    1 KiB (a JSON-RPC response's members are its id, jsonrpc and result or error). When no
    single request qualifies, None: the caller ends the connection rather than guess.
    """

    def __init__(self) -> None:
        self.outstanding: set[types.RequestId] = set()

    def sent(self, message: Any) -> None:
        if isinstance(message, types.JSONRPCRequest):
            self.outstanding.add(message.id)
        elif isinstance(message, types.JSONRPCNotification) and message.method == (
            "notifications/cancelled"
        ):
            self.outstanding.discard((message.params or {}).get("requestId"))

    def answered(self, message: Any) -> None:
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self.outstanding.discard(message.id)

    def request_of(self, head: bytes, tail: bytes) -> types.RequestId | None:
        if len(self.outstanding) == 1:
            return next(iter(self.outstanding))
        found = set()
        for edge in (head, tail):
            for match in _ID.finditer(edge):
                with suppress(ValueError):
                    value = json.loads(match.group(1))
                    if value in self.outstanding:
                        found.add(value)
        return found.pop() if len(found) == 1 else None

    def answer(
        self,
        request: types.RequestId,
        size: int,
        limit: int = MAX_UPSTREAM_RESULT_BYTES,
        what: str = "",
    ) -> SessionMessage:
        self.outstanding.discard(request)
        return oversized_error(request, size, limit, what)
