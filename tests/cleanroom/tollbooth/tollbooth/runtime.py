"""ProxyRuntime: the meta-tool semantics shared by both profiles.

Seed 000 §3 (tool_browse), §4.1-§4.4 (tool_hydrate, tool_execute,
validation), §5 (cache_stable); seed 002 (firewall, envelopes, errors).
The runtime is transport-agnostic: it talks to upstreams through any object
with ``async list_tools(server) -> list[dict]`` and
``async call_tool(server, name, args) -> dict`` (raw wire dicts).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import unquote

import jsonschema

from .cards import ChoiceCard, cache_stable_order, check_browse_budget
from .catalog import Catalog
from .errors import (
    ARGS_INVALID,
    HYDRATE_FAILED,
    UPSTREAM_ERROR,
    VIEW_FAILED,
    CatalogError,
    GatewayError,
)
from .paths import parse_path
from .results import ResultEnvelope, firewall
from .toolid import parse_tool_id
from .views import ArtifactStore, view_artifact

log = logging.getLogger("tollbooth.runtime")


class Upstream(Protocol):
    async def list_tools(self, server: str) -> list[Any]: ...
    async def call_tool(self, server: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]: ...


class UpstreamFailure(Exception):
    """Raised by upstream adapters for transport/protocol failures."""

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.details = details


@dataclass(slots=True)
class RuntimeOptions:
    cache_stable: bool = False
    top_k: int = 10
    namespaces: Mapping[str, str | None] | None = None  # server key -> namespace override


def _args_invalid(message: str, path: str = "", **details: Any) -> GatewayError:
    return GatewayError(ARGS_INVALID, message, path=path, details=details)


def normalize_tool_id(raw: Any) -> str:
    """Accept a tool_id, percent-decoding it (seed 000 §4.1 allows proxies
    to URL-encode ``:``/``#``; tool_ids never contain ``%``).  Raises
    ``ARGS_INVALID`` when it is not a grammatical tool_id."""
    if not isinstance(raw, str) or not raw:
        raise _args_invalid("tool_id must be a non-empty string")
    tool_id = unquote(raw) if "%" in raw else raw
    try:
        parse_tool_id(tool_id)
    except CatalogError as exc:
        raise _args_invalid(exc.message, path=raw) from None
    return tool_id


class ProxyRuntime:
    """One session's state: catalog, seen-set (§5), artifact store."""

    def __init__(self, upstream: Upstream, servers: list[str], options: RuntimeOptions | None = None) -> None:
        self.upstream = upstream
        self.servers = list(servers)
        self.options = options or RuntimeOptions()
        self.catalog = Catalog()
        self.seen: set[str] = set()  # §5.1 ids browsed or successfully hydrated
        self.frozen: dict[str, ChoiceCard] = {}  # §5.1 first-sighting card content
        self.artifacts = ArtifactStore()
        self._calls = 0

    async def refresh_catalog(self) -> Catalog:
        """List every upstream and rebuild the catalog.  A failing upstream
        contributes no tools; it never aborts the refresh."""
        listings: dict[str, list[Any]] = {}
        for server in self.servers:
            try:
                listings[server] = await self.upstream.list_tools(server)
            except Exception as exc:  # noqa: BLE001 - isolate broken upstreams
                log.error("upstream %r: tools/list failed: %s", server, exc)
                listings[server] = []
        self.catalog = Catalog.from_upstreams(listings, self.options.namespaces)
        return self.catalog

    # -- tool_browse (§3) ---------------------------------------------------
    def browse(self, arguments: Mapping[str, Any] | None) -> list[ChoiceCard]:
        """``tool_browse(query|path)``; exactly one of the two (§3.1).

        Raises :class:`GatewayError`: ``ARGS_INVALID`` (both/neither/unknown
        keys/wrong types), ``PATH_INVALID``, ``PATH_NOT_FOUND``."""
        args = dict(arguments or {})
        extra = sorted(k for k in args if k not in ("query", "path"))
        if extra:
            raise _args_invalid(f"unexpected argument(s) {extra}", unexpected=extra)
        query, path = args.get("query"), args.get("path")
        if (query is None) == (path is None):
            raise _args_invalid("pass exactly one of 'query' or 'path'", path=path if isinstance(path, str) else "")
        if query is not None:
            if not isinstance(query, str):
                raise _args_invalid("'query' must be a string")
            cards = self.catalog.route(query, self.options.top_k)
        else:
            if not isinstance(path, str):
                raise _args_invalid("'path' must be a string")
            cards = self.catalog.browse_path(parse_path(path))
        if self.options.cache_stable:
            cards = self._cache_stable(cards)
        check_browse_budget(cards)
        return cards

    def _cache_stable(self, cards: list[ChoiceCard]) -> list[ChoiceCard]:
        frozen = [self.frozen.get(c.id, c) for c in cards]
        ordered = cache_stable_order(frozen, self.seen)
        for c in frozen:
            self.frozen.setdefault(c.id, c)
            self.seen.add(c.id)
        return ordered

    # -- hydration (§4.3) ---------------------------------------------------
    def hydrate(self, tool_id: Any) -> dict[str, Any]:
        """``tool_hydrate(tool_id)`` / the gateway's implicit hydration.
        Only successful hydrations enter the §5 seen-set (§5.5)."""
        tid = normalize_tool_id(tool_id)
        result = self.catalog.hydrate(tid)
        self.seen.add(tid)
        return result

    # -- tool_execute (§4.2, §4.4) -------------------------------------------
    async def call(self, tool_id: Any, args: Any) -> dict[str, Any]:
        """Hydrate, validate (§4.4), call upstream; returns the raw upstream
        ``CallToolResult`` dict.  Validation failures never reach upstream."""
        hydrated = self.hydrate(tool_id)
        tid = hydrated["tool_id"]
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise _args_invalid("'args' must be an object", path=tid)
        schema = hydrated["inputSchema"]
        try:
            cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
            errors = sorted(cls(schema).iter_errors(args), key=lambda e: (list(e.absolute_path), e.message))
        except Exception as exc:  # noqa: BLE001 - schema blew up mid-validation
            raise GatewayError(HYDRATE_FAILED, f"schema unusable for validation: {exc}", path=tid) from None
        if errors:
            raise _args_invalid(
                f"args do not match the schema of {tid}: {errors[0].message}",
                path=tid,
                errors=[{"path": "/" + "/".join(str(p) for p in e.absolute_path), "message": e.message} for e in errors],
            )
        entry = self.catalog.entries[tid]
        try:
            raw = await self.upstream.call_tool(entry.server, entry.upstream_name, args)
        except UpstreamFailure as exc:
            raise GatewayError(
                UPSTREAM_ERROR, str(exc), path=tid, details={"upstream": entry.server, **exc.details}
            ) from None
        except Exception as exc:  # noqa: BLE001
            raise GatewayError(
                UPSTREAM_ERROR, f"{type(exc).__name__}: {exc}", path=tid, details={"upstream": entry.server}
            ) from None
        if not isinstance(raw, dict) or not isinstance(raw.get("content", []), list):
            raise GatewayError(UPSTREAM_ERROR, "upstream returned a malformed CallToolResult", path=tid)
        return raw

    async def execute_enveloped(self, tool_id: Any, args: Any) -> ResultEnvelope:
        """Gateway ``tool_execute``: :meth:`call` then the context firewall;
        artifacts are kept for ``tool_view``."""
        raw = await self.call(tool_id, args)
        tid = normalize_tool_id(tool_id)
        self._calls += 1
        envelope, binaries = firewall(raw, f"{tid}:{self._calls}")
        entry = self.catalog.entries[tid]
        envelope.provenance.update({"tool_id": tid, "upstream": entry.server, "upstream_tool": entry.upstream_name})
        self.artifacts.put_all(binaries)
        return envelope

    # -- tool_view ----------------------------------------------------------
    def view(self, handle: Any, selector: Any = None) -> dict[str, Any]:
        if not isinstance(handle, str) or not handle:
            raise _args_invalid("'handle' must be a non-empty string")
        if selector is not None and not isinstance(selector, str):
            raise _args_invalid("'selector' must be a string", path=handle)
        try:
            return view_artifact(self.artifacts, handle, selector or "")
        except GatewayError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise GatewayError(VIEW_FAILED, f"{type(exc).__name__}: {exc}", path=handle) from None
