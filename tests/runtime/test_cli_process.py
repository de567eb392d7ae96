"""The `gatespec` command as a user runs it: real processes, real pipes, real exit statuses."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gatespec import cli
from gatespec.cli.parser import build_parser
from gatespec_conformance.cli import build_parser as kit_parser

pytestmark = pytest.mark.timeout(120)

PYTHON = sys.executable
GATESPEC = [PYTHON, "-m", "gatespec"]


def run(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*GATESPEC, *args], capture_output=True, text=True, timeout=90, check=False, **kwargs
    )  # type: ignore[call-overload]


def test_python_dash_m_gatespec_is_the_command() -> None:
    done = run("--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: gatespec ")
    assert "exit statuses:" in done.stdout


def _stub_config(tmp_path: Path) -> Path:
    catalog = [{"name": "read_file", "description": "Read.", "inputSchema": {"type": "object"}}]
    (tmp_path / "catalog.json").write_text(json.dumps(catalog))
    config = tmp_path / "gateway.json"
    config.write_text(
        json.dumps({"mcpServers": {"fs": {"type": "stub", "catalog": "catalog.json"}}})
    )
    return config


def _rank_files(tmp_path: Path) -> list[str]:
    catalog = [
        {"server": "clock", "name": "get_time", "description": "Current time in a timezone."},
        {"server": "fs", "name": "read_file", "description": "Read a file."},
    ]
    (tmp_path / "tools.json").write_text(json.dumps(catalog))
    (tmp_path / "q.json").write_text(json.dumps([{"id": 1, "query": "what time is it"}]))
    return ["--catalog", str(tmp_path / "tools.json"), "--queries", str(tmp_path / "q.json")]


KIT = [PYTHON, "-m", "gatespec_conformance"]
STDOUT_COMMANDS = {
    "demo": lambda tmp: [*GATESPEC, "demo"],
    "catalog": lambda tmp: [*GATESPEC, "catalog", "--config", str(_stub_config(tmp))],
    "catalog --json": lambda tmp: [
        *GATESPEC,
        "catalog",
        "--json",
        "--config",
        str(_stub_config(tmp)),
    ],
    "rank": lambda tmp: [*GATESPEC, "rank", *_rank_files(tmp)],
    "gatespec-conformance server --list": lambda tmp: [
        *KIT,
        "server",
        "--profile",
        "gateway",
        "--list",
    ],
}


@pytest.mark.parametrize("name", sorted(STDOUT_COMMANDS))
def test_a_closed_stdout_ends_quietly(name: str, tmp_path: Path) -> None:
    """`gatespec demo | head`: the reader has gone before anything is written (deterministic:
    the pipe's read end is closed first), and the command ends with 141, not a traceback."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            STDOUT_COMMANDS[name](tmp_path),
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=90,
            check=False,
        )
    finally:
        os.close(write_end)
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    assert done.returncode == cli.EXIT_PIPE_CLOSED == 141


@pytest.mark.parametrize("argv", [["--help"], ["conformance", "--help"], ["serve", "--help"]])
def test_help_into_a_closed_stdout_is_quiet(argv: list[str]) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [*GATESPEC, *argv], stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=60
        )
    finally:
        os.close(write_end)
    assert done.stderr == ""  # argparse's own printing ignores the closed pipe


def test_catalog_exits_3_when_every_upstream_is_down(tmp_path: Path) -> None:
    config = tmp_path / "gateway.json"
    missing = str(tmp_path / "no-such-server")
    config.write_text(
        json.dumps({"mcpServers": {"a": {"command": missing}, "b": {"command": missing}}})
    )
    done = run("catalog", "--config", str(config))
    assert done.returncode == 3 == cli.EXIT_UPSTREAMS_DOWN
    assert "error: every upstream is unavailable (2 configured)" in done.stderr
    assert "# 2 servers unavailable" in done.stdout  # the report is still printed


def test_catalog_exits_0_when_an_upstream_is_up(tmp_path: Path) -> None:
    done = run("catalog", "--config", str(_stub_config(tmp_path)))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# 1 tools")


def _parsers(
    parser: argparse.ArgumentParser, path: str
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{path} {name}")


def _commands() -> list[tuple[str, argparse.ArgumentParser]]:
    return [*_parsers(build_parser(), "gatespec"), *_parsers(kit_parser(), "gatespec-conformance")]


@pytest.mark.parametrize(("path", "parser"), _commands(), ids=[p for p, _ in _commands()])
def test_every_command_describes_itself_and_its_defaults(
    path: str, parser: argparse.ArgumentParser
) -> None:
    assert parser.description, f"`{path} --help` has no description"
    if not parser.add_help:
        return  # forwarded to the kit, whose own help is shown
    text = parser.format_help()
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or not action.option_strings:
            continue
        if action.default in (None, False, [], argparse.SUPPRESS):
            continue
        shown = parser._get_formatter()._expand_help(action)
        assert "default" in shown and str(action.default).rstrip("0").rstrip(".") in text, (
            f"`{path} --help`: {action.option_strings[0]} does not show its default {action.default!r}"
        )


def test_help_in_a_real_process_shows_defaults() -> None:
    done = run("serve", "--help")
    assert done.returncode == 0
    assert "else gateway)" in done.stdout and "else 127.0.0.1)" in done.stdout
    done = run("rank", "--help")
    assert "(default: 10)" in done.stdout


def test_serve_demo_says_its_upstreams_are_stubs() -> None:
    done = run("serve", "--demo", stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if ": connected" in line]
    assert len(lines) == 5 and all(
        line.endswith("(stub: captured tools, calls are echoed)") for line in lines
    )
    assert "5 of them are stubs that echo calls, not real servers" in done.stderr
