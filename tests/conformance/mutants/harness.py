"""Helpers of the layer-2 tests: configs fronting the fixture, gatespec (or a mutant) as the
IUT, and the kit run in-process with a JSON report."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ed25519
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from gatespec_conformance import cli
from gatespec_conformance.fixtures.upstream import ENV_TOOLS, ENV_WELL_FORMED_ONLY, fixture_argv
from gatespec_conformance.live.access import RESTRICTED_VISIBLE
from gatespec_conformance.live.run import fixture_env

PYTHON = sys.executable
MUTANT = Path(__file__).resolve().parent / "serve_mutant.py"
ROOT = Path(__file__).resolve().parents[3]  # the repository: IUTs start there
# Checks in the tests draw few cases: the families are what is being proved, not volume.
MAX_EXAMPLES = "3"


def write_config(
    directory: Path,
    profile: str,
    *,
    cache_stable: bool = False,
    call_log: Path | None = None,
) -> Path:
    """A gatespec config fronting the fixture; the call log is the kit's (${GATESPEC_CALL_LOG})
    unless given."""
    argv = fixture_argv(call_log if call_log is not None else "${GATESPEC_CALL_LOG}")
    # The fixture's size for the kit's --sizes runs reaches it through the environment; the
    # kit's own folders too (fixture_env), so the fixture run is the one the kit reads.
    env = {key: "${" + key + ":-}" for key in (ENV_TOOLS, ENV_WELL_FORMED_ONLY)}
    env.update(fixture_env())
    config = {
        "mcpServers": {"fixture": {"command": argv[0], "args": argv[1:], "env": env}},
        "gateway": {
            "profile": profile,
            "call_timeout": 1,
            "refresh_interval": 0,
            "cache_stable": cache_stable,
        },
    }
    path = directory / f"gatespec-{profile}{'-stable' if cache_stable else ''}.json"
    path.write_text(json.dumps(config))
    return path


def aggregate_argv(mutant: str | None = None) -> list[str]:
    """gatespec (or a mutant) serving the aggregate profile from the kit's own {mcp_config}
    (two rich fixtures), which the kit then also rewrites for its registry-change check."""
    head = [PYTHON, "-m", "gatespec.cli"] if mutant is None else [PYTHON, str(MUTANT), mutant]
    return [*head, "serve", "--config", "{mcp_config}", "--profile", "aggregate"]


def serve_argv(config: Path, mutant: str | None = None) -> list[str]:
    if mutant is None:
        return [PYTHON, "-m", "gatespec.cli", "serve", "--config", str(config)]
    return [PYTHON, str(MUTANT), mutant, "serve", "--config", str(config)]


def run_kit(
    directory: Path,
    profile: str,
    *,
    command: Sequence[str] = (),
    options: Sequence[str] = (),
    select: Sequence[str] = (),
    expected_failures: str | None = None,
    sizes: str = "",
) -> tuple[int, dict[str, Any]]:
    """`gatespec-conformance server` in this process: (exit status, JSON report). Other
    fixture sizes are left out unless `sizes` names them (each costs an IUT start)."""
    report = directory / f"report-{profile}-{time.monotonic_ns()}.json"
    argv = ["server", "--profile", profile, "--max-examples", MAX_EXAMPLES, "--sizes", sizes]
    argv += ["-q", "--format", "json", "-o", str(report), *options]
    for pattern in select:
        argv += ["--select", pattern]
    if expected_failures is not None:
        listed = directory / "expected-failures.txt"
        listed.write_text(expected_failures)
        argv += ["--expected-failures", str(listed)]
    if command:
        argv += ["--", *command]
    status = cli.main(argv)
    return status, json.loads(report.read_text())


def outcomes(report: dict[str, Any], outcome: str) -> list[dict[str, Any]]:
    return [c for c in report["checks"] if c["outcome"] == outcome]


def families(report: dict[str, Any]) -> set[str]:
    return {"/".join(c["name"].split("/")[2:4]) for c in report["checks"]}


@contextmanager
def serving_http(command: Sequence[str], port: int, directory: Path) -> Iterator[str]:
    """`command` (an IUT serving Streamable HTTP on 127.0.0.1:`port`) running until the block
    ends: its /mcp URL once the port accepts connections (its stderr in directory/iut.err)."""
    with (directory / "iut.err").open("w") as errors:
        proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=errors)
        try:
            deadline = time.monotonic() + 60
            while proc.poll() is None and time.monotonic() < deadline:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    time.sleep(0.2)
            assert proc.poll() is None, (directory / "iut.err").read_text()
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# Bearer tokens of the access-control runs: the kit's own identity (every tool) and the
# restricted one of docs/conformance.md (the fixture tools RESTRICTED_VISIBLE only).
OWN_TOKEN = "kit-own-identity-token"
RESTRICTED_TOKEN = "kit-restricted-identity-token"


@dataclass(frozen=True)
class Identities:
    """What the kit is given to run its access checks against gatespec."""

    expired_token: str

    def options(self) -> list[str]:
        return [
            "--token",
            OWN_TOKEN,
            "--restricted-token",
            RESTRICTED_TOKEN,
            "--expired-token",
            self.expired_token,
        ]


def access_config(directory: Path) -> tuple[dict[str, Any], Identities]:
    """gateway.access for the kit's two identities, and a JWT issuer whose expired token the
    kit is given (the key is written next to the config)."""
    key = ed25519.Ed25519PrivateKey.generate()
    pem = key.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
    (directory / "issuer.pem").write_bytes(pem)
    claims = {"iss": "https://kit.test", "aud": "gatespec", "sub": "jwt-user", "exp": 1}
    allow = [{"tools": [f"fixture:{name}#*" for name in RESTRICTED_VISIBLE]}]
    access = {
        "identities": {
            "own": {"tokens": [_digest(OWN_TOKEN)]},
            "restricted": {"tokens": [_digest(RESTRICTED_TOKEN)], "allow": allow},
        },
        "jwt": {"public_key_file": str(directory / "issuer.pem"),
                "issuer": claims["iss"], "audience": claims["aud"]},
    }  # fmt: skip
    return access, Identities(jwt.encode(claims, key, "EdDSA"))


def _digest(token: str) -> str:
    return "sha256:" + hashlib.sha256(token.encode()).hexdigest()


@contextmanager
def http_gatespec(
    directory: Path,
    profile: str,
    *,
    access: dict[str, Any] | None = None,
    mutant: str | None = None,
) -> Iterator[tuple[str, Path]]:
    """gatespec (or a mutant) serving `profile` over Streamable HTTP: (its /mcp URL, the
    fixture's log); with `access` (access_config's), behind the kit's two identities."""
    call_log = directory / f"http-{profile}-calls.jsonl"
    config = write_config(directory, profile, call_log=call_log)
    if access is not None:
        body = json.loads(config.read_text())
        body["gateway"]["access"] = access
        config.write_text(json.dumps(body))
    port = free_port()
    argv = [*serve_argv(config, mutant), "--transport", "http", "--port", str(port)]
    errors = (directory / f"http-{profile}.err").open("w")
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=errors, env=dict(os.environ))
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"gatespec exited with {proc.returncode} before listening")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"nothing listens on port {port}") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp", call_log
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        errors.close()
