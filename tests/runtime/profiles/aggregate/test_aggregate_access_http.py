"""Access control in the aggregate profile, over real HTTP with two identities
(AM-ACCESS-CONTROL, AM-ACCESS-NO-LEAK): `gatespec serve --profile aggregate --transport http`
in front of two rich fixture upstreams (alpha, beta), bearer tokens checked by the MCP SDK.

Identities of the config below, and what the policy lets them see (the expected answers):
- bob: one allow selector naming alpha's echo tool, greet prompt and readme resource (policy
  ids: "server:tool", "server:prompt", "server:uri"): exactly alpha__echo, alpha__greet and
  alpha+fixture://doc/readme; FORBIDDEN for every other name, existing or not.
- admin: no rules: everything, and TOOL_NOT_FOUND for a tool that does not exist.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ed25519
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from gatespec.access import FORBIDDEN_MESSAGE
from gatespec_conformance.fixtures.upstream import fixture_argv

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

TOKENS = {"bob": "bob-secret-0002", "admin": "admin-secret-03"}
BOB_SEES = {
    "tools": ["alpha__echo"],
    "prompts": ["alpha__greet"],
    "resources": ["alpha+fixture://doc/readme"],
    "templates": [],
}


ISSUER, AUDIENCE = "https://idp.test", "gatespec-test"
IDP_KEY = ed25519.Ed25519PrivateKey.generate()


def _jwt(groups: Any) -> str:
    body = {"iss": ISSUER, "aud": AUDIENCE, "sub": "carol", "exp": int(time.time()) + 300,
            "groups": groups}  # fmt: skip
    return jwt.encode(body, IDP_KEY, "EdDSA")


def _digest(token: str) -> str:
    return "sha256:" + hashlib.sha256(token.encode()).hexdigest()


@pytest.fixture(scope="module")
def gateway(module_servers: Any, tmp_path_factory: Any) -> Iterator[tuple[str, Path]]:
    """(the gateway's /mcp URL, beta's call log): one gateway for the module, whose tests only
    read through it (the one that calls beta counts the calls it added to the log)."""
    folder = tmp_path_factory.mktemp("aggregate-access")

    def upstream(name: str) -> dict[str, Any]:
        argv = fixture_argv(folder / f"{name}.jsonl", rich=True)
        return {"command": argv[0], "args": argv[1:]}

    allow = [{"tools": ["alpha:echo", "alpha:greet", "alpha:fixture://doc/readme"]}]
    (folder / "idp.pem").write_bytes(
        IDP_KEY.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
    )
    access = {
        "identities": {
            "bob": {"tokens": [_digest(TOKENS["bob"])], "allow": allow},
            "admin": {"tokens": [_digest(TOKENS["admin"])]},
        },
        "groups": {"readers": {"allow": allow}},
        "jwt": {"public_key_file": "idp.pem", "issuer": ISSUER, "audience": AUDIENCE},
    }
    config = {
        "mcpServers": {"alpha": upstream("alpha"), "beta": upstream("beta")},
        "gateway": {"profile": "aggregate", "call_timeout": 10, "watch": False,
                    "access": access},
    }  # fmt: skip
    path = folder / "gatespec.json"
    path.write_text(json.dumps(config))
    port = module_servers.free_port()
    argv = [sys.executable, "-m", "gatespec.cli", "serve", "--config", str(path)]
    module_servers.spawn([*argv, "--transport", "http", "--port", str(port)], port)
    yield f"http://127.0.0.1:{port}/mcp", folder / "beta.jsonl"


@asynccontextmanager
async def connect(url: str, who: str, mode: str = "legacy") -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {TOKENS.get(who, who)}"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=mode, cache=None) as client:
            yield client


async def listed(client: Client) -> dict[str, list[str]]:
    tools = (await client.list_tools()).tools
    prompts = (await client.list_prompts()).prompts
    resources = (await client.list_resources()).resources
    templates = (await client.list_resource_templates()).resource_templates
    return {
        "tools": [t.name for t in tools],
        "prompts": [p.name for p in prompts],
        "resources": [str(r.uri) for r in resources],
        "templates": [t.uri_template for t in templates],
    }


def beta_calls(log: Path) -> list[str]:
    lines = log.read_text().splitlines() if log.exists() else []
    return [json.loads(line)["name"] for line in lines if line.strip()]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_an_identity_lists_only_what_its_policy_allows(
    gateway: tuple[str, Path], mode: str
) -> None:
    url, _ = gateway
    async with connect(url, "bob", mode) as client:
        assert await listed(client) == BOB_SEES
    async with connect(url, "admin", mode) as client:
        everything = await listed(client)
    assert {"alpha__echo", "beta__echo", "alpha__progress"} <= set(everything["tools"])
    assert {"alpha__greet", "beta__greet"} <= set(everything["prompts"])
    assert "beta+fixture://doc/readme" in everything["resources"]
    assert everything["templates"] == ["alpha+fixture://item/{id}", "beta+fixture://item/{id}"]


async def test_what_an_identity_may_not_see_is_forbidden_whether_or_not_it_exists(
    gateway: tuple[str, Path],
) -> None:
    url, beta_log = gateway
    before = beta_calls(beta_log)
    async with connect(url, "bob") as client:
        allowed = await client.call_tool("alpha__echo", {"text": "hi"})
        assert not allowed.is_error, allowed
        for name in ("beta__echo", "alpha__progress", "alpha__no_such_tool", "nosuch__echo"):
            result = await client.call_tool(name, {"text": "hi"})
            assert result.is_error
            payload = json.loads(result.content[0].text)  # type: ignore[union-attr]
            forbidden = {"error": "FORBIDDEN", "message": FORBIDDEN_MESSAGE, "path": name}
            assert payload == {**forbidden, "details": {}}
        readme = await client.read_resource("alpha+fixture://doc/readme")
        assert readme.contents[0].text == "the fixture readme"  # type: ignore[union-attr]
        refused = [
            client.get_prompt("beta__greet", {"name": "x"}),
            client.read_resource("beta+fixture://doc/readme"),
            client.read_resource("alpha+fixture://item/1"),
            client.get_prompt("alpha__with-resource"),
        ]
        for request in refused:
            with pytest.raises(MCPError) as caught:
                await request
            assert caught.value.error.data["error"] == "FORBIDDEN"
            assert caught.value.error.data["message"] == FORBIDDEN_MESSAGE
    assert beta_calls(beta_log) == before  # nothing hidden reached an upstream

    async with connect(url, "admin") as client:
        result = await client.call_tool("alpha__no_such_tool", {})
        assert json.loads(result.content[0].text)["error"] == "TOOL_NOT_FOUND"  # type: ignore[union-attr]
        assert not (await client.call_tool("beta__echo", {"text": "hi"})).is_error
    assert beta_calls(beta_log)[len(before) :] == ["echo"]


async def test_a_groups_claim_of_the_wrong_type_is_refused(gateway: tuple[str, Path]) -> None:
    """Issue 22 item 2: a JWT whose groups claim is a string must fail closed (401), not be an
    identity with no groups (unrestricted)."""
    url, _ = gateway
    async with connect(url, _jwt(["readers"])) as client:  # the list form: bob's view
        assert await listed(client) == BOB_SEES
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
    accept = {"Accept": "application/json, text/event-stream"}
    async with httpx2.AsyncClient(timeout=10) as http:
        for groups in ("readers", ["readers", 1], {"readers": True}):
            headers = {**accept, "Authorization": f"Bearer {_jwt(groups)}"}
            assert (await http.post(url, json=init, headers=headers)).status_code == 401, groups
