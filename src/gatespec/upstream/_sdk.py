"""The few places where the upstream layer reaches below the mcp SDK's public API.

Why: `ClientSession.list_tools()` validates the whole tools/list page with pydantic, so ONE
malformed tool (missing inputSchema, non-string name...) raises ValidationError and loses every
tool of that server (checked against mcp 2.3.0). `ClientSession.send_request` runs the same
validation, so there is no public raw path. The SDK's own `subscriptions.listen` sends raw
requests the way done here: let the session stamp the request for the negotiated protocol era
(handshake-era `MCP-Protocol-Version` header, or the 2026-07-28 `_meta` envelope and
`Mcp-Method`/`Mcp-Name`/`Mcp-Param-*` headers), then hand it to the session's dispatcher, which
returns the result dict untouched. Keep every private access in this module.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import mcp_types as types
from mcp.client.session import ClientSession
from mcp.shared.dispatcher import CallOptions
from pydantic import ValidationError

logger = logging.getLogger(__name__)


async def raw_request(
    session: ClientSession, method: str, params: Mapping[str, Any] | None
) -> dict[str, Any]:
    """Send one request on `session` and return the result exactly as the server sent it.

    The params are built by the caller (never copied from an incoming request), so an incoming
    `_meta` envelope cannot leak upstream; the session adds the envelope its own era needs.
    Raises MCPError for an error response or a closed connection (code CONNECTION_CLOSED).
    Timeouts are the caller's (a cancelled request gets a courtesy notifications/cancelled).
    """
    data: dict[str, Any] = {"method": method, "params": dict(params or {})}
    opts: CallOptions = {}
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
