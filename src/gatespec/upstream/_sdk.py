"""The few places where the upstream layer reaches below the mcp SDK's public API.

Why: `ClientSession.list_tools()` validates the whole tools/list page with pydantic, so ONE
malformed tool (missing inputSchema, non-string name...) raises ValidationError and loses every
tool of that server (checked against mcp 2.3.0). `ClientSession.send_request` runs the same
validation, so there is no public raw path. The SDK's own `subscriptions.listen` sends raw
requests the way done here: let the session stamp the request for the negotiated protocol era
(handshake-era `MCP-Protocol-Version` header, or the 2026-07-28 `_meta` envelope and
`Mcp-Method`/`Mcp-Name`/`Mcp-Param-*` headers), then hand it to the session's dispatcher, which
returns the result dict untouched.

Every private SDK name the upstream side uses is used here and nowhere else (the server side's
seam is gatespec.server._sdk; tests/runtime/server/test_sdk_seam.py and ruff's banned-api rule keep it
so): the raw requests above, the SDK's input_required driver, its transport streams type and
the legacy SSE client's event size limit.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import mcp_types as types
from mcp.client._input_required import run_input_required_driver
from mcp.client._transport import TransportStreams
from mcp.client.session import ClientRequestContext, ClientSession
from mcp.shared import _httpx_utils
from mcp.shared.dispatcher import CallOptions, ProgressFnT
from pydantic import ValidationError

__all__ = [
    "TransportStreams",
    "absorb_tools",
    "raw_request",
    "resolve_input_required",
    "sse_event_limit",
]

logger = logging.getLogger(__name__)


def sse_event_limit() -> int | None:
    """The legacy SSE client's limit on one event's size. The SDK's sse_client opens its
    stream through a private helper with its default limit and offers no way to change it:
    the default is read rather than restated."""
    parameter = inspect.signature(_httpx_utils.sse_within_origin).parameters.get("max_event_size")
    default = parameter.default if parameter is not None else None
    return default if isinstance(default, int) else None


async def raw_request(
    session: ClientSession,
    method: str,
    params: Mapping[str, Any] | None,
    on_progress: ProgressFnT | None = None,
) -> dict[str, Any]:
    """Send one request on `session` and return the result exactly as the server sent it.

    The params are built by the caller (never copied from an incoming request), so an incoming
    `_meta` envelope cannot leak upstream; the session adds the envelope its own era needs.
    Raises MCPError for an error response or a closed connection (code CONNECTION_CLOSED).
    Timeouts are the caller's (a cancelled request gets a courtesy notifications/cancelled).
    `on_progress` gets the server's progress for this request (the dispatcher sends a progress
    token of its own).
    """
    data: dict[str, Any] = {"method": method, "params": dict(params or {})}
    opts: CallOptions = {}
    if on_progress is not None:
        opts["on_progress"] = on_progress
    session._stamp(data, opts)  # pyright: ignore[reportPrivateUsage]
    return await session._dispatcher.send_raw_request(  # pyright: ignore[reportPrivateUsage]
        method, data.get("params"), opts
    )


def absorb_tools(
    session: ClientSession, tools: Sequence[Mapping[str, Any]], complete: bool
) -> None:
    """Feed the well-formed tools of a raw listing to the session's per-tool state.

    On 2026-07-28 connections the session mirrors `x-mcp-header` arguments into `Mcp-Param-*`
    headers on tools/call, from state built by its own listing; a raw listing bypasses that, so
    it is replayed here with the tools that parse. Best effort: a failure only costs headers.
    (Handshake-era sessions would only cache output schemas for `call_tool`'s result check, which
    raw requests never run, so callers skip it for them.)
    """
    parsed: list[types.Tool] = []
    for tool in tools:
        try:
            parsed.append(types.Tool.model_validate(tool, by_name=False))
        except ValidationError:
            continue
    try:
        session._absorb_tool_listing(  # pyright: ignore[reportPrivateUsage]
            types.ListToolsResult(tools=parsed), complete=complete
        )
    except Exception:  # noqa: BLE001 - an SDK internals change must not break listing
        logger.debug("could not absorb the tool listing into the session", exc_info=True)


Resend = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


async def resolve_input_required(
    session: ClientSession, raw: dict[str, Any], resend: Resend
) -> dict[str, Any]:
    """A 2026-07-28 server's input_required result, resolved through the session's own
    sampling / elicitation / roots callbacks and the SDK's retry driver (the same path the
    SDK's `Client.call_tool` takes); any other result is returned as it is. `resend(extra)`
    sends the original request again with `extra` (inputResponses, requestState) added."""
    if raw.get("resultType") != "input_required":
        return raw
    first = types.InputRequiredResult.model_validate(raw, by_name=False)

    async def dispatch(key: str, request: Any) -> Any:
        ctx = ClientRequestContext(session=session, request_id=f"input-{key}")
        return await session.dispatch_input_request(ctx, request)

    async def retry(responses: Any, state: str | None) -> Any:
        extra: dict[str, Any] = {}
        if responses:
            extra["inputResponses"] = {
                k: v.model_dump(by_alias=True, mode="json", exclude_none=True)
                for k, v in responses.items()
            }
        if state is not None:
            extra["requestState"] = state
        again = await resend(extra)
        if again.get("resultType") == "input_required":
            return types.InputRequiredResult.model_validate(again, by_name=False)
        return again

    result: dict[str, Any] = await run_input_required_driver(first, dispatch=dispatch, retry=retry)
    return result
