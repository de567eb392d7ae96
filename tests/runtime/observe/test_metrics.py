"""/metrics (gatespec.metrics): Prometheus text exposition from a registry of the runtime's own
(never the process-global default one), fed by the meta-tool surface, the upstream pool and the
ranking, plus gauges read at scrape time (upstream health, sessions, artifacts). Recording never
raises into a call path. The last test runs `gatespec serve --transport http` in front of the real
PyPI mcp-server-time and scrapes it; another serves stdio with the opt-in metrics port."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx2
import pytest
from mcp import Client
from prometheus_client.parser import text_string_to_metric_families

from gatespec.metrics import Metrics
from gatespec.upstream.pool import UpstreamStatus
from tests.fixtures.polling import until

pytestmark = pytest.mark.anyio


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """{(sample name, sorted labels): value} of a text exposition."""
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


class Pool:
    def __init__(self, **states: tuple[str, str | None]) -> None:
        self.states = states

    def statuses(self) -> list[UpstreamStatus]:
        return [UpstreamStatus(k, s, r) for k, (s, r) in self.states.items()]  # type: ignore[arg-type]


def test_counters_histograms_and_scrape_time_gauges() -> None:
    pool = Pool(time=("connected", None), git=("failed", "exited with status 1"))
    runtime = SimpleNamespace(pool=pool, state=SimpleNamespace(artifacts=[1, 2, 3]))
    metrics = Metrics(runtime)
    metrics.sessions = lambda: 2
    metrics.meta_call("tool_execute", 0.01, None)
    metrics.meta_call("tool_execute", 0.02, "TOOL_NOT_FOUND")
    metrics.upstream_call("time", 0.005, None)
    metrics.upstream_call("time", 0.5, "timeout")
    metrics.ranking(0.003)
    got = samples(metrics.exposition().decode())
    assert got[("gatespec_calls_total", (("tool", "tool_execute"),))] == 2
    assert (
        got[("gatespec_call_errors_total", (("code", "TOOL_NOT_FOUND"), ("tool", "tool_execute")))]
        == 1
    )
    assert got[("gatespec_call_duration_seconds_count", (("tool", "tool_execute"),))] == 2
    assert got[("gatespec_upstream_calls_total", (("upstream", "time"),))] == 2
    assert got[("gatespec_upstream_errors_total", (("kind", "timeout"), ("upstream", "time")))] == 1
    assert got[("gatespec_upstream_call_duration_seconds_count", (("upstream", "time"),))] == 2
    assert got[("gatespec_ranking_duration_seconds_count", ())] == 1
    assert got[("gatespec_upstream_up", (("upstream", "time"),))] == 1
    assert got[("gatespec_upstream_up", (("upstream", "git"),))] == 0
    assert got[("gatespec_sessions_active", ())] == 2
    assert got[("gatespec_artifacts_held", ())] == 3


def test_two_runtimes_do_not_collide_and_the_default_registry_stays_clean() -> None:
    from prometheus_client import REGISTRY

    a, b = Metrics(None), Metrics(None)
    a.meta_call("tool_browse", 0.1, None)
    assert (
        samples(a.exposition().decode())[("gatespec_calls_total", (("tool", "tool_browse"),))] == 1
    )
    assert ("gatespec_calls_total", (("tool", "tool_browse"),)) not in samples(
        b.exposition().decode()
    )
    assert REGISTRY.get_sample_value("gatespec_calls_total", {"tool": "tool_browse"}) is None


def test_metrics_never_raise() -> None:
    class Broken:
        def statuses(self) -> list[UpstreamStatus]:
            raise RuntimeError("boom")

    metrics = Metrics(SimpleNamespace(pool=Broken(), state=None))
    metrics.sessions = lambda: 1 // 0
    metrics.meta_call(None, "not a number", object())  # type: ignore[arg-type]
    metrics.upstream_call(None, None, None)  # type: ignore[arg-type]
    metrics.ranking("x")  # type: ignore[arg-type]
    text = metrics.exposition().decode()
    assert "gatespec_calls_total" in text  # a scrape still answers


# -- real processes --------------------------------------------------------------------------


def _config(tmp_path: Path, servers: Any, gateway: dict[str, Any]) -> tuple[Path, Path]:
    pidfile = tmp_path / "time.pid"
    time_bin = servers.binary(servers.venv_bin / "mcp-server-time")
    config = {
        "mcpServers": {
            "time": {"command": "sh", "args": ["-c", f"echo $$ > {pidfile}; exec {time_bin}"]}
        },
        "gateway": {"refresh_interval": 600, **gateway},
    }
    path = tmp_path / "gateway.json"
    path.write_text(json.dumps(config))
    return path, pidfile


def _env() -> dict[str, str]:
    root = Path(__file__).resolve().parents[3]
    return {**os.environ, "PYTHONPATH": f"{root / 'src'}{os.pathsep}{root / 'generated'}"}


@pytest.mark.real_upstream
@pytest.mark.timeout(120)
async def test_http_gateway_in_front_of_mcp_server_time(tmp_path: Path, servers: Any) -> None:
    port = servers.free_port()
    config, pidfile = _config(tmp_path, servers, {})
    argv = [sys.executable, "-m", "gatespec", "serve", "--config", str(config)]
    servers.spawn([*argv, "--transport", "http", "--port", str(port)], port, _env())
    base = f"http://127.0.0.1:{port}"
    async with httpx2.AsyncClient(base_url=base) as web:

        async def ready() -> bool:
            return (await web.get("/readyz")).status_code == 200

        assert await until(ready)
        async with Client(f"{base}/mcp", mode="legacy") as client:
            browsed = await client.call_tool("tool_browse", {"query": "current time"})
            tool_id = browsed.structured_content["cards"][0]["id"]
            done = await client.call_tool(
                "tool_execute", {"tool_id": tool_id, "args": {"timezone": "UTC"}}
            )
            assert not done.is_error
            missing = await client.call_tool(
                "tool_execute", {"tool_id": "nope:nothing", "args": {}}
            )
            assert missing.is_error
        response = await web.get("/metrics")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/plain")
        got = samples(response.text)
        assert got[("gatespec_calls_total", (("tool", "tool_execute"),))] == 2
        assert got[("gatespec_calls_total", (("tool", "tool_browse"),))] == 1
        errors = [k for k in got if k[0] == "gatespec_call_errors_total"]
        assert len(errors) == 1 and dict(errors[0][1])["tool"] == "tool_execute"
        assert got[("gatespec_upstream_calls_total", (("upstream", "time"),))] == 1
        assert got[("gatespec_upstream_call_duration_seconds_count", (("upstream", "time"),))] == 1
        assert got[("gatespec_ranking_duration_seconds_count", ())] >= 1
        assert got[("gatespec_upstream_up", (("upstream", "time"),))] == 1

        os.kill(int(pidfile.read_text()), signal.SIGKILL)

        async def down() -> bool:
            text = (await web.get("/metrics")).text
            return samples(text).get(("gatespec_upstream_up", (("upstream", "time"),))) == 0

        assert await until(down)
        body = (await web.get("/readyz")).json()
        assert [u["upstream"] for u in body["not_ready"]] == ["time"]
        assert body["not_ready"][0]["state"] in ("failed", "reconnecting")
        assert body["not_ready"][0]["reason"]


@pytest.mark.real_upstream
@pytest.mark.timeout(120)
def test_stdio_gateway_serves_metrics_on_the_opt_in_port(tmp_path: Path, servers: Any) -> None:
    port = servers.free_port()
    config, _ = _config(tmp_path, servers, {"metrics_port": port})
    argv = [sys.executable, "-m", "gatespec", "serve", "--config", str(config)]
    proc = subprocess.Popen(
        argv, env=_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 30
        text = ""
        while time.monotonic() < deadline:
            try:
                text = httpx2.get(f"http://127.0.0.1:{port}/metrics").text
                if "gatespec_upstream_up" in text:
                    break
            except httpx2.HTTPError:
                pass
            time.sleep(0.2)
        assert samples(text)[("gatespec_upstream_up", (("upstream", "time"),))] == 1
        assert samples(text)[("gatespec_sessions_active", ())] == 1
    finally:
        proc.kill()
        proc.communicate(timeout=10)
