"""Issue 22, never tested before: the aggregate profile under the 200-session load. A real
`gatespec serve --profile aggregate --transport http` in front of a stdio upstream that logs
every call it executes; 200 concurrent handshake-era sessions over Streamable HTTP, one in ten
declaring roots (so that it gets upstream connections of its own, within
gateway.max_client_connections). Expected: no error, every answer the caller's own text, and
every call executed upstream exactly once (none lost, none duplicated)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.runtime.load_support import (
    echo_server,
    expected_texts,
    run_load,
    serve_http,
    write_config,
)

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(600)]

SESSIONS, CALLS = 200, 5


async def test_two_hundred_sessions_lose_and_duplicate_nothing(
    servers: Any, tmp_path: Path
) -> None:
    log = tmp_path / "calls.log"
    config = tmp_path / "gatespec.json"
    write_config(config, {"up": echo_server(log)}, profile="aggregate")
    _, url = serve_http(servers, config)
    outcome = await run_load(url, "aggregate", "up__echo", SESSIONS, CALLS, roots_every=10)
    assert outcome.errors == []
    assert outcome.wrong == []
    assert outcome.calls == SESSIONS * CALLS
    assert outcome.upstream_counts(log) == expected_texts(SESSIONS, CALLS)
