"""Two identities over real HTTP, in every profile gatespec serves (AM-ACCESS-CONTROL,
AM-ACCESS-NO-LEAK): `gatespec serve --transport http` fronting the conformance kit's fixture
upstream (a real MCP server whose call log proves what reached it), with bearer tokens checked
by the MCP SDK's server auth.

Identities of the config below (expected answers by fixture tool name, from the policy):
- alice (static token, sha256 in the file): everything but the tools named read*;
- bob (static token from ${BOB_TOKEN}): only echo, read_file and big_text;
- carol (a JWT whose groups claim names "auditors"): only echo;
- admin (static token, no rules): everything.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import jwt
import mcp_types as types
import pytest
from cryptography.hazmat.primitives.asymmetric import ed25519
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from gatespec_conformance.live.access import INITIALIZE as INIT
from gatespec_surface import parsers
from gatespec_surface.descriptors import META_TOOL_DESCRIPTIONS
from gatespec_surface.errors import GatewayError
from tests.conformance.mutants.harness import http_gatespec, write_config

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

TOKENS = {"alice": "alice-secret-0001", "bob": "bob-secret-0002", "admin": "admin-secret-03"}
ISSUER, AUDIENCE = "https://idp.test", "gatespec-test"
BOB_ONLY = {"echo", "read_file", "big_text"}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def digest(token: str) -> str:
    return "sha256:" + hashlib.sha256(token.encode()).hexdigest()


@dataclass
class Gateway:
    url: str  # http://127.0.0.1:PORT
    call_log: Path
    key: ed25519.Ed25519PrivateKey
    profile: str

    def calls(self) -> list[str]:
        lines = self.call_log.read_text().splitlines() if self.call_log.exists() else []
        return [json.loads(line)["name"] for line in lines]

    def jwt(self, **claims: Any) -> str:
        body = {"iss": ISSUER, "aud": AUDIENCE, "sub": "carol", "exp": int(time.time()) + 300,
                "groups": ["auditors"], **claims}  # fmt: skip
        return jwt.encode(body, self.key, "EdDSA")


def access_block(folder: Path) -> tuple[dict[str, Any], ed25519.Ed25519PrivateKey]:
    """The identities of the module docstring, and the key their JWT issuer signs with."""
    key = ed25519.Ed25519PrivateKey.generate()
    pem = key.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
    (folder / "idp.pem").write_bytes(pem)
    access = {
        "identities": {
            "alice": {"tokens": [digest(TOKENS["alice"])], "deny": [{"tools": ["fixture:read*"]}]},
            "bob": {"tokens": ["${BOB_TOKEN}"], "allow": [
                {"tools": ["fixture:echo#*", "fixture:read_file#*", "fixture:big_text#*"]}]},
            "admin": {"tokens": [digest(TOKENS["admin"])]},
        },
        "groups": {"auditors": {"allow": [{"tools": ["fixture:echo#*"]}]}},
        "jwt": {"public_key_file": "idp.pem", "issuer": ISSUER, "audience": AUDIENCE},
        "stdio_identity": "bob",
    }  # fmt: skip
    return access, key


@pytest.fixture(scope="module", params=["gateway", "transparent", "search"])
def gateway(request: Any, tmp_path_factory: Any) -> Iterator[Gateway]:
    profile = request.param
    folder = tmp_path_factory.mktemp(f"access-{profile}")
    access, key = access_block(folder)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("BOB_TOKEN", TOKENS["bob"])  # the env reference of bob's token
        with http_gatespec(folder, profile, access=access) as (url, call_log):
            yield Gateway(url.removesuffix("/mcp"), call_log, key, profile)


@asynccontextmanager
async def connect(
    gw: Gateway, token: str, mode: str = "auto", **options: Any
) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        transport = streamable_http_client(f"{gw.url}/mcp", http_client=http)
        async with Client(transport, mode=mode, cache=None, **options) as client:
            yield client


def name_of(tool_id: str) -> str:
    return parsers.parse_tool_id(tool_id).name


async def listed_ids(client: Client) -> dict[str, str]:
    """wire name -> tool id of the transparent tools/list entries (a shortened wire name is
    resolved by the gateway that issued it, through tool_hydrate)."""
    out = {}
    for entry in (await client.list_tools()).tools:
        if entry.name in META_TOOL_DESCRIPTIONS:
            continue
        try:
            out[entry.name] = parsers.decode_wire_name(entry.name)
        except GatewayError:
            hydrated = await client.call_tool("tool_hydrate", {"tool_id": entry.name})
            out[entry.name] = hydrated.structured_content["tool_id"]
    return out


def strings(value: Any) -> list[str]:
    """Every string value (not the keys) of a JSON-like value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def shown(result: types.CallToolResult) -> str:
    return "\n".join(strings(result.model_dump(mode="json", by_alias=True)))


