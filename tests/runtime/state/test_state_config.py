"""The gateway.state block (gatespec.state.config) and drain_timeout: defaults, the values a
replica deployment sets, and a typed error naming the key for every bad one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gatespec.artifacts import ArtifactStore
from gatespec.config import ConfigError, load_config, parse_config
from gatespec.state import MemoryState, StateConfig, open_state
from gatespec.state.redis_backend import RedisState


def options(gateway: dict[str, Any], environ: dict[str, str] | None = None) -> Any:
    return parse_config({"mcpServers": {}, "gateway": gateway}, environ=environ or {}).options


def test_defaults_keep_state_in_this_process() -> None:
    default = options({})
    assert default.state is None and default.drain_timeout == 10.0
    assert isinstance(open_state(default.state), MemoryState)
    assert isinstance(open_state(options({"state": {"backend": "memory"}}).state), MemoryState)


def test_the_memory_backend_keeps_the_bounds_the_block_sets() -> None:
    """The artifact bounds hold in memory as in Redis (they were read, then ignored)."""
    state = options(
        {"state": {"max_total_bytes": 5000, "max_share_bytes": 2000, "max_artifacts": 7}}
    ).state
    store = open_state(state).artifacts.store  # type: ignore[attr-defined]
    assert (store.max_total_bytes, store.max_share_bytes, store.max_artifacts) == (5000, 2000, 7)
    for _ in range(9):
        store.put(b"x", "text/plain", "one byte")
    assert len(store) == 7
    unset = open_state(options({"state": {"backend": "memory"}}).state)
    assert unset.artifacts.store.max_total_bytes == ArtifactStore().max_total_bytes  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_a_redis_block_with_its_password_from_the_environment() -> None:
    state = options(
        {
            "drain_timeout": 4,
            "state": {
                "backend": "redis",
                "url": "redis://:${PW}@valkey:6379/2",
                "ttl": "600",
                "prefix": "gw1:",
                "max_artifact_bytes": 1024,
                "timeout": 0.5,
            },
        },
        environ={"PW": "s3cret"},
    ).state
    assert state == StateConfig("redis", "redis://:s3cret@valkey:6379/2", 600.0, "gw1:", 1024, 0.5)
    assert state.url_shown == "redis://:***@valkey:6379/2"  # what logs and errors show
    backend = open_state(state)  # connects lazily: nothing listens on valkey:6379 here
    assert isinstance(backend, RedisState)
    await backend.aclose()


@pytest.mark.parametrize(
    ("state", "path", "problem"),
    [
        ({"backend": "redis"}, "gateway.state.url", "needs a url"),
        ({"backend": "memcached"}, "gateway.state.backend", "expected one of memory, redis"),
        ({"url": "redis://x"}, "gateway.state.url", "only the redis backend takes a url"),
        ({"backend": "redis", "url": "http://x"}, "gateway.state.url", "scheme 'http'"),
        ({"backend": "redis", "url": "redis://x", "ttl": 0}, "gateway.state.ttl", "positive"),
        ({"backend": "redis", "url": "redis://x", "ttl": "soon"}, "gateway.state.ttl", "number"),
        ({"backend": "redis", "url": "redis://x", "timeout": -1}, "gateway.state.timeout", "positive"),
        ({"backend": "redis", "url": "redis://x", "max_artifact_bytes": 0},
         "gateway.state.max_artifact_bytes", "positive number of bytes"),
        ({"backend": "redis", "url": "redis://x", "max_artifact_bytes": 1.5},
         "gateway.state.max_artifact_bytes", "positive number of bytes"),
        ({"backend": "redis", "url": "redis://x", "prefix": ""}, "gateway.state.prefix", "empty"),
        ({"max_artifacts": 0}, "gateway.state.max_artifacts", "positive number of artifacts"),
        ({"backend": "redis", "url": "redis://x", "urls": []}, "gateway.state.urls", "unknown key"),
        ("redis://x", "gateway.state", "expected an object"),
    ],
)  # fmt: skip
def test_bad_state_blocks_name_the_key(tmp_path: Path, state: Any, path: str, problem: str) -> None:
    config = tmp_path / "gw.json"
    config.write_text(json.dumps({"mcpServers": {}, "gateway": {"state": state}}))
    with pytest.raises(ConfigError) as info:
        load_config(config, environ={})
    assert info.value.path == path and problem in info.value.problem
    assert str(config) in str(info.value)


def test_a_bad_drain_timeout_names_the_key() -> None:
    with pytest.raises(ConfigError) as info:
        options({"drain_timeout": 0})
    assert info.value.path == "gateway.drain_timeout"
