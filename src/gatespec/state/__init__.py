"""Where per-caller state lives: in this process (the default) or in Redis/Valkey, shared by
every replica (gatespec.state.base says what is shared and how)."""

from __future__ import annotations

from gatespec.artifacts import ArtifactStore
from gatespec.state.base import (
    ArtifactBackend,
    ArtifactWriter,
    SeenCardBackend,
    StateBackend,
    StateUnavailable,
)
from gatespec.state.config import StateConfig, parse_state
from gatespec.state.memory import MemoryState

__all__ = [
    "ArtifactBackend",
    "ArtifactWriter",
    "MemoryState",
    "SeenCardBackend",
    "StateBackend",
    "StateConfig",
    "StateUnavailable",
    "open_state",
    "parse_state",
]


def open_state(config: StateConfig | None) -> StateBackend:
    """The backend `config` names (memory when there is none)."""
    if config is None:
        return MemoryState()
    if config.backend == "memory":
        return MemoryState(
            ArtifactStore(config.total_bytes, config.max_artifacts, config.share_bytes)
        )
    from gatespec.state.redis_backend import RedisState  # redis-py only when it is used

    return RedisState(config)
