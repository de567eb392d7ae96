"""Shared low-level server plumbing for both profiles."""

from __future__ import annotations

from typing import Any

from mcp.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions

from . import __version__


class GatewayServer(Server):
    """`mcp.server.Server` whose default initialization options advertise the
    list_changed capabilities the gateway actually delivers.

    The Streamable HTTP session manager calls `create_initialization_options()`
    without arguments, so the defaults have to live on the instance.
    """

    def __init__(self, name: str, *, notification_options: NotificationOptions | None = None, **kwargs: Any):
        kwargs.setdefault("version", __version__)
        super().__init__(name, **kwargs)
        self._default_notification_options = notification_options or NotificationOptions()

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or self._default_notification_options, experimental_capabilities, extensions
        )