async def seen(client: Client, profile: str) -> tuple[set[str], str]:
    """(the fixture tool names the identity is shown, every string of every answer)."""
    texts: list[str] = []
    names: set[str] = set()
    listed = (await client.list_tools()).tools
    meta = set(META_TOOL_DESCRIPTIONS)  # the same for every caller
    texts += strings(
        [t.model_dump(mode="json", by_alias=True) for t in listed if t.name not in meta]
    )
    if profile == "transparent":
        names = {name_of(tool_id) for tool_id in (await listed_ids(client)).values()}
    elif profile == "search":
        result = await client.call_tool("search", {"limit": 50})
        texts.append(shown(result))
        names = {h["operation"].rsplit("/", 1)[1] for h in result.structured_content["hits"]}
        for query in ("read a file", "echo text", "delete something"):
            found = await client.call_tool("search", {"query": query})
            texts.append(shown(found))
    else:
        queue = ["/"]
        while queue:
            result = await client.call_tool("tool_browse", {"path": queue.pop()})
            texts.append(shown(result))
            for card in result.structured_content["cards"]:
                if card["kind"] == "internal":
                    queue.append(card["id"])
                else:
                    names.add(name_of(card["id"]))
        for query in ("read a file", "echo text"):
            found = await client.call_tool("tool_browse", {"query": query})
            texts.append(shown(found))
    return names, "\n".join(texts)


async def test_each_identity_sees_exactly_its_tools(gateway: Gateway) -> None:
    async with connect(gateway, TOKENS["admin"]) as admin:
        everything, _ = await seen(admin, gateway.profile)
    async with connect(gateway, TOKENS["alice"]) as alice:
        alice_names, alice_text = await seen(alice, gateway.profile)
    async with connect(gateway, TOKENS["bob"], mode="legacy") as bob:
        bob_names, bob_text = await seen(bob, gateway.profile)
    async with connect(gateway, gateway.jwt()) as carol:
        carol_names, _ = await seen(carol, gateway.profile)
    assert BOB_ONLY < everything and len(everything) > 30
    assert alice_names == {n for n in everything if not n.startswith("read")}
    assert bob_names == BOB_ONLY
    assert carol_names == {"echo"}
    for who, names, text in (("bob", bob_names, bob_text), ("alice", alice_names, alice_text)):
        for hidden in everything - names:  # no hidden name anywhere in what they are shown
            found = re.search(rf"(?<![\w.-]){re.escape(hidden)}(?![\w.-])", text)
            assert found is None, (who, hidden, text[max(0, found.start() - 80) : found.end()])


async def test_a_forbidden_call_never_reaches_upstream(gateway: Gateway) -> None:
    async with connect(gateway, TOKENS["admin"]) as admin:
        ids = await fixture_ids(admin, gateway.profile)
    before = len(gateway.calls())
    async with connect(gateway, TOKENS["bob"]) as bob:
        payloads = [
            await invoke(bob, gateway.profile, ids["destructive_tool"]),
            await invoke(bob, gateway.profile, ids["destructive_tool"].replace("#", "x#")),
        ]
        allowed = await invoke(bob, gateway.profile, ids["echo"], {"text": "hi"})
        if gateway.profile == "search":
            batch = await bob.call_tool("batch", {"calls": [
                {"operation": "/fixture/destructive_tool"},
                {"operation": "/fixture/echo", "input": {"text": "in batch"}},
            ]})  # fmt: skip
            items = batch.structured_content["results"]
            assert [i["is_error"] for i in items] == [True, False]
            payloads.append(items[0]["error"])
    assert allowed is None
    assert [p["error"] for p in payloads] == ["FORBIDDEN"] * len(payloads)
    assert len({p["message"] for p in payloads}) == 1 and all(p["details"] == {} for p in payloads)
    made = gateway.calls()[before:]
    assert "destructive_tool" not in made and made.count("echo") >= 1


