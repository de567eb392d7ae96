"""The ``gateway.state`` block: where per-caller state lives (gatespec.state).

    "state": {"backend": "redis", "url": "redis://redis:6379/0", "ttl": 3600,
              "prefix": "gatespec:", "max_artifact_bytes": 16777216, "timeout": 1}

backend             memory (the default: this process only) or redis (Redis or Valkey, shared
                    by every replica that names the same url and prefix)
url                 redis://[user:password@]host[:port][/db], rediss:// (TLS) or unix://path;
                    required for redis, refused for memory. ${VAR} expands, so a password can
                    stay out of the file.
ttl                 seconds an artifact is kept from its creation, and a session's seen cards
                    from their last use (default 3600)
prefix              key prefix, to share one server between gateways (default "gatespec:")
max_artifact_bytes  the largest artifact stored (default 16 MiB); a bigger one is not kept and
                    the envelope says so
timeout             seconds one store operation may take before it counts as an outage
                    (default 1)
username, password  the server's ACL user and password (`requirepass` alone: password only),
                    instead of putting them in the url; ${VAR} expands. Not both ways at once.
tls                 for a rediss:// url: {"ca_file": PEM of the CA that signed the server's
                    certificate (default: the system's CAs), "cert_file" and "key_file": a
                    client certificate, for a server that asks for one (tls-auth-clients)}.
                    The server's certificate and host name are always verified.
max_total_bytes     the bytes of artifacts the gateway keeps in the store, all identities
                    together (default 256 MiB); past it, the least recently stored artifacts of
                    the identity holding the most are evicted first, as in memory
max_share_bytes     the most one identity holds (default: max_total_bytes); its own oldest
                    artifacts make room for its new ones. Give the server a maxmemory above
                    max_total_bytes, so that it never evicts on its own.
max_artifacts       how many artifacts the store keeps, all identities together (default
                    4096); past it, the identity holding the most artifacts gives way first
The three bounds hold for both backends; unset, memory keeps 64 MiB and redis 256 MiB in all.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal
from urllib.parse import urlsplit, urlunsplit

from gatespec.artifacts import DEFAULT_MAX_ARTIFACTS
from gatespec.artifacts import DEFAULT_MAX_TOTAL_BYTES as MEMORY_MAX_TOTAL_BYTES
from gatespec.config_reader import Reader, suggest

__all__ = ["StateConfig", "StateTls", "parse_state"]

BACKENDS: Final = ("memory", "redis")
URL_SCHEMES: Final = ("redis", "rediss", "unix")
DEFAULT_TTL: Final = 3600.0
DEFAULT_PREFIX: Final = "gatespec:"
DEFAULT_MAX_ARTIFACT_BYTES: Final = 16 * 1024 * 1024
DEFAULT_TIMEOUT: Final = 1.0
# What all identities' artifacts may hold together in Redis (the memory backend's own default
# is gatespec.artifacts.DEFAULT_MAX_TOTAL_BYTES: one process's memory).
DEFAULT_MAX_TOTAL_BYTES: Final = 256 * 1024 * 1024
_KEYS: Final = frozenset(
    {
        "backend",
        "url",
        "ttl",
        "prefix",
        "max_artifact_bytes",
        "timeout",
        "username",
        "password",
        "tls",
        "max_total_bytes",
        "max_share_bytes",
        "max_artifacts",
    }
)
_TLS_KEYS: Final = frozenset({"ca_file", "cert_file", "key_file"})


@dataclass(frozen=True)
class StateTls:
    """Files for a rediss:// connection (None: the system's CAs, no client certificate)."""

    ca_file: Path | None = None
    cert_file: Path | None = None
    key_file: Path | None = None


@dataclass(frozen=True)
class StateConfig:
    backend: Literal["memory", "redis"] = "memory"
    url: str | None = None
    ttl: float = DEFAULT_TTL
    prefix: str = DEFAULT_PREFIX
    max_artifact_bytes: int = DEFAULT_MAX_ARTIFACT_BYTES
    timeout: float = DEFAULT_TIMEOUT
    username: str | None = None
    password: str | None = None
    tls: StateTls | None = None
    max_total_bytes: int | None = None  # None: the backend's default (total_bytes)
    max_share_bytes: int | None = None  # None: the total
    max_artifacts: int = DEFAULT_MAX_ARTIFACTS

    @property
    def total_bytes(self) -> int:
        """What all identities' artifacts may hold together in this backend."""
        if self.max_total_bytes is not None:
            return self.max_total_bytes
        return DEFAULT_MAX_TOTAL_BYTES if self.backend == "redis" else MEMORY_MAX_TOTAL_BYTES

    @property
    def share_bytes(self) -> int:
        """What one identity may hold (never more than the whole)."""
        share = self.total_bytes if self.max_share_bytes is None else self.max_share_bytes
        return min(share, self.total_bytes)

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
    username = reader.string(raw["username"], f"{at}.username") if "username" in raw else None
    password = reader.string(raw["password"], f"{at}.password") if "password" in raw else None
    if url is not None and (username or password) and urlsplit(url).password is not None:
        raise reader.error(
            f"{at}.password", "the url carries a password already: give it one way, not both"
        )
    tls = None
    if "tls" in raw:
        if url is None or urlsplit(url).scheme != "rediss":
            raise reader.error(f"{at}.tls", "only a rediss:// url (TLS) takes tls settings")
        tls = _parse_tls(raw["tls"], f"{at}.tls", reader)
    total = _positive(raw, "max_total_bytes", None, at, reader)
    return StateConfig(
        backend=backend,  # type: ignore[arg-type]  # checked against BACKENDS
        url=url,
        ttl=ttl,
        prefix=prefix,
        max_artifact_bytes=_positive(
            raw, "max_artifact_bytes", defaults.max_artifact_bytes, at, reader
        ),
        timeout=timeout,
        username=username,
        password=password,
        tls=tls,
        max_total_bytes=total,
        max_share_bytes=_positive(raw, "max_share_bytes", None, at, reader),
        max_artifacts=_positive(
            raw, "max_artifacts", defaults.max_artifacts, at, reader, "artifacts"
        ),
    )


def _positive(
    raw: dict[str, Any], key: str, default: Any, at: str, reader: Reader, what: str = "bytes"
) -> Any:
    """A positive whole number (a string from ${VAR} is read as one), or `default`."""
    if key not in raw:
        return default
    value = raw[key]
    if isinstance(value, str):
        value = reader.string(value, f"{at}.{key}").strip()
        value = int(value) if value.isdigit() else value
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise reader.error(f"{at}.{key}", f"expected a positive number of {what}, got {value!r}")
    return value


def _parse_tls(raw: Any, at: str, reader: Reader) -> StateTls:
    if not isinstance(raw, dict):
        raise reader.error(at, f"expected an object, got {type(raw).__name__}")
    for key in raw:
        if key not in _TLS_KEYS:
            raise reader.error(f"{at}.{key}", "unknown key" + suggest(str(key), _TLS_KEYS))
    files = {key: reader.path(raw[key], f"{at}.{key}") for key in _TLS_KEYS if key in raw}
    for key, path in files.items():
        if not path.is_file():
            raise reader.error(f"{at}.{key}", f"no such file: {path}")
    if ("cert_file" in files) != ("key_file" in files):
        raise reader.error(at, "a client certificate needs both cert_file and key_file")
    return StateTls(files.get("ca_file"), files.get("cert_file"), files.get("key_file"))
