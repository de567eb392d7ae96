"""Configuration: the usual ``{"mcpServers": {...}}`` client config file.

Optional gateway settings live under a top-level ``"tollbooth"`` object; CLI
flags override them.  JSON, or YAML when the file ends in ``.yaml``/``.yml``.

::

    {
      "mcpServers": {
        "KEY": {"command": "...", "args": [...], "env": {...}, "cwd": "..."},
        "WEB": {"url": "http://host/mcp"},
        "OFF": {"command": "...", "disabled": true}
      },
      "tollbooth": {
        "cache_stable": false,        # seed 000 §5
        "top_k": 10,                  # tool_browse(query) result count
        "call_timeout": 60,           # seconds per upstream request
        "connect_timeout": 30,        # seconds per upstream start-up
        "namespace_source": "infer",  # "infer" (§1.4) or "server" (config key)
        "encode_names": false,        # §4.1 percent-encode ':'/'#' in tools/list names
        "proxy_result": "passthrough" # transparent tool_execute: "passthrough" or "envelope"
      }
    }

A server entry may also carry ``"namespace": "name"`` to pin its namespace.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .toolid import is_namespace


@dataclass(slots=True)
class Settings:
    servers: dict[str, dict[str, Any]] = field(default_factory=dict)
    cache_stable: bool = False
    top_k: int = 10
    call_timeout: float = 60.0
    connect_timeout: float = 30.0
    namespace_source: str = "infer"
    encode_names: bool = False
    proxy_result: str = "passthrough"

    def namespaces(self) -> dict[str, str | None]:
        """server key -> namespace override (None = infer from tool names)."""
        out: dict[str, str | None] = {}
        for key, spec in self.servers.items():
            pinned = spec.get("namespace")
            if isinstance(pinned, str):
                out[key] = pinned.lower()
            elif self.namespace_source == "server":
                out[key] = key.lower()
            else:
                out[key] = None
            if out[key] is not None and not is_namespace(out[key]):  # type: ignore[arg-type]
                raise ValueError(f"upstream {key!r}: namespace {out[key]!r} violates the §1.1 grammar")
        return out


def load_settings(path: str | Path) -> Settings:
    text = Path(path).read_text(encoding="utf-8")
    if str(path).endswith((".yaml", ".yml")):
        import yaml

        data = yaml.safe_load(text)
    else:
        data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("config must be an object")
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise ValueError("'mcpServers' must be an object")
    s = Settings(servers={k: v for k, v in servers.items() if isinstance(v, dict) and not v.get("disabled")})
    extra = data.get("tollbooth", {}) or {}
    for key in ("cache_stable", "encode_names"):
        if key in extra:
            setattr(s, key, bool(extra[key]))
    for key, conv in (("top_k", int), ("call_timeout", float), ("connect_timeout", float)):
        if key in extra:
            setattr(s, key, conv(extra[key]))
    if "namespace_source" in extra:
        s.namespace_source = str(extra["namespace_source"])
    if "proxy_result" in extra:
        s.proxy_result = str(extra["proxy_result"])
    if s.namespace_source not in ("infer", "server"):
        raise ValueError("namespace_source must be 'infer' or 'server'")
    if s.proxy_result not in ("passthrough", "envelope"):
        raise ValueError("proxy_result must be 'passthrough' or 'envelope'")
    s.namespaces()  # validate early
    return s
