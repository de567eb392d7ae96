"""Issue 12 #2: a value a config's ${VAR} expanded to never surfaces, in any output channel.

A canary secret sits in an upstream's arguments (which its stderr then quotes), in another's
env (which it prints on stderr), and in an HTTP upstream's URL query string and headers. Every
channel is searched: `gatespec catalog` (stdout and stderr), a served gateway's tool results
and errors through a real MCP client, and its log at -vv. The redacted reference ${CANARY}
must show up where the failure is reported, so the search cannot pass by reporting nothing.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from gatespec import secrets as redaction
from gatespec.config import parse_config
from gatespec.logs import OneLineFormatter
from gatespec.upstream import UpstreamError
from tests.faults.support import GATESPEC, upstream

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


@pytest.fixture
def canary() -> str:
    return "canary-" + secrets.token_hex(12)


def secret_config(tmp_path: Path) -> Path:
    path = tmp_path / "gateway.json"
    servers = {
        "good": upstream("--env-on-stderr", "API_KEY", env={"API_KEY": "${CANARY}"}),
        "bad": upstream("--say-argv", "--exit-now", "1", "--token=${CANARY}"),
        "web": {
            "type": "http",
            "url": "http://127.0.0.1:9/mcp?key=${CANARY}",
            "headers": {"Authorization": "Bearer ${CANARY}"},
        },
    }
    gateway = {"connect_timeout": 10, "refresh_interval": 0}
    path.write_text(json.dumps({"mcpServers": servers, "gateway": gateway}))
    return path


def environment(canary: str) -> dict[str, str]:
    return {**os.environ, "CANARY": canary}


def test_catalog_output_quotes_references_never_values(tmp_path: Path, canary: str) -> None:
    path = secret_config(tmp_path)
    for extra in ([], ["--json"]):
        done = subprocess.run(
            [GATESPEC, "-vv", "catalog", "--config", str(path), *extra],
            env=environment(canary),
            capture_output=True,
            text=True,
            timeout=90,
        )
        assert done.returncode == 0, done.stderr
        output = done.stdout + done.stderr
        assert canary not in output
        # the failures are reported, with the secret as it is written in the config
        assert "--token=${CANARY}" in done.stdout  # bad's argv, from its stderr tail
        assert "key=${CANARY}" in done.stdout  # web's URL


async def test_served_gateway_results_errors_and_log_never_hold_a_value(
    tmp_path: Path, canary: str
) -> None:
    path = secret_config(tmp_path)
    log = tmp_path / "stderr.log"
    params = StdioServerParameters(
        command=GATESPEC,
        args=["-vv", "serve", "--config", str(path)],
        env=environment(canary),
    )
    answers: list[Any] = []
    with log.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:

            async def call(name: str, args: dict[str, Any]) -> Any:
                result = await client.call_tool(name, args)
                answers.append(result.model_dump(mode="json"))
                return result

            ids: list[str] = []
            for query in ("echo the text back", "exit mid-call crash"):
                browse = await call("tool_browse", {"query": query})
                ids += [c["id"] for c in browse.structured_content["cards"]]
            echo = next(i for i in ids if i.startswith("good:echo"))
            crash = next(i for i in ids if i.startswith("good:crash"))
            assert not (
                await call("tool_execute", {"tool_id": echo, "args": {"text": "hi"}})
            ).is_error
            assert (await call("tool_execute", {"tool_id": crash, "args": {}})).is_error
            down = await call("tool_execute", {"tool_id": echo, "args": {"text": "hi"}})
            assert down.is_error
    channels = json.dumps(answers) + log.read_text()
    assert canary not in channels
    # the crash is reported with good's stderr tail, its env value as written in the config
    assert "API_KEY=${CANARY}" in json.dumps(answers)


def test_errors_and_log_records_replace_every_expanded_value(canary: str) -> None:
    """The unit under the channels: UpstreamError, ConfigError and the log formatter."""
    config = parse_config(
        {"mcpServers": {"a": {"command": "run", "args": ["--key=${K}"]}}}, environ={"K": canary}
    )
    assert config.servers["a"].args == (f"--key={canary}",)  # the real value runs the server
    assert canary not in repr(config.servers["a"])
    assert config.servers["a"].written.target() == "run --key=${K}"
    error = UpstreamError("a", "start_failed", f"stderr: key is {canary}")
    assert error.reason == "stderr: key is ${K}" and canary not in str(error)
    import logging

    record = logging.LogRecord("x", logging.WARNING, __file__, 1, "saw %s", (canary,), None)
    assert OneLineFormatter("%(message)s").format(record) == "saw ${K}"
    with pytest.raises(ValueError) as caught:
        parse_config({"mcpServers": {"u": {"url": "ftp://${K}"}}}, environ={"K": canary})
    assert canary not in str(caught.value) and "${K}" in str(caught.value)
    assert redaction.redact("abc") == "abc"  # values shorter than MIN_SECRET_CHARS are kept


def test_a_crash_report_cut_inside_a_secret_shows_none_of_it(tmp_path: Path, canary: str) -> None:
    """Issue 22 item 3: the stderr tail (its last 800 characters) was cut before redaction, so
    a cut inside a secret left the rest of it verbatim. Stderr here ends with the secret and
    then 790 characters: the last 800 begin 10 characters before the secret's end."""
    path = tmp_path / "gateway.json"
    crash = upstream("--stderr", "${CANARY}" + "y" * 790, "--exit-now", "1")
    gateway = {"connect_timeout": 10, "refresh_interval": 0}
    path.write_text(json.dumps({"mcpServers": {"bad": crash}, "gateway": gateway}))
    done = subprocess.run(
        [GATESPEC, "catalog", "--config", str(path)],
        env=environment(canary),
        capture_output=True,
        text=True,
        timeout=90,
    )
    output = done.stdout + done.stderr
    assert "y" * 700 in output  # the tail is reported...
    hidden = canary.removeprefix("canary-")
    shown = [hidden[i : i + 4] for i in range(len(hidden) - 3) if hidden[i : i + 4] in output]
    assert not shown, output  # ...and no 4 characters of the secret's random part with it
    assert "${CANARY}" in output


