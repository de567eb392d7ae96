"""The status document one viewer gets (GET /status.json; the page at /status renders it).

What a viewer sees is decided by its identity, as for a client of the gateway:
- upstreams: state (connected, failed, reconnecting, pending), the last error (the connection's failure, or
  the last tool call's), the last and mean latency of its tool calls and their counts; for a
  restricted identity only the upstreams it may see a tool of (gatespec.observe.source);
- catalog: how many tools it may see, per upstream, and (unrestricted identities only) the
  tools left out of the catalog and why;
- calls: its own recent calls (gatespec.observe.calls), never another identity's.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from gatespec.access import Identity
from gatespec.metrics import Metrics
from gatespec.observe.calls import CallLog
from gatespec.observe.source import StatusSource

__all__ = ["status_document"]

logger = logging.getLogger(__name__)


def _latency(metrics: Metrics | None, upstream: str) -> dict[str, Any]:
    """Counts and latencies of `upstream`'s tool calls (from the runtime's metrics)."""
    if metrics is None:
        return {"calls": 0, "errors": 0, "last_ms": None, "mean_ms": None}
    labels = {"upstream": upstream}
    sample = metrics.registry.get_sample_value
    count = sample("gatespec_upstream_call_duration_seconds_count", labels) or 0.0
    total = sample("gatespec_upstream_call_duration_seconds_sum", labels) or 0.0
    errors = sum(
        s.value
        for family in metrics.upstream_errors.collect()
        for s in family.samples
        if s.name.endswith("_total") and s.labels.get("upstream") == upstream
    )
    last = metrics.last_seconds.get(upstream)
    return {
        "calls": int(count),
        "errors": int(errors),
        "last_ms": round(last * 1000, 2) if last is not None else None,
        "mean_ms": round(total / count * 1000, 2) if count else None,
    }


def status_document(
    source: StatusSource,
    calls: CallLog | None,
    metrics: Metrics | None,
    viewer: Identity,
    version: str,
) -> dict[str, Any]:
    """The status as `viewer` may see it (module docstring)."""
    tools = source.tools(viewer)
    upstreams = []
    for upstream in source.upstreams():
        if upstream.name not in tools.by_upstream:
            continue  # an upstream the viewer may not see
        called = metrics.last_error.get(upstream.name) if metrics is not None else None
        upstreams.append(
            {
                "name": upstream.name,
                "state": upstream.state,
                # the connection's failure first, else the last failed call's
                "last_error": upstream.error or called,
                "tools": tools.by_upstream[upstream.name],
                **_latency(metrics, upstream.name),
            }
        )
    return {
        "gateway": {
            "profile": source.profile,
            "version": version,
            "viewer": viewer.name,
            "restricted": tools.restricted,
            "now": time.time(),
        },
        "catalog": {
            "tools": sum(tools.by_upstream.values()),
            "upstreams": len(upstreams),
            "connected": sum(u["state"] == "connected" for u in upstreams),
            "excluded": len(tools.excluded),
        },
        "upstreams": upstreams,
        "excluded": [
            {"upstream": server, "tool": name, "reason": reason}
            for server, name, reason in tools.excluded
        ],
        "calls": [c.as_json() for c in calls.recent(viewer)] if calls is not None else [],
    }
