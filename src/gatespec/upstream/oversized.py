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

__all__ = [
    "EDGE",
    "MALFORMED_CODE",
    "OVERSIZED_CODE",
    "Oversized",
    "malformed_error",
    "oversized_error",
]

OVERSIZED_CODE: Final = -32090  # never leaves the gateway: the upstream layer types it
MALFORMED_CODE: Final = -32091  # the same, for an answer that is not valid JSON-RPC
EDGE: Final = 1024  # bytes kept of each end of a skipped answer, to find its id
_ID: Final = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.){0,256}")')
# The top-level members at either end of a message too large (or too broken) to parse:
# scalar members before the first compound value (and that value's key), scalar ones after
# the last. Enough to tell an answer (id, result or error) from a notification or a request
# (method, params).
_STR: Final = rb'"(?:[^"\\]|\\.){0,256}"'
_SCALAR: Final = rb"(?:" + _STR + rb"|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null)"
_HEAD_MEMBER: Final = re.compile(rb"\s*(" + _STR + rb")\s*:\s*(" + _SCALAR + rb")?\s*(,)?")
_TAIL: Final = re.compile(
    rb"((?:\s*,\s*" + _STR + rb"\s*:\s*" + _SCALAR + rb")*)\s*\}\s*\Z", re.DOTALL
)
_TAIL_MEMBER: Final = re.compile(rb"(" + _STR + rb")\s*:\s*(" + _SCALAR + rb")")


def _edge_members(head: bytes, tail: bytes) -> tuple[dict[bytes, bytes], bytes | None]:
    """({key: scalar value} of the top-level members readable at the two ends, the key of the
    first compound member)."""
    members: dict[bytes, bytes] = {}
    compound = None
    start = head.find(b"{")
    if start != -1:
        at = start + 1
        while (match := _HEAD_MEMBER.match(head, at)) is not None:
            key, value = match.group(1), match.group(2)
            if value is None:
                compound = key
                break
            members[key] = value
            if match.group(3) is None:
                break
            at = match.end()
    found = _TAIL.search(tail)
    if found is not None:
        for match in _TAIL_MEMBER.finditer(found.group(1)):
            members.setdefault(match.group(1), match.group(2))
    return members, compound


def malformed_error(request: types.RequestId, reason: str) -> SessionMessage:
    """The answer a request gets instead of its own when that is not valid JSON-RPC."""
    error = types.ErrorData(
        code=MALFORMED_CODE, message=f"the answer is not a valid JSON-RPC message ({reason})"
    )
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=request, error=error))


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

    @staticmethod
    def is_answer(head: bytes, tail: bytes) -> bool:
        """Whether a message may be an answer, judged by its two ends: not when a top-level
        `method` shows, or its first compound member is `params` (a notification, or a request
        of the server's). A notification is never a request's answer (issue 22 #15)."""
        members, compound = _edge_members(head, tail)
        return b'"method"' not in members and compound != b'"params"'

    def malformed(self, line: bytes) -> types.RequestId | None:
        """The outstanding request a line that is not a valid message answered, if one can be
        named (issue 22 #16): its id read from the line as far as it parses, else from its
        two ends."""
        try:
            doc = json.loads(line.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError):
            head, tail = line[:EDGE], line[-EDGE:]
            return self.request_of(head, tail) if self.is_answer(head, tail) else None
        if not isinstance(doc, dict) or "method" in doc:
            return None
        rid = doc.get("id")
        if isinstance(rid, bool) or not isinstance(rid, (str, int)):
            return None
        return rid if rid in self.outstanding else None

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

    def fail(self, request: types.RequestId, reason: str) -> SessionMessage:
        """`malformed_error` for `request`, which is then answered."""
        self.outstanding.discard(request)
        return malformed_error(request, reason)

    def answer(
        self,
        request: types.RequestId,
        size: int,
        limit: int = MAX_UPSTREAM_RESULT_BYTES,
        what: str = "",
    ) -> SessionMessage:
        self.outstanding.discard(request)
        return oversized_error(request, size, limit, what)
