"""A 2026-07-28 connection's subscriptions/listen stream: it carries the server's list changes
and the updates of the resources the gateway subscribed to, and is listened again (with
backoff) when lost or when the subscribed set changes. There is no replay, so a lost stream
is followed by a refetch."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Final

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost
from mcp.shared.exceptions import MCPError

logger = logging.getLogger(__name__)

_BACKOFF_MAX: Final = 30.0
SUBSCRIBING: Final = ("resources/subscribe", "resources/unsubscribe")


class ResourceWatch:
    """The resource URIs the gateway subscribed to; on a 2026-07-28 connection they ride the
    listen filter, so a change of the set wakes the stream to listen again."""

    def __init__(self) -> None:
        self.uris: set[str] = set()
        self.changed = anyio.Event()

    def update(self, method: str, uri: str) -> None:
        """resources/subscribe adds `uri`, resources/unsubscribe removes it."""
        before = set(self.uris)
        if method == "resources/subscribe":
            self.uris.add(uri)
        else:
            self.uris.discard(uri)
        if self.uris != before:
            changed, self.changed = self.changed, anyio.Event()
            changed.set()


def announces_more(caps: types.ServerCapabilities) -> bool:
    """The server announces prompt or resource list changes, or resource updates."""
    prompts, resources = caps.prompts, caps.resources
    return bool(
        (prompts and prompts.list_changed)
        or (resources and (resources.list_changed or resources.subscribe))
    )


async def listen(
    client: Client,
    watch: ResourceWatch,
    key: str,
    *,
    subscribed: Callable[[], None],
    refetch: Callable[[], None],
) -> None:
    """Hold the listen stream open until the server closes it or does not support it.
    `subscribed()` runs when the server honours the tools list subscription, `refetch()` after
    a lost stream was listened to again."""
    delay = 1.0
    while True:
        try:
            caps = client.server_capabilities
            tools = bool(caps.tools and caps.tools.list_changed)
            changed = watch.changed
            async with client.listen(
                tools_list_changed=tools,
                prompts_list_changed=bool(caps.prompts and caps.prompts.list_changed),
                resources_list_changed=bool(caps.resources and caps.resources.list_changed),
                resource_subscriptions=sorted(watch.uris),
            ) as sub:
                if tools and sub.honored.tools_list_changed:
                    subscribed()
                delay = 1.0
                if await _events_until(sub, changed, key):
                    return  # graceful close by the server: it will not send more
                continue  # the subscribed set changed: listen again with the new filter
        except ListenNotSupportedError:
            return
        except (SubscriptionLost, MCPError, TimeoutError) as exc:
            logger.debug("upstream %r listen lost: %r", key, exc)
        await anyio.sleep(delay)
        delay = min(delay * 2, _BACKOFF_MAX)
        refetch()  # no replay: refetch after re-listening


async def _events_until(sub: Any, changed: anyio.Event, key: str) -> bool:
    """Drain a listen stream's events (on_message routes them) until the server closes it
    (True) or `changed` is set (False)."""
    closed = False
    async with anyio.create_task_group() as tg:

        async def drain() -> None:
            nonlocal closed
            async for event in sub:
                logger.debug("upstream %r event %r", key, event)
            closed = True
            tg.cancel_scope.cancel()

        tg.start_soon(drain)
        await changed.wait()
        tg.cancel_scope.cancel()
    return closed
