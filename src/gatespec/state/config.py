"""The ``gateway.state`` block: where per-caller state lives (gatespec.state).

    "state": {"backend": "redis", "url": "redis://redis:6379/0", "ttl": 3600,
              "prefix": "gatespec:", "max_artifact_bytes": 16777216, "timeout": 1}

backend             memory (the default: this process only) or redis (Redis or Valkey, shared
                    by every replica that names the same url and prefix)
url                 redis://[user:password@]host[:port][/db], rediss:// (TLS) or unix://path;
                    required for redis, refused for memory. ${VAR} expands, so a password can
                    stay out of the file.
ttl                 seconds an artifact is kept from its creation, and a cache-stable session
                    from its last use (default 3600)
prefix              key prefix, to share one server between gateways (default "gatespec:")
max_artifact_bytes  the largest artifact stored (default 16 MiB); a bigger one is not kept and
                    the envelope says so
timeout             seconds one store operation may take before it counts as an outage
                    (default 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal
from urllib.parse import urlsplit, urlunsplit

from gatespec.config_reader import Reader, suggest

__all__ = ["StateConfig", "parse_state"]

BACKENDS: Final = ("memory", "redis")
URL_SCHEMES: Final = ("redis", "rediss", "unix")
DEFAULT_TTL: Final = 3600.0
DEFAULT_PREFIX: Final = "gatespec:"
DEFAULT_MAX_ARTIFACT_BYTES: Final = 16 * 1024 * 1024
DEFAULT_TIMEOUT: Final = 1.0
_KEYS: Final = frozenset({"backend", "url", "ttl", "prefix", "max_artifact_bytes", "timeout"})


@dataclass(frozen=True)
class StateConfig:
    backend: Literal["memory", "redis"] = "memory"
    url: str | None = None
    ttl: float = DEFAULT_TTL
    prefix: str = DEFAULT_PREFIX
    max_artifact_bytes: int = DEFAULT_MAX_ARTIFACT_BYTES
    timeout: float = DEFAULT_TIMEOUT

    @property
    def url_shown(self) -> str:
        """The url with any password masked, for logs and errors."""
        if self.url is None:
            return ""
        parts = urlsplit(self.url)
        if parts.password is None:
            return self.url
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
        return urlunsplit(parts._replace(netloc=netloc))


def parse_state(raw: Any, reader: Reader) -> StateConfig:
    at = "gateway.state"
    if not isinstance(raw, dict):
        raise reader.error(at, f"expected an object, got {type(raw).__name__}")
    for key in raw:
        if key not in _KEYS:
            raise reader.error(f"{at}.{key}", "unknown key" + suggest(str(key), _KEYS))
    defaults = StateConfig()
    backend = reader.string(raw["backend"], f"{at}.backend") if "backend" in raw else "memory"
    if backend not in BACKENDS:
        raise reader.error(
            f"{at}.backend", f"expected one of {', '.join(BACKENDS)}, got {backend!r}"
        )
    url = None
    if "url" in raw:
        if backend != "redis":
            raise reader.error(f"{at}.url", "only the redis backend takes a url")
        url = reader.string(raw["url"], f"{at}.url")
        scheme = urlsplit(url).scheme
        if scheme not in URL_SCHEMES:
            raise reader.error(
                f"{at}.url",
                f"expected a {', '.join(s + '://' for s in URL_SCHEMES)} url, got scheme {scheme!r}",
            )
    elif backend == "redis":
        raise reader.error(f"{at}.url", "the redis backend needs a url (redis://host:6379/0)")
    ttl = reader.number(raw["ttl"], f"{at}.ttl") if "ttl" in raw else defaults.ttl
    timeout = (
        reader.number(raw["timeout"], f"{at}.timeout") if "timeout" in raw else defaults.timeout
    )
    prefix = reader.string(raw["prefix"], f"{at}.prefix") if "prefix" in raw else defaults.prefix
    max_bytes = defaults.max_artifact_bytes
    if "max_artifact_bytes" in raw:
        value = raw["max_artifact_bytes"]
        if isinstance(value, str):
            value = reader.string(value, f"{at}.max_artifact_bytes").strip()
            value = int(value) if value.isdigit() else value
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise reader.error(
                f"{at}.max_artifact_bytes", f"expected a positive number of bytes, got {value!r}"
            )
        max_bytes = value
    return StateConfig(
        backend=backend,  # type: ignore[arg-type]  # checked against BACKENDS
        url=url,
        ttl=ttl,
        prefix=prefix,
        max_artifact_bytes=max_bytes,
        timeout=timeout,
    )
