"""Configuration file loading and validation.

The config file is JSON (see README.md, "Config format").  Only `mcpServers`
is required; everything else has a default.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

# A server key becomes the namespace of everything that upstream exposes, so it
# must be safe in both profiles: no `__` (the aggregate separator, seed 004), no
# leading/trailing `_` (would make `key___tool` ambiguous), no `/` (the search
# profile's operation path separator, seed 003).
SERVER_KEY_RE = re.compile(r"^[A-Za-z0-9.\-]+(?:_[A-Za-z0-9.\-]+)*$")

OPERATION_TYPES = ("query", "mutation", "subscription")


class ConfigError(ValueError):
    """The config file is unusable as a whole."""


@dataclass(frozen=True)
class UpstreamSpec:
    key: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] | None = None
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] | None = None
    timeout: float | None = None  # per-server override of defaultTimeout
    protocol: str = "legacy"  # how switchyard talks to the upstream: "legacy" | "auto"
    operation_types: dict[str, str] = field(default_factory=dict)  # search profile overrides


@dataclass(frozen=True)
class IdentitySpec:
    name: str
    tokens: tuple[str, ...]
    allow: tuple[str, ...] | None  # None = every operation


@dataclass(frozen=True)
class Config:
    servers: dict[str, UpstreamSpec]
    rejected_servers: dict[str, str]  # key -> reason (logged, not fatal)
    default_timeout: float = 30.0
    connect_timeout: float = 15.0
    reconnect_backoff: float = 2.0
    identities: dict[str, IdentitySpec] = field(default_factory=dict)
    stdio_identity: str | None = None
    internal_operations: tuple[str, ...] = ()
    max_batch: int = 50
    short_description_length: int = 200


def _positive_number(raw: dict[str, Any], key: str, default: float) -> float:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(f"'{key}' must be a positive number of seconds")
    return float(value)


def _str_list(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{what} must be a list of strings")
    return tuple(value)


def _str_dict(value: Any, what: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ConfigError(f"{what} must be an object of string values")
    return dict(value)


def _parse_server(key: str, raw: Any) -> UpstreamSpec:
    if not isinstance(raw, dict):
        raise ConfigError(f"mcpServers.{key} must be an object")
    command, url = raw.get("command"), raw.get("url")
    if (command is None) == (url is None):
        raise ConfigError(f"mcpServers.{key} needs exactly one of 'command' or 'url'")
    if command is not None and (not isinstance(command, str) or not command):
        raise ConfigError(f"mcpServers.{key}.command must be a non-empty string")
    if url is not None and (not isinstance(url, str) or not url.startswith(("http://", "https://"))):
        raise ConfigError(f"mcpServers.{key}.url must be an http(s) URL")
    timeout = raw.get("timeout")
    if timeout is not None:
        timeout = _positive_number(raw, "timeout", 1.0)
    protocol = raw.get("protocol", "legacy")
    if protocol not in ("legacy", "auto"):
        raise ConfigError(f"mcpServers.{key}.protocol must be 'legacy' or 'auto'")
    op_types = raw.get("operationTypes", {})
    op_types = _str_dict(op_types, f"mcpServers.{key}.operationTypes")
    for tool, kind in op_types.items():
        if kind not in OPERATION_TYPES:
            raise ConfigError(f"mcpServers.{key}.operationTypes.{tool} must be one of {OPERATION_TYPES}")
    return UpstreamSpec(
        key=key,
        command=command,
        args=_str_list(raw.get("args", []), f"mcpServers.{key}.args"),
        env=_str_dict(raw["env"], f"mcpServers.{key}.env") if "env" in raw else None,
        cwd=raw.get("cwd") if isinstance(raw.get("cwd"), str) else None,
        url=url,
        headers=_str_dict(raw["headers"], f"mcpServers.{key}.headers") if "headers" in raw else None,
        timeout=timeout,
        protocol=protocol,
        operation_types=op_types,
    )


def _parse_identities(raw: Any) -> dict[str, IdentitySpec]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError("'identities' must be an object")
    out: dict[str, IdentitySpec] = {}
    seen_tokens: set[str] = set()
    for name, spec in raw.items():
        if not isinstance(spec, dict):
            raise ConfigError(f"identities.{name} must be an object")
        tokens: list[str] = []
        if "token" in spec:
            if not isinstance(spec["token"], str) or not spec["token"]:
                raise ConfigError(f"identities.{name}.token must be a non-empty string")
            tokens.append(spec["token"])
        if "tokens" in spec:
            tokens.extend(_str_list(spec["tokens"], f"identities.{name}.tokens"))
        if not tokens or any(not t for t in tokens):
            raise ConfigError(f"identities.{name} needs a non-empty 'token' or 'tokens'")
        for t in tokens:
            if t in seen_tokens:
                raise ConfigError(f"identities.{name}: token is already used by another identity")
            seen_tokens.add(t)
        allow = spec.get("allow")
        out[name] = IdentitySpec(
            name=name,
            tokens=tuple(tokens),
            allow=None if allow is None else _str_list(allow, f"identities.{name}.allow"),
        )
    return out


def parse_config(raw: Any) -> Config:
    if not isinstance(raw, dict):
        raise ConfigError("config must be a JSON object")
    servers_raw = raw.get("mcpServers")
    if not isinstance(servers_raw, dict):
        raise ConfigError("config needs an 'mcpServers' object")
    servers: dict[str, UpstreamSpec] = {}
    rejected: dict[str, str] = {}
    for key, spec in servers_raw.items():
        if not SERVER_KEY_RE.match(key):
            reason = (
                f"server key {key!r} cannot be used as a namespace (allowed: letters, digits, '.', '-', "
                "single '_' between them; no '__', no leading/trailing '_', no '/')"
            )
            logger.error("skipping upstream: %s", reason)
            rejected[key] = reason
            continue
        servers[key] = _parse_server(key, spec)
    identities = _parse_identities(raw.get("identities"))
    stdio_identity = raw.get("stdioIdentity")
    if stdio_identity is not None and stdio_identity not in identities:
        raise ConfigError("'stdioIdentity' must name an entry of 'identities'")
    max_batch = raw.get("maxBatch", 50)
    if isinstance(max_batch, bool) or not isinstance(max_batch, int) or max_batch < 1:
        raise ConfigError("'maxBatch' must be a positive integer")
    sdl = raw.get("shortDescriptionLength", 200)
    if isinstance(sdl, bool) or not isinstance(sdl, int) or sdl < 8:
        raise ConfigError("'shortDescriptionLength' must be an integer >= 8")
    return Config(
        servers=servers,
        rejected_servers=rejected,
        default_timeout=_positive_number(raw, "defaultTimeout", 30.0),
        connect_timeout=_positive_number(raw, "connectTimeout", 15.0),
        reconnect_backoff=_positive_number(raw, "reconnectBackoff", 2.0),
        identities=identities,
        stdio_identity=stdio_identity,
        internal_operations=_str_list(raw.get("internalOperations", []), "'internalOperations'"),
        max_batch=max_batch,
        short_description_length=sdl,
    )


def load_config(path: str | Path) -> Config:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc}") from exc
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"config {path} is not valid JSON: {exc}") from exc
    return parse_config(raw)
