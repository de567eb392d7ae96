"""The fault-and-fuzz suite runs on asyncio, the gateway's backend."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