@pytest.mark.parametrize("cut", range(1, 12))
def test_a_stderr_tail_never_holds_a_piece_of_a_secret(canary: str, cut: int) -> None:
    """The unit: StderrTail.tail redacts the window it read, then cuts; a window that begins
    inside a secret (a suffix of it at the cut) has that suffix treated as the secret."""
    from gatespec.spawn import StderrTail

    redaction.remember(canary, "CANARY")
    try:
        for text in (canary + "y" * (40 - cut), "ab" + canary + "z" * (40 - cut)):
            stderr = StderrTail()
            stderr.file.write(text)
            stderr.file.flush()
            tail = stderr.tail(40)
            stderr.close()
            assert not any(canary[i:] in tail for i in range(len(canary) - 1)), tail
            assert "${CANARY}" in tail or canary[-cut:] not in text[-40:]
        # a window (max_chars * 4 bytes) that starts inside the secret: 4-byte characters
        stderr = StderrTail()
        stderr.file.write(canary + "\U0001f600" * 9)
        stderr.file.flush()
        tail = stderr.tail(10)  # reads the last 40 bytes: 4 of the secret, then 9 emoji
        stderr.close()
        assert canary[-4:] not in tail and tail.startswith("${CANARY}"), tail
    finally:
        redaction.forget_all()


@pytest.mark.parametrize("profile", ["gateway", "aggregate"])
async def test_an_upstreams_is_error_text_is_redacted_like_its_errors(
    tmp_path: Path, canary: str, profile: str
) -> None:
    """Issue 22 item 4: an isError tool result quoting a secret reached the client verbatim
    (the same text in a JSON-RPC error was redacted)."""
    path = tmp_path / "gateway.json"
    servers = {"good": upstream(env={"API_KEY": "${CANARY}"})}
    path.write_text(json.dumps({"mcpServers": servers, "gateway": {"profile": profile}}))
    params = StdioServerParameters(
        command=GATESPEC, args=["serve", "--config", str(path)], env=environment(canary)
    )
    async with Client(params, mode="legacy") as client:
        if profile == "aggregate":
            result = await client.call_tool("good__fail", {"env": "API_KEY"})
        else:
            browse = await client.call_tool("tool_browse", {"path": "/good"})
            tool_id = next(
                c["id"] for c in browse.structured_content["cards"] if ":fail" in c["id"]
            )
            result = await client.call_tool(
                "tool_execute", {"tool_id": tool_id, "args": {"env": "API_KEY"}}
            )
    shown = json.dumps(result.model_dump(mode="json"))
    assert result.is_error
    assert canary not in shown
    assert "login failed with key ${CANARY}" in shown
