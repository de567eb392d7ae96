"""Gateway configuration: the ecosystem's ``mcpServers`` document plus a ``gateway`` options block.

The file format is the one Claude Desktop, Cursor and Claude Code already use, so an existing
config can be pointed at the gateway unchanged::

    {
      "mcpServers": {
        "fs":    {"command": "mcp-server-filesystem", "args": ["/tmp"]},
        "api":   {"type": "http", "url": "https://example.com/mcp",
                  "headers": {"Authorization": "Bearer ${API_TOKEN}"}},
        "old":   {"type": "sse", "url": "http://127.0.0.1:3001/sse"},
        "fake":  {"type": "stub", "catalog": "catalog.json"}
      },
      "gateway": {"profile": "gateway", "transport": "stdio", "call_timeout": 30}
    }

The aggregate profile adds ``page_size`` (entries per page of a merged list) and ``watch``
(reread the file when it changes; default true); every profile takes ``plugins`` (in order)::

    "plugins": [
      {"type": "tool_filter", "servers": {"fs": {"allow": ["read_*"], "deny": ["*secret*"]}}},
      {"type": "audit_log", "path": "audit.jsonl", "arguments": false}
    ]

Rules (each violation raises `ConfigError` naming the file, the key path and the problem):

- A ``.yaml``/``.yml`` file is parsed as YAML, anything else as JSON.
- ``${VAR}`` and ``${VAR:-default}`` are expanded in every string value (not in keys) from the
  environment; like the shell, the default also applies when VAR is set but empty. An unset
  variable without a default is an error.
- Server type: ``type`` (or its alias ``transport``) is one of stdio, http (also spelled
  streamable-http / streamableHttp / streamable_http), sse, stub. Without it, ``command`` means
  stdio; ``url`` means sse when its path ends in ``/sse`` and Streamable HTTP otherwise.
- Keys belong to one transport: command/args/env/cwd to stdio, url/headers to http and sse,
  catalog/server to stub. Unknown server keys are rejected, except the harmless ones other
  clients write into these files (`IGNORED_SERVER_KEYS`); ``"disabled": true`` skips a server.
- Relative ``cwd`` and ``catalog`` paths are resolved against the config file's folder. The
  ``command`` itself is kept verbatim (it is looked up on PATH by the OS).
- ``timeout`` (seconds) on a server overrides ``gateway.call_timeout`` for calls to it, like
  Cline's per-server request timeout. Connecting always uses ``gateway.connect_timeout``.
- An unknown top-level key that is a near miss of ``mcpServers`` or ``gateway`` (``gatway``)
  is an error with a "did you mean"; any other is ignored with a warning (the file is often
  shared with a desktop client that keeps its own settings there). Unknown keys inside
  ``gateway`` are rejected.
- Server keys are kept verbatim: mapping them to tool namespaces is a later layer's job.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from gatespec.config_files import read_document
from gatespec.config_reader import ConfigError, Reader, expand_env, kind_of, suggest
from gatespec.secrets import Written
from gatespec.upstream_kinds import KINDS, SPELLINGS, Transport, UpstreamKind
from gatespec_surface import PROFILE_NAMES

if TYPE_CHECKING:
    from gatespec.access.config import AccessConfig
    from gatespec.state.config import StateConfig

logger = logging.getLogger(__name__)

__all__ = [
    "TOP_LEVEL_KEYS",
    "DEFAULT_CALL_TIMEOUT",
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_DRAIN_TIMEOUT",
    "DEFAULT_HOST",
    "DEFAULT_INLINE_MEDIA_MAX_BYTES",
    "DEFAULT_PORT",
    "IGNORED_SERVER_KEYS",
    "PROFILES",
    "ConfigError",
    "GatewayConfig",
    "GatewayOptions",
    "PluginConfig",
    "ServerConfig",
    "Transport",
    "expand_env",
    "load_config",
    "parse_config",
]

ServeTransport = Literal["stdio", "http"]

# The exposure profiles of spec/profiles.yaml.
PROFILES: Final[tuple[str, ...]] = PROFILE_NAMES
SERVE_TRANSPORTS: Final[tuple[str, ...]] = ("stdio", "http")

DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 8765
DEFAULT_CALL_TIMEOUT: Final = 30.0
DEFAULT_CONNECT_TIMEOUT: Final = 20.0
DEFAULT_REFRESH_INTERVAL: Final = 30.0
# gateway.inline_media_max_bytes (AM-INLINE-MEDIA): 1 MiB of decoded image/audio bytes per
# result, about one screenshot; model APIs refuse far larger images (5 MiB is a common limit).
DEFAULT_INLINE_MEDIA_MAX_BYTES: Final = 1 << 20
DEFAULT_CONNECT_CONCURRENCY: Final = 8  # upstreams connecting at once
DEFAULT_DRAIN_TIMEOUT: Final = 10.0

# Keys other MCP clients write into server entries that change nothing for the gateway.
# ("disabled" is honoured, the rest are ignored.) Anything else unknown is most likely a typo
# or a feature we do not implement (envFile, disabledTools...), and silently ignoring those
# would run a server differently from what its author expects.
IGNORED_SERVER_KEYS: Final = frozenset(
    {"disabled", "autoApprove", "alwaysAllow", "description", "name", "title"}
)

_COMMON_SERVER_KEYS: Final = frozenset({"type", "transport", "timeout"})
_ALL_SERVER_KEYS: Final = (
    frozenset().union(*(k.keys for k in KINDS.values())) | _COMMON_SERVER_KEYS | IGNORED_SERVER_KEYS
)
# The document's own keys. Another key is another client's setting (a file shared with a
# desktop client) and is ignored with a warning, unless it is a near miss of one of these.
TOP_LEVEL_KEYS: Final = frozenset({"mcpServers", "gateway"})
_GATEWAY_KEYS: Final = frozenset(
    {
        "profile",
        "mode",  # the name `profile` had before 0.2; still accepted
        "transport",
        "host",
        "port",
        "call_timeout",
        "inline_media_max_bytes",  # images/audio shown inline per result (AM-INLINE-MEDIA)
        "connect_timeout",
        "cache_stable",
        "refresh_interval",
        "drain_timeout",  # seconds calls in flight get to finish on SIGTERM
        "page_size",
        "unprefixed",  # aggregate: the one upstream whose names are not namespaced
        "watch",
        "plugins",
        "access",  # identities, tokens and the access policy (gatespec.access.config)
        "max_sessions",  # Streamable HTTP session table bounds (SessionBounds)
        "max_sessions_per_client",
        "session_idle_timeout",
        "max_client_connections",  # aggregate: per-client upstream connections (SessionBounds)
        "state",  # where per-caller state lives, shared by replicas (gatespec.state.config)
        "metrics_port",  # stdio serving: Prometheus /metrics on this port (gatespec.metrics)
        "tracing",  # OpenTelemetry trace exporter(s) (gatespec.observe.tracing)
    }
)
PLUGIN_TYPES: Final = ("tool_filter", "audit_log")
_PLUGIN_KEYS: Final[Mapping[str, frozenset[str]]] = {
    "tool_filter": frozenset({"type", "servers"}),
    "audit_log": frozenset({"type", "path", "arguments"}),
}


@dataclass(frozen=True, repr=False)
class ServerConfig:
    """One upstream MCP server, as configured (env-expanded, paths resolved).

    The expanded fields are for running the server only; a message quotes `written` (the
    config as written, ``${VAR}`` references unexpanded: gatespec.secrets)."""

    key: str
    transport: Transport
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    catalog: Path | None = None
    timeout: float | None = None
    # stub only: keep catalog items whose "server" field equals this (catalogs of many servers).
    catalog_server: str | None = None
    # The command, args and URL as written (None: built in code, nothing was expanded).
    written_as: Written | None = field(default=None, compare=False)

    @property
    def written(self) -> Written:
        """What a message may quote of this server."""
        if self.written_as is not None:
            return self.written_as
        return Written(self.command, self.args, self.url)

    @property
    def kind(self) -> UpstreamKind:
        return KINDS[self.transport]

    def __repr__(self) -> str:  # never the expanded values (gatespec.secrets)
        return f"ServerConfig(key={self.key!r}, transport={self.transport!r}, {self.written!r})"


@dataclass(frozen=True)
class SessionBounds:
    """Bounds of the Streamable HTTP session table (gatespec.server.session_limits):
    gateway.max_sessions, max_sessions_per_client and session_idle_timeout (seconds)."""

    max_sessions: int = 1000
    per_client: int = 100
    idle_timeout: float = 600.0
    # aggregate profile: upstream connections opened for clients with client-scoped state
    # (gatespec.profiles.aggregate.client_upstreams), all clients together
    max_client_connections: int = 64


@dataclass(frozen=True)
class PluginConfig:
    """One entry of gateway.plugins (AM-PLUGIN-CHAIN)."""

    type: str  # one of PLUGIN_TYPES
    # tool_filter: server config key -> (allow globs, deny globs); an empty allow allows all
    servers: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)
    path: Path | None = None  # audit_log: the JSON-lines file
    arguments: bool = False  # audit_log: write argument values too


@dataclass(frozen=True)
class GatewayOptions:
    """The ``gateway`` block: how the gateway itself is served."""

    profile: str = "gateway"  # one of PROFILES
    transport: ServeTransport = "stdio"
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    cache_stable: bool = False
    # While serving: the longest wait between retries of an upstream that failed or died
    # (seconds; the first retry comes within a second; 0 = never retry).
    refresh_interval: float = DEFAULT_REFRESH_INTERVAL
    # On SIGTERM (HTTP): how long calls in flight may take to finish before they are cut.
    drain_timeout: float = DEFAULT_DRAIN_TIMEOUT
    page_size: int | None = None  # aggregate lists: entries per page (None: the spec's)
    # aggregate: the config key of the one upstream whose names pass unprefixed
    # (AM-AGGREGATE-UNPREFIXED); None: every name is namespaced (seed 004 Principle 5).
    unprefixed: str | None = None
    watch: bool = True  # reread the config file when it changes (AM-REGISTRY-RELOAD)
    plugins: tuple[PluginConfig, ...] = ()
    # Identities and the access policy; None: no access control (every caller unrestricted).
    access: AccessConfig | None = None
    sessions: SessionBounds = field(default_factory=SessionBounds)
    # Artifacts and seen cards: None is this process's memory (gatespec.state).
    state: StateConfig | None = None
    # Serving stdio: also serve GET /metrics on this port of `host` (None: no metrics port;
    # the HTTP transport serves /metrics on its own port).
    metrics_port: int | None = None
    # OpenTelemetry: the trace exporter ("otlp", "console", "none"); None: as OTEL_* says.
    tracing: str | None = None
    # Images and audio up to this many decoded bytes per result also reach the model as MCP
    # content, not only as artifacts (AM-INLINE-MEDIA); 0: artifacts only.
    inline_media_max_bytes: int = DEFAULT_INLINE_MEDIA_MAX_BYTES


@dataclass(frozen=True)
class GatewayConfig:
    """A whole configuration: enabled servers in file order, options, and where it came from."""

    servers: dict[str, ServerConfig]
    options: GatewayOptions = field(default_factory=GatewayOptions)
    source: Path | None = None

    def call_timeout_for(self, key: str) -> float:
        """The call timeout for one server: its own ``timeout`` or the gateway default."""
        server = self.servers[key]
        return server.timeout if server.timeout is not None else self.options.call_timeout


def load_config(
    path: str | os.PathLike[str], environ: Mapping[str, str] | None = None
) -> GatewayConfig:
    """Read and validate a config file (YAML by extension .yaml/.yml, JSON otherwise)."""
    source = Path(path)
    return parse_config(read_document(source), source=source, environ=environ)


def parse_config(
    data: Any, source: Path | str | None = None, environ: Mapping[str, str] | None = None
) -> GatewayConfig:
    """Validate an already-parsed config document (a dict) and build a `GatewayConfig`."""
    src = Path(source) if source is not None else None
    reader = _GatewayReader(src, os.environ if environ is None else environ)
    if not isinstance(data, dict):
        raise ConfigError(src, "", f"expected an object at the top level, got {kind_of(data)}")
    if "mcpServers" not in data:
        raise ConfigError(src, "mcpServers", "missing (the servers to front go here)")
    raw_servers = data["mcpServers"]
    if not isinstance(raw_servers, dict):
        raise ConfigError(src, "mcpServers", f"expected an object, got {kind_of(raw_servers)}")
    servers: dict[str, ServerConfig] = {}
    for key, raw in raw_servers.items():
        if not isinstance(key, str) or not key:
            raise ConfigError(src, f"mcpServers.{key!r}", "a server key must be a non-empty string")
        server = reader.server(key, raw)
        if server is not None:
            servers[key] = server
    for key in data:
        if key not in TOP_LEVEL_KEYS:
            hint = suggest(str(key), TOP_LEVEL_KEYS)
            if hint:  # a near miss of ours: a typo, never another client's setting
                raise ConfigError(src, str(key), "unknown top-level key" + hint)
            logger.warning(
                "%s: ignoring top-level key %r (not a gatespec key: %s)",
                src or "config",
                key,
                ", ".join(sorted(TOP_LEVEL_KEYS)),
            )
    options = reader.options(data.get("gateway", {}))
    for i, plugin in enumerate(options.plugins):
        for key in plugin.servers:
            if key not in raw_servers:
                where = f"gateway.plugins[{i}].servers.{key}"
                raise ConfigError(src, where, "names no server of mcpServers")
    if options.unprefixed is not None and options.unprefixed not in raw_servers:
        hint = suggest(options.unprefixed, frozenset(str(k) for k in raw_servers))
        raise ConfigError(src, "gateway.unprefixed", "names no server of mcpServers" + hint)
    return GatewayConfig(servers=servers, options=options, source=src)


class _GatewayReader(Reader):
    """The config reader with what the mcpServers entries and the gateway block need."""

    def server(self, key: str, raw: Any) -> ServerConfig | None:
        at = f"mcpServers.{key}"
        if not isinstance(raw, dict):
            raise self.error(at, f"expected an object, got {kind_of(raw)}")
        for k in raw:
            if k not in _ALL_SERVER_KEYS:
                raise self.error(f"{at}.{k}", "unknown key" + suggest(k, _ALL_SERVER_KEYS))
        if "disabled" in raw and self.boolean(raw["disabled"], f"{at}.disabled"):
            return None
        if "type" in raw and "transport" in raw:
            raise self.error(at, "give either type or transport, not both")
        type_key = "type" if "type" in raw else "transport"
        transport = self.transport(raw, at, type_key)
        kind = KINDS[transport]
        for k in raw:
            if k in _COMMON_SERVER_KEYS or k in IGNORED_SERVER_KEYS or k in kind.keys:
                continue
            owner = next(t for t, other in KINDS.items() if k in other.keys)
            raise self.error(f"{at}.{k}", f"not valid for a {transport} server (only for {owner})")
        if kind.needs not in raw:
            raise self.error(f"{at}.{kind.needs}", f"missing ({kind.missing})")
        timeout = self.number(raw["timeout"], f"{at}.timeout") if "timeout" in raw else None
        read = {"command": self.stdio_server, "url": self.url_server, "catalog": self.stub_server}
        return read[kind.needs](key, kind, raw, at, timeout)

    def url_server(
        self, key: str, kind: UpstreamKind, raw: dict[str, Any], at: str, timeout: float | None
    ) -> ServerConfig:
        url = self.string(raw["url"], f"{at}.url")
        if not re.match(r"^https?://[^/\s]+", url):
            raise self.error(f"{at}.url", f"expected an http:// or https:// URL, got {url!r}")
        headers = self.string_map(raw["headers"], f"{at}.headers") if "headers" in raw else {}
        return ServerConfig(
            key=key,
            transport=kind.name,
            url=url,
            headers=headers,
            timeout=timeout,
            written_as=Written(url=raw["url"]),
        )

    def stub_server(
        self, key: str, kind: UpstreamKind, raw: dict[str, Any], at: str, timeout: float | None
    ) -> ServerConfig:
        return ServerConfig(
            key=key,
            transport=kind.name,
            catalog=self.path(raw["catalog"], f"{at}.catalog"),
            catalog_server=self.string(raw["server"], f"{at}.server") if "server" in raw else None,
            timeout=timeout,
        )

    def transport(self, raw: dict[str, Any], at: str, type_key: str) -> Transport:
        if "command" in raw and "url" in raw:
            raise self.error(
                at, "has both command and url: give command for stdio or url for http/sse"
            )
        if type_key in raw:
            name = self.string(raw[type_key], f"{at}.{type_key}")
            transport = SPELLINGS.get(name.lower())
            if transport is None:
                *names, last = KINDS
                expected = f"{', '.join(names)} or {last}"
                raise self.error(f"{at}.{type_key}", f"unknown type {name!r} (expected {expected})")
            return transport
        if "command" in raw:
            return "stdio"
        if "url" in raw:
            url = raw["url"]
            # Cursor-style entries omit type; the legacy transport lives at .../sse by convention.
            if isinstance(url, str) and url.split("?")[0].rstrip("/").endswith("/sse"):
                return "sse"
            return "http"
        raise self.error(at, "missing command (stdio) or url (http/sse)")

    def stdio_server(
        self, key: str, kind: UpstreamKind, raw: dict[str, Any], at: str, timeout: float | None
    ) -> ServerConfig:
        command = self.string(raw["command"], f"{at}.command")
        args_raw = raw.get("args", [])
        if not isinstance(args_raw, list):
            raise self.error(f"{at}.args", f"expected an array of strings, got {kind_of(args_raw)}")
        args = tuple(
            self.string(a, f"{at}.args[{i}]", allow_empty=True) for i, a in enumerate(args_raw)
        )
        env = self.string_map(raw["env"], f"{at}.env") if "env" in raw else {}
        cwd = self.path(raw["cwd"], f"{at}.cwd") if "cwd" in raw else None
        return ServerConfig(
            key=key,
            transport=kind.name,
            command=command,
            args=args,
            env=env,
            cwd=cwd,
            timeout=timeout,
            written_as=Written(raw["command"], tuple(args_raw)),
        )

    def unprefixed(self, raw: dict[str, Any], profile: str) -> str | None:
        """gateway.unprefixed: one server key (a string, so two upstreams can never share the
        flat name space); only the aggregate profile namespaces names in the first place."""
        if "unprefixed" not in raw:
            return None
        key = self.string(raw["unprefixed"], "gateway.unprefixed")
        # the spec's profile table (imported here: its module imports the MCP SDK, which the
        # CLI does not load before it serves)
        from gatespec_surface.descriptors import PROFILES as SPEC_PROFILES

        namespaced = SPEC_PROFILES[profile].lists_upstream_tools == "namespaced"
        if ("profile" in raw or "mode" in raw) and not namespaced:
            raise self.error(
                "gateway.unprefixed",
                f"applies to the aggregate profile only (profile is {profile})",
            )
        return key

    def options(self, raw: Any) -> GatewayOptions:
        at = "gateway"
        if not isinstance(raw, dict):
            raise self.error(at, f"expected an object, got {kind_of(raw)}")
        for k in raw:
            if k not in _GATEWAY_KEYS:
                raise self.error(f"{at}.{k}", "unknown key" + suggest(k, _GATEWAY_KEYS))
        defaults = GatewayOptions()
        if "mode" in raw and "profile" in raw:
            raise self.error(f"{at}.mode", "give profile or its old name mode, not both")
        profile_key = "mode" if "mode" in raw else "profile"
        profile = self.choice(raw, profile_key, PROFILES, defaults.profile)
        transport = self.choice(raw, "transport", SERVE_TRANSPORTS, defaults.transport)
        host = self.string(raw["host"], f"{at}.host") if "host" in raw else defaults.host
        port = self.port(raw["port"], f"{at}.port") if "port" in raw else defaults.port
        call_timeout = (
            self.number(raw["call_timeout"], f"{at}.call_timeout")
            if "call_timeout" in raw
            else defaults.call_timeout
        )
        connect_timeout = (
            self.number(raw["connect_timeout"], f"{at}.connect_timeout")
            if "connect_timeout" in raw
            else defaults.connect_timeout
        )
        cache_stable = (
            self.boolean(raw["cache_stable"], f"{at}.cache_stable")
            if "cache_stable" in raw
            else defaults.cache_stable
        )
        refresh_interval = (
            self.number(raw["refresh_interval"], f"{at}.refresh_interval", allow_zero=True)
            if "refresh_interval" in raw
            else defaults.refresh_interval
        )
        drain_timeout = (
            self.number(raw["drain_timeout"], f"{at}.drain_timeout")
            if "drain_timeout" in raw
            else defaults.drain_timeout
        )
        access = None
        if "access" in raw:
            # imported only for a config with the block: it brings jwt and jsonschema
            from gatespec.access.config import parse_access

            access = parse_access(raw["access"], self.source, self.environ)
        state = None
        if "state" in raw:
            from gatespec.state.config import parse_state  # likewise: gatespec.state

            state = parse_state(raw["state"], self)
        from gatespec.observe.tracing import EXPORTERS  # OTEL_TRACES_EXPORTER's values

        return GatewayOptions(
            access=access,
            sessions=self.session_bounds(raw),
            state=state,
            profile=profile,
            transport=transport,  # type: ignore[arg-type]  # checked against SERVE_TRANSPORTS
            host=host,
            port=port,
            call_timeout=call_timeout,
            inline_media_max_bytes=self.count(
                raw["inline_media_max_bytes"], f"{at}.inline_media_max_bytes", minimum=0
            )
            if "inline_media_max_bytes" in raw
            else defaults.inline_media_max_bytes,
            connect_timeout=connect_timeout,
            cache_stable=cache_stable,
            refresh_interval=refresh_interval,
            drain_timeout=drain_timeout,
            page_size=self.count(raw["page_size"], f"{at}.page_size")
            if "page_size" in raw
            else None,
            unprefixed=self.unprefixed(raw, profile),
            watch=self.boolean(raw["watch"], f"{at}.watch") if "watch" in raw else defaults.watch,
            plugins=self.plugins(raw["plugins"], f"{at}.plugins") if "plugins" in raw else (),
            metrics_port=self.port(raw["metrics_port"], f"{at}.metrics_port")
            if "metrics_port" in raw
            else None,
            tracing=self.choice(raw, "tracing", EXPORTERS, "") or None,
        )

    def session_bounds(self, raw: dict[str, Any]) -> SessionBounds:
        defaults = SessionBounds()
        return SessionBounds(
            max_sessions=self.count(raw["max_sessions"], "gateway.max_sessions")
            if "max_sessions" in raw
            else defaults.max_sessions,
            per_client=self.count(raw["max_sessions_per_client"], "gateway.max_sessions_per_client")
            if "max_sessions_per_client" in raw
            else defaults.per_client,
            idle_timeout=self.number(raw["session_idle_timeout"], "gateway.session_idle_timeout")
            if "session_idle_timeout" in raw
            else defaults.idle_timeout,
            max_client_connections=self.count(
                raw["max_client_connections"], "gateway.max_client_connections"
            )
            if "max_client_connections" in raw
            else defaults.max_client_connections,
        )

    def plugins(self, raw: Any, at: str) -> tuple[PluginConfig, ...]:
        if not isinstance(raw, list):
            raise self.error(at, f"expected an array of plugins, got {kind_of(raw)}")
        out: list[PluginConfig] = []
        for i, entry in enumerate(raw):
            where = f"{at}[{i}]"
            if not isinstance(entry, dict):
                raise self.error(where, f"expected an object, got {kind_of(entry)}")
            kind = self.string(entry.get("type", ""), f"{where}.type") if "type" in entry else ""
            if kind not in PLUGIN_TYPES:
                raise self.error(
                    f"{where}.type", f"expected one of {', '.join(PLUGIN_TYPES)}, got {kind!r}"
                )
            for k in entry:
                if k not in _PLUGIN_KEYS[kind]:
                    raise self.error(f"{where}.{k}", f"unknown key for a {kind} plugin")
            if kind == "tool_filter":
                out.append(PluginConfig(kind, servers=self.filter_rules(entry, where)))
            else:
                if "path" not in entry:
                    raise self.error(f"{where}.path", "missing (the audit log's JSON-lines file)")
                out.append(
                    PluginConfig(
                        kind,
                        path=self.path(entry["path"], f"{where}.path"),
                        arguments=self.boolean(entry.get("arguments", False), f"{where}.arguments"),
                    )
                )
        return tuple(out)

    def filter_rules(
        self, entry: dict[str, Any], where: str
    ) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
        servers = entry.get("servers")
        if not isinstance(servers, dict) or not servers:
            raise self.error(f"{where}.servers", "expected an object of server keys to rules")
        rules: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        for key, rule in servers.items():
            at = f"{where}.servers.{key}"
            if not isinstance(rule, dict) or not set(rule) <= {"allow", "deny"} or not rule:
                raise self.error(at, "expected an object with allow and/or deny glob arrays")
            rules[key] = (
                self.globs(rule.get("allow", []), f"{at}.allow"),
                self.globs(rule.get("deny", []), f"{at}.deny"),
            )
        return rules

    def choice(self, raw: dict[str, Any], key: str, allowed: tuple[str, ...], default: str) -> str:
        if key not in raw:
            return default
        value = self.string(raw[key], f"gateway.{key}")
        if value not in allowed:
            raise self.error(
                f"gateway.{key}", f"expected one of {', '.join(allowed)}, got {value!r}"
            )
        return value
