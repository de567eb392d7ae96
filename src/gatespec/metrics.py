"""Prometheus metrics of one gateway runtime (prometheus-client), served at GET /metrics.

Each runtime has a registry of its own (never the process-global default one), so tests and
several runtimes in one process do not collide. What is counted where:

- ``gatespec_calls_total{tool}``, ``gatespec_call_errors_total{tool,code}`` and the histogram
  ``gatespec_call_duration_seconds{tool}``: every tools/call the gateway answers, by meta-tool
  (the aggregate profile, whose tools are the upstreams' own, counts them under ``tools/call``);
  an error is an isError answer, labelled with its spec error code.
- ``gatespec_upstream_calls_total{upstream}``, ``gatespec_upstream_errors_total{upstream,kind}``
  and ``gatespec_upstream_call_duration_seconds{upstream}``: tool calls sent to each upstream
  (the pool's), an error labelled with the pool's failure kind.
- ``gatespec_ranking_duration_seconds``: ranking a query (a query browse, a search).
- Read at scrape time: ``gatespec_upstream_up{upstream}`` (1 connected, 0 otherwise),
  ``gatespec_sessions_active`` and ``gatespec_artifacts_held``.

Recording never raises into a call path: a failure to record is logged once and dropped, and
a scrape-time gauge whose source fails is left out of that scrape.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

__all__ = ["CONTENT_TYPE", "Metrics", "metrics_of"]

logger = logging.getLogger(__name__)

CONTENT_TYPE = CONTENT_TYPE_LATEST

# Latency buckets (seconds): from a sub-millisecond cached browse to a slow upstream call.
_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


class Metrics:
    """The instruments of one runtime and the registry they live in."""

    def __init__(self, runtime: Any = None) -> None:
        self.runtime = runtime
        # Who is connected now (a count); set by the serving transport.
        self.sessions: Callable[[], int] | None = None
        self._failed_once = False
        # Per upstream, for the status page (gatespec.observe): how long its last tool call
        # took, and why its last failed call failed.
        self.last_seconds: dict[str, float] = {}
        self.last_error: dict[str, str] = {}
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.calls = Counter("gatespec_calls", "tools/call requests answered", ["tool"], registry=r)
        self.errors = Counter(
            "gatespec_call_errors",
            "tools/call requests answered with an error, by spec error code",
            ["tool", "code"],
            registry=r,
        )
        self.call_seconds = Histogram(
            "gatespec_call_duration_seconds",
            "time to answer a tools/call, by meta-tool",
            ["tool"],
            buckets=_BUCKETS,
            registry=r,
        )
        self.upstream_calls = Counter(
            "gatespec_upstream_calls", "tool calls sent to an upstream", ["upstream"], registry=r
        )
        self.upstream_errors = Counter(
            "gatespec_upstream_errors",
            "upstream tool calls that failed, by failure kind",
            ["upstream", "kind"],
            registry=r,
        )
        self.upstream_seconds = Histogram(
            "gatespec_upstream_call_duration_seconds",
            "time an upstream took to answer a tool call",
            ["upstream"],
            buckets=_BUCKETS,
            registry=r,
        )
        self.ranking_seconds = Histogram(
            "gatespec_ranking_duration_seconds",
            "time to rank the catalog for a query",
            buckets=_BUCKETS,
            registry=r,
        )
        r.register(_Live(self))

    def _dropped(self, what: str) -> None:
        if not self._failed_once:  # once: a broken metric must not flood the log either
            self._failed_once = True
            logger.exception("recording a metric failed (%s); the call goes on", what)

    def meta_call(self, tool: str, seconds: float, code: str | None) -> None:
        """One answered tools/call; `code`: its error code, None for a success."""
        try:
            self.calls.labels(tool).inc()
            self.call_seconds.labels(tool).observe(seconds)
            if code is not None:
                self.errors.labels(tool, code).inc()
        except Exception:
            self._dropped("call")

    def upstream_call(
        self, upstream: str, seconds: float, kind: str | None, reason: str | None = None
    ) -> None:
        """One tool call to `upstream`; `kind`: the failure kind, None for an answer; `reason`:
        the failure's (redacted) message, kept as the upstream's last error for the status
        page (gatespec.observe)."""
        try:
            self.last_seconds[upstream] = seconds
            if kind is not None:
                self.last_error[upstream] = f"{kind}: {reason}" if reason else kind
            self.upstream_calls.labels(upstream).inc()
            self.upstream_seconds.labels(upstream).observe(seconds)
            if kind is not None:
                self.upstream_errors.labels(upstream, kind).inc()
        except Exception:
            self._dropped("upstream call")

    def ranking(self, seconds: float) -> None:
        try:
            self.ranking_seconds.observe(seconds)
        except Exception:
            self._dropped("ranking")

    def exposition(self) -> bytes:
        """The registry in the Prometheus text format."""
        return generate_latest(self.registry)


class _Live(Collector):
    """Gauges read from the runtime at scrape time; a source that fails is left out."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def describe(self) -> list[Metric]:
        return []  # values only exist at scrape time

    def collect(self) -> Iterator[Metric]:
        runtime = self.metrics.runtime
        pool = getattr(runtime, "pool", None)
        if pool is not None:
            try:
                up = GaugeMetricFamily(
                    "gatespec_upstream_up",
                    "1 when the upstream is connected and listed, 0 otherwise",
                    labels=["upstream"],
                )
                for status in pool.statuses():
                    up.add_metric([status.key], 1.0 if status.state == "connected" else 0.0)
                yield up
            except Exception:
                logger.debug("upstream_up left out of this scrape", exc_info=True)
        sessions = self.metrics.sessions
        if sessions is not None:
            try:
                yield GaugeMetricFamily(
                    "gatespec_sessions_active", "client sessions open now", value=float(sessions())
                )
            except Exception:
                logger.debug("sessions_active left out of this scrape", exc_info=True)
        state = getattr(runtime, "state", None)
        artifacts = getattr(state, "artifacts", None)
        if artifacts is not None:
            try:
                held = getattr(artifacts, "store", artifacts)  # MemoryArtifacts wraps a store
                yield GaugeMetricFamily(
                    "gatespec_artifacts_held",
                    "artifacts this process holds for tool_view",
                    value=float(len(held)),
                )
            except Exception:  # a shared store holds them elsewhere (no len here)
                logger.debug("artifacts_held left out of this scrape", exc_info=True)


def metrics_of(runtime: Any) -> Metrics:
    """The runtime's Metrics, made (and handed to its upstream pool) on first use."""
    metrics = getattr(runtime, "metrics", None)
    if isinstance(metrics, Metrics):
        return metrics
    metrics = Metrics(runtime)
    try:
        runtime.metrics = metrics
        pool = getattr(runtime, "pool", None)
        if pool is not None:
            pool.metrics = metrics
    except Exception:  # a runtime that takes no attributes: metrics of this server only
        logger.debug("runtime %r keeps no metrics", type(runtime).__name__)
    return metrics
