"""Issue 22, never tested before: JWT key selection against a real HTTP JWKS endpoint
(gateway.access.jwt.jwks_url, gatespec.access.remote_jwks). Expected behaviour, from the
module's contract: a new key is picked up when a token names it (one refetch); an unknown kid
is refetched at most once per jwks_min_refetch, then refused; concurrent unknown kids share
one fetch; a retired key stops verifying once the set is older than jwks_max_age; a failed
fetch keeps the keys held. The endpoint counts its fetches; the gateway's clock is replaced
in-process so that intervals pass without waiting. The last test runs `gatespec serve`."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import httpx2
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from gatespec.access.config import parse_access
from gatespec.access.remote_jwks import RemoteJwks
from gatespec.config import ConfigError
from gatespec_conformance.live.access import INITIALIZE
from tests.conformance.mutants.harness import http_gatespec

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

ISSUER, AUDIENCE = "https://idp.test", "gatespec-test"


class Idp:
    """An identity provider's JWKS endpoint: keys by kid, rotated by the test."""

    def __init__(self) -> None:
        self.keys: dict[str, ec.EllipticCurvePrivateKey] = {}
        self.published: list[str] = []
        self.fetches = 0
        self.failing = False
        idp = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
                idp.fetches += 1
                if idp.failing:
                    self.send_error(500)
                    return
                body = json.dumps({"keys": [idp.jwk(kid) for kid in idp.published]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/jwks.json"

    def jwk(self, kid: str) -> dict[str, Any]:
        public = self.keys[kid].public_key()
        return {**json.loads(jwt.algorithms.ECAlgorithm.to_jwk(public)), "kid": kid, "use": "sig"}

    def publish(self, kid: str) -> None:
        self.keys.setdefault(kid, ec.generate_private_key(ec.SECP256R1()))
        self.published.append(kid)

    def retire(self, kid: str) -> None:
        self.published.remove(kid)

    def token(self, kid: str, sub: str = "carol") -> str:
        """A token signed with `kid`'s key (a made-up kid gets a key no one publishes)."""
        key = self.keys.setdefault(kid, ec.generate_private_key(ec.SECP256R1()))
        claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "exp": int(time.time()) + 300}
        return jwt.encode(claims, key, "ES256", headers={"kid": kid})


@pytest.fixture
def idp() -> Iterator[Idp]:
    provider = Idp()
    thread = threading.Thread(target=provider.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield provider
    finally:
        provider.server.shutdown()
        provider.server.server_close()


def jwt_block(idp: Idp, **extra: Any) -> dict[str, Any]:
    return {"jwks_url": idp.url, "issuer": ISSUER, "audience": AUDIENCE, **extra}


class Clock:
    now = 1000.0

    def __call__(self) -> float:
        return self.now


def verifier_with_clock(idp: Idp, **extra: Any) -> tuple[Any, Clock]:
    parsed = parse_access({"jwt": jwt_block(idp, **extra)}, None, {})
    clock = Clock()
    assert isinstance(parsed.jwt.keys, RemoteJwks)
    parsed.jwt.keys.clock = clock
    return parsed.verifier(), clock


async def accepted(verifier: Any, token: str) -> bool:
    return await verifier.verify_token(token) is not None


async def test_rotation_unknown_kids_and_the_rate_limit(idp: Idp) -> None:
    idp.publish("k1")
    verifier, clock = verifier_with_clock(idp, jwks_min_refetch=30, jwks_max_age=300)
    assert await accepted(verifier, idp.token("k1"))
    assert idp.fetches == 1
    # a new key appears; a token naming it within the interval is refused without a fetch
    idp.publish("k2")
    clock.now += 1
    assert not await accepted(verifier, idp.token("k2"))
    assert idp.fetches == 1
    # once the interval has passed, one refetch finds it
    clock.now += 30
    assert await accepted(verifier, idp.token("k2"))
    assert idp.fetches == 2
    # a flood of made-up kids right after: refused, nothing fetched
    refused: list[bool] = []
    async with anyio.create_task_group() as tg:
        for n in range(20):
            tg.start_soon(lambda n=n: _note(refused, verifier, idp.token(f"forged-{n}")))
    assert refused == [False] * 20 and idp.fetches == 2
    # after the interval, concurrent unknown kids share one fetch, and are refused
    clock.now += 31
    refused.clear()
    async with anyio.create_task_group() as tg:
        for n in range(10):
            tg.start_soon(lambda n=n: _note(refused, verifier, idp.token(f"again-{n}")))
    assert refused == [False] * 10 and idp.fetches == 3
    # the old key retires: held until the set is older than jwks_max_age, then refused
    idp.retire("k1")
    clock.now += 10
    assert await accepted(verifier, idp.token("k1")) and idp.fetches == 3
    clock.now += 300
    assert not await accepted(verifier, idp.token("k1"))
    assert idp.fetches == 4
    assert await accepted(verifier, idp.token("k2"))


async def _note(into: list[bool], verifier: Any, token: str) -> None:
    into.append(await accepted(verifier, token))


async def test_a_failed_fetch_keeps_the_keys_held(idp: Idp) -> None:
    idp.publish("k1")
    verifier, clock = verifier_with_clock(idp, jwks_min_refetch=30, jwks_max_age=300)
    assert await accepted(verifier, idp.token("k1"))
    idp.failing = True
    clock.now += 400  # stale: refetched, and the fetch fails
    assert await accepted(verifier, idp.token("k1"))
    assert idp.fetches == 2
    assert not await accepted(verifier, idp.token("k9"))  # rate-limited after the failure
    assert idp.fetches == 2


async def test_the_first_fetch_failing_refuses_every_token(idp: Idp) -> None:
    idp.publish("k1")
    idp.failing = True
    verifier, clock = verifier_with_clock(idp)
    assert not await accepted(verifier, idp.token("k1"))
    assert not await accepted(verifier, idp.token("k1"))
    assert idp.fetches == 1  # not one fetch per token
    idp.failing = False
    clock.now += 31
    assert await accepted(verifier, idp.token("k1"))


def test_a_jwks_url_must_be_https_or_loopback() -> None:
    def parse(**jwt_entry: Any) -> Any:
        return parse_access(
            {"jwt": {"issuer": ISSUER, "audience": AUDIENCE, **jwt_entry}}, None, {}
        )

    with pytest.raises(ConfigError, match="https://"):
        parse(jwks_url="http://idp.example/jwks.json")
    with pytest.raises(ConfigError, match="exactly one of"):
        parse(jwks_url="https://idp.example/jwks.json", jwks_file="jwks.json")
    with pytest.raises(ConfigError, match="only a jwks_url"):
        parse(public_key_file="k.pem", jwks_max_age=10)
    assert isinstance(parse(jwks_url="https://idp.example/j").jwt.keys, RemoteJwks)


@pytest.mark.slow  # starts gatespec serve (about 10 s on a loaded machine)
async def test_gatespec_serve_follows_a_rotation(idp: Idp, tmp_path: Path) -> None:
    """End to end: the bearer tokens of HTTP requests to a real `gatespec serve`."""
    idp.publish("k1")
    # intervals short enough that the gateway may refetch on every request
    access = {"jwt": jwt_block(idp, jwks_min_refetch=0.001, jwks_max_age=0.001)}
    with http_gatespec(tmp_path, "gateway", access=access) as (url, _):
        async with httpx2.AsyncClient(timeout=30) as http:

            async def status(token: str) -> int:
                headers = {
                    "Authorization": f"Bearer {token}",
                    "Accept": "application/json, text/event-stream",
                }
                response = await http.post(url, json=INITIALIZE, headers=headers)
                return response.status_code

            assert await status(idp.token("k1")) == 200
            assert await status(idp.token("k2")) == 401  # not published yet
            idp.publish("k2")
            assert await status(idp.token("k2")) == 200
            idp.retire("k1")
            assert await status(idp.token("k1")) == 401
            assert await status(idp.token("made-up")) == 401