async def fixture_ids(client: Client, profile: str) -> dict[str, str]:
    if profile == "search":
        hits = (await client.call_tool("search", {"limit": 50})).structured_content["hits"]
        return {h["operation"].rsplit("/", 1)[1]: h["operation"] for h in hits}
    if profile == "transparent":
        ids = list((await listed_ids(client)).values())
    else:
        found = await client.call_tool("tool_browse", {"path": "/fixture"})
        ids = []
        for cluster in found.structured_content["cards"]:
            inner = await client.call_tool("tool_browse", {"path": cluster["id"]})
            ids += [c["id"] for c in inner.structured_content["cards"]]
    return {name_of(i): i for i in ids}


async def invoke(
    client: Client, profile: str, target: str, args: dict[str, Any] | None = None
) -> dict[str, Any] | None:
    """The error payload of calling `target` (None when it succeeded)."""
    if profile == "search":
        result = await client.call_tool("call", {"operation": target, "input": args or {}})
    else:
        result = await client.call_tool("tool_execute", {"tool_id": target, "args": args or {}})
    if not result.is_error:
        return None
    payload = json.loads(result.content[0].text)
    if profile != "search":  # and hydration answers the same
        tool = "tool_hydrate" if profile == "transparent" else None
        if tool is not None:
            hydrated = await client.call_tool(tool, {"tool_id": target})
            assert json.loads(hydrated.content[0].text) == payload
    else:
        schema = await client.call_tool("schema", {"operation": target})
        assert json.loads(schema.content[0].text) == payload
    return dict(payload)


async def test_no_token_or_a_bad_one_is_401_with_the_challenge(gateway: Gateway) -> None:
    expired = gateway.jwt(exp=int(time.time()) - 60)
    wrong_audience = gateway.jwt(aud="another-service")
    async with httpx2.AsyncClient(base_url=gateway.url, timeout=10) as http:
        for token in (None, "guessed", expired, wrong_audience):
            headers = {**ACCEPT, **({"Authorization": f"Bearer {token}"} if token else {})}
            for method, path in (("POST", "/mcp"), ("GET", "/sse"), ("POST", "/messages")):
                answer = await http.request(method, path, json=INIT, headers=headers)
                assert answer.status_code == 401, (token, path)
                challenge = answer.headers["www-authenticate"]
                assert challenge.startswith("Bearer ") and 'error="invalid_token"' in challenge
                assert f'resource_metadata="{gateway.url}/.well-known/oauth-protected-resource' in challenge  # fmt: skip
        metadata = (await http.get("/.well-known/oauth-protected-resource/mcp")).json()
        assert metadata["resource"] == f"{gateway.url}/mcp"
        assert metadata["authorization_servers"] == [ISSUER]
        good = {**ACCEPT, "Authorization": f"Bearer {gateway.jwt()}"}
        assert (await http.post("/mcp", json=INIT, headers=good)).status_code == 200
        rebind = {**good, "Host": "evil.example"}
        assert (await http.post("/mcp", json=INIT, headers=rebind)).status_code == 421


async def test_a_groups_claim_of_the_wrong_type_is_refused(gateway: Gateway) -> None:
    """Issue 22 item 2: carol's groups claim as a string ("auditors", not ["auditors"]) gave
    her no groups, so none of the auditors' allow list: every tool. It must fail closed."""
    async with httpx2.AsyncClient(base_url=gateway.url, timeout=10) as http:
        for groups in ("auditors", ["auditors", 1], {"auditors": True}):
            bad = {**ACCEPT, "Authorization": f"Bearer {gateway.jwt(groups=groups)}"}
            assert (await http.post("/mcp", json=INIT, headers=bad)).status_code == 401, groups
        good = {**ACCEPT, "Authorization": f"Bearer {gateway.jwt()}"}
        assert (await http.post("/mcp", json=INIT, headers=good)).status_code == 200


