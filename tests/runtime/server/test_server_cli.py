"""The `gatespec` command in-process: user errors, hooks, catalog output, progress lines."""

from __future__ import annotations

import importlib.util
import io
import json
import socket
from pathlib import Path
from typing import Any

import pytest

from gatespec import cli
from gatespec.cli.progress import Progress
from gatespec.profiles.registry import SERVED
from gatespec.upstream import UpstreamStatus
from gatespec_surface.descriptors import PROFILES
from gatespec_surface.parsers import encode_wire_name

pytestmark = pytest.mark.timeout(60)


def _load_fixture() -> Any:
    path = Path(__file__).resolve().parents[2] / "fixtures" / "fake_gateway.py"
    spec = importlib.util.spec_from_file_location("fake_gateway", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fake = _load_fixture()


def write_config(tmp_path: Path, gateway: dict[str, Any] | None = None) -> Path:
    catalog = [
        {"name": "read_file", "description": "Read.", "inputSchema": {"type": "object"}},
        {"name": "bad_schema", "description": "Excluded.", "inputSchema": {"type": "string"}},
    ]
    (tmp_path / "catalog.json").write_text(json.dumps(catalog))
    config = {
        "mcpServers": {
            "My FS": {"type": "stub", "catalog": "catalog.json"},
            "gone": {"command": str(tmp_path / "missing-binary")},
        },
        "gateway": gateway or {},
    }
    path = tmp_path / "gateway.json"
    path.write_text(json.dumps(config))
    return path


def test_a_config_error_exits_2_with_one_line(tmp_path: Path, capsys: Any) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"mcpServers": {"x": {"comand": "y"}}}')
    assert cli.main(["serve", "--config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert (
        err
        == f"gatespec: error: {bad}: mcpServers.x.comand: unknown key (did you mean 'command'?)\n"
    )
    assert cli.main(["catalog", "--config", str(tmp_path / "nope.json")]) == 2
    assert "cannot read file" in capsys.readouterr().err


def test_every_profile_of_the_spec_is_served() -> None:
    # With all of profiles.yaml served, `serve` has no profile left to refuse as unserved.
    assert set(SERVED) == set(PROFILES)


def test_demo_runs_a_scripted_session(capsys: Any) -> None:
    assert cli.main(["demo"]) == 0
    out = capsys.readouterr().out
    for section in ("What the agent loads", 'tool_browse(path="/")', "ARGS_INVALID", "tool_view("):
        assert section in out
    assert "__cache_breakpoint__" in out


def test_catalog_with_the_real_runtime(tmp_path: Path, capsys: Any) -> None:
    assert cli.main(["catalog", "--config", str(write_config(tmp_path)), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [t["tool_id"].split("#")[0] for t in document["tools"]] == ["my-fs:read_file"]
    assert all(t["wire_name"] == encode_wire_name(t["tool_id"]) for t in document["tools"])
    assert [(e["server"], e["tool"]) for e in document["excluded"]] == [("My FS", "bad_schema")]
    assert [s["state"] for s in document["servers"]] == ["connected", "failed"]


def test_catalog_lists_ids_wire_names_exclusions_and_dead_servers(
    tmp_path: Path, capsys: Any
) -> None:
    config = str(write_config(tmp_path))
    assert cli.main(["catalog", "--config", config], runtime_factory=fake.create_fake_runtime) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0] == "# 1 tools: tool_id\twire_name"
    tool_id, wire = lines[1].split("\t")
    assert tool_id.startswith("my-fs:read_file#") and wire == encode_wire_name(tool_id)
    assert lines[2:] == [
        "# 1 excluded: server\ttool\treason",
        "My FS\tbad_schema\tinputSchema must describe an object",
        "# 1 servers unavailable: server\treason",
        f"gone\tcommand not found: {tmp_path / 'missing-binary'}",
    ]
    assert "1 of 2 upstreams connected" in err

    assert (
        cli.main(
            ["catalog", "--config", config, "--json"], runtime_factory=fake.create_fake_runtime
        )
        == 0
    )
    document = json.loads(capsys.readouterr().out)
    assert document["tools"] == [{"tool_id": tool_id, "wire_name": wire}]
    assert document["excluded"] == [
        {"server": "My FS", "tool": "bad_schema", "reason": "inputSchema must describe an object"}
    ]
    assert [s["state"] for s in document["servers"]] == ["connected", "failed"]


def test_a_taken_port_fails_before_upstreams_start(tmp_path: Path, capsys: Any) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        argv = [
            "serve",
            "--config",
            str(write_config(tmp_path)),
            "--transport",
            "http",
            "--port",
            port,
        ]
        assert cli.main(argv, runtime_factory=fake.create_fake_runtime) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"gatespec: error: cannot listen on http://127.0.0.1:{port}: ")
    assert "upstreams connected" not in err and "Traceback" not in err


class _Pool:
    def __init__(self, reasons: dict[str, str | None]) -> None:
        self.reasons = reasons

    def status(self, key: str) -> UpstreamStatus:
        reason = self.reasons[key]
        return UpstreamStatus(key, "failed" if reason else "connected", reason)


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal_is_one_updating_line() -> None:
    stream = _Tty()
    progress = Progress(_Pool({"a": None, "b": "boom"}), 2, stream)  # type: ignore[arg-type]
    progress("a", "connected", 1, 2)
    progress("b", "failed", 2, 2)
    progress.finish([UpstreamStatus("a", "connected", None), UpstreamStatus("b", "failed", "boom")])
    assert stream.getvalue() == (
        "\r\033[Kgatespec: connecting upstreams 1/2"
        "\r\033[Kgatespec: b: failed: boom\n"
        "\r\033[Kgatespec: connecting upstreams 2/2"
        "\r\033[K"
        "gatespec: 1 of 2 upstreams connected (1 failed; they are retried on refresh)\n"
    )


def test_progress_in_a_pipe_is_a_line_per_upstream() -> None:
    stream = io.StringIO()
    progress = Progress(_Pool({"a": None, "b": "boom"}), 2, stream)  # type: ignore[arg-type]
    progress("a", "connected", 1, 2)
    progress("b", "failed", 2, 2)
    assert stream.getvalue() == "gatespec: [1/2] a: connected\ngatespec: [2/2] b: failed: boom\n"
