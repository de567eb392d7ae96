"""AccessControl and config parsing."""

import pytest

from switchyard.access import AccessControl, bearer_token
from switchyard.config import ConfigError, parse_config


def _cfg(**extra):
    return parse_config({"mcpServers": {"fs": {"command": "x"}}, **extra})


def test_tokens_identify_callers_and_globs_restrict():
    access = AccessControl(_cfg(identities={
        "admin": {"token": "t-admin"},
        "reader": {"tokens": ["t-r1", "t-r2"], "allow": ["/fs/read*", "/db/*"]},
    }))
    admin = access.authenticate("t-admin")
    reader = access.authenticate("t-r2")
    assert admin.name == "admin" and reader.name == "reader"
    assert access.authenticate("nope") is None and access.authenticate(None) is None
    assert access.check(admin, "/anything/at/all")
    assert access.check(reader, "/fs/readFile") and access.check(reader, "/db/query")
    assert not access.check(reader, "/fs/writeFile")


def test_stdio_identity_default_and_configured():
    assert AccessControl(_cfg()).stdio_identity.allow is None
    access = AccessControl(_cfg(identities={"r": {"token": "t", "allow": ["/fs/*"]}}, stdioIdentity="r"))
    assert access.stdio_identity.name == "r"


def test_bearer_header_parsing():
    assert bearer_token("Bearer abc") == "abc"
    assert bearer_token("bearer abc ") == "abc"
    assert bearer_token("Basic abc") is None
    assert bearer_token("Bearer ") is None
    assert bearer_token(None) is None


def test_config_errors():
    with pytest.raises(ConfigError):
        parse_config({})
    with pytest.raises(ConfigError):
        parse_config({"mcpServers": {"a": {"command": "x", "url": "http://y"}}})
    with pytest.raises(ConfigError):
        parse_config({"mcpServers": {"a": {"url": "ftp://y"}}})
    with pytest.raises(ConfigError):
        _cfg(identities={"a": {"token": "same"}, "b": {"token": "same"}})
    with pytest.raises(ConfigError):
        _cfg(stdioIdentity="ghost")
    with pytest.raises(ConfigError):
        _cfg(defaultTimeout=0)


def test_server_keys_that_cannot_be_namespaces_are_skipped_not_fatal():
    cfg = parse_config({"mcpServers": {"ok_key": {"command": "x"}, "bad__key": {"command": "x"},
                                       "trailing_": {"command": "x"}, "a/b": {"command": "x"}}})
    assert list(cfg.servers) == ["ok_key"]
    assert set(cfg.rejected_servers) == {"bad__key", "trailing_", "a/b"}


def test_defaults():
    cfg = _cfg()
    assert cfg.default_timeout == 30.0 and cfg.max_batch == 50 and cfg.identities == {}