async def test_another_identitys_session_is_not_found(gateway: Gateway) -> None:
    async with httpx2.AsyncClient(base_url=gateway.url, timeout=10) as http:
        alice = {**ACCEPT, "Authorization": f"Bearer {TOKENS['alice']}"}
        opened = await http.post("/mcp", json=INIT, headers=alice)
        session = opened.headers["mcp-session-id"]
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
        bob = {**ACCEPT, "Authorization": f"Bearer {TOKENS['bob']}", "Mcp-Session-Id": session}
        stolen = await http.post("/mcp", json=listing, headers=bob)
        unknown = await http.post("/mcp", json=listing, headers={**bob, "Mcp-Session-Id": "0" * 32})
        assert stolen.status_code == unknown.status_code == 404
        assert stolen.text == unknown.text  # the same answer as for no such session
        own = await http.post("/mcp", json=listing, headers={**alice, "Mcp-Session-Id": session})
        assert own.status_code in (200, 202)


async def test_sse_clients_are_identified_too(gateway: Gateway) -> None:
    headers = {"Authorization": f"Bearer {TOKENS['bob']}"}
    transport = sse_client(f"{gateway.url}/sse", headers=headers)
    async with Client(transport, mode="legacy", cache=None) as bob:
        names, _ = await seen(bob, gateway.profile)
    assert names == BOB_ONLY


@pytest.mark.parametrize("gateway", ["gateway"], indirect=True)  # tool_view's artifacts
async def test_artifacts_stay_with_their_identity(gateway: Gateway) -> None:
    async with connect(gateway, TOKENS["admin"]) as admin:
        big = (await fixture_ids(admin, "gateway"))["big_text"]
    async with connect(gateway, TOKENS["bob"]) as bob:
        envelope = (await bob.call_tool("tool_execute", {"tool_id": big})).structured_content
        handle = envelope["artifacts"][0]["handle"]
        mine = await bob.call_tool("tool_view", {"handle": handle, "selector": "lines:1-2"})
        assert mine.is_error is False and mine.structured_content["content"].startswith("line")
    async with connect(gateway, TOKENS["alice"]) as alice:
        theirs = await alice.call_tool("tool_view", {"handle": handle})
        absent = await alice.call_tool("tool_view", {"handle": "art_0000000000000000"})
    assert theirs.is_error and theirs.structured_content["error"] == "VIEW_FAILED"
    shown = theirs.structured_content["message"].replace(handle, "H")
    assert shown == absent.structured_content["message"].replace("art_0000000000000000", "H")


@pytest.mark.parametrize("gateway", ["transparent"], indirect=True)  # its list changes
async def test_list_changed_reaches_only_the_identity_whose_catalog_changed(
    gateway: Gateway,
) -> None:
    told = {"alice": anyio.Event(), "bob": anyio.Event()}

    def handler(who: str) -> Any:
        async def on_message(message: Any) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                told[who].set()

        return on_message

    async with (
        connect(gateway, TOKENS["alice"], "legacy", message_handler=handler("alice")) as alice,
        connect(gateway, TOKENS["bob"], "legacy", message_handler=handler("bob")) as bob,
    ):
        await bob.list_tools()
        listed = await listed_ids(alice)
        add = next(wire for wire, tool_id in listed.items() if name_of(tool_id) == "add_tool")
        await alice.call_tool("tool_execute", {"tool_id": add})  # adds a tool bob may not see
        with anyio.fail_after(10):
            await told["alice"].wait()
        with anyio.move_on_after(2):
            await told["bob"].wait()
        assert not told["bob"].is_set()
        assert {name_of(i) for i in (await listed_ids(bob)).values()} == BOB_ONLY


async def test_over_stdio_the_identity_is_the_configs(tmp_path: Path) -> None:
    config = write_config(tmp_path, "search", call_log=tmp_path / "calls.jsonl")
    body = json.loads(config.read_text())
    body["gateway"]["access"], _ = access_block(tmp_path)
    config.write_text(json.dumps(body))
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "gatespec.cli", "serve", "--config", str(config)],
        env={**os.environ, "BOB_TOKEN": TOKENS["bob"]},
    )
    async with Client(params, cache=None) as client:
        hits = (await client.call_tool("search", {})).structured_content["hits"]
    assert {h["operation"].rsplit("/", 1)[1] for h in hits} == BOB_ONLY


def test_tool_ids_of_the_expectations_parse() -> None:
    with pytest.raises(GatewayError):
        name_of("not an id")
