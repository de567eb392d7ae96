"""Config loader: the ecosystem's mcpServers documents (JSON and YAML) plus gateway options."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gatespec.config import (
    ConfigError,
    GatewayConfig,
    GatewayOptions,
    ServerConfig,
    expand_env,
    load_config,
    parse_config,
)


def write_json(tmp_path: Path, data: Any, name: str = "mcp.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def load_error(tmp_path: Path, data: Any, environ: dict[str, str] | None = None) -> ConfigError:
    path = write_json(tmp_path, data)
    with pytest.raises(ConfigError) as info:
        load_config(path, environ=environ or {})
    assert str(path) in str(info.value), "the message must name the file"
    return info.value


# -- valid documents ---------------------------------------------------------------------------


def test_claude_desktop_style_json(tmp_path: Path) -> None:
    (tmp_path / "srv").mkdir()
    path = write_json(
        tmp_path,
        {
            "mcpServers": {
                "fs": {
                    "command": "npx",
                    "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
                    "env": {"DEBUG": "1"},
                    "cwd": "srv",
                    "timeout": 12,
                },
                "remote": {
                    "type": "http",
                    "url": "https://example.com/mcp",
                    "headers": {"Authorization": "Bearer abc"},
                },
                "legacy": {"type": "sse", "url": "http://127.0.0.1:3001/sse"},
                "fake": {"type": "stub", "catalog": "catalog.json", "server": "github"},
            },
            "globalShortcut": "Ctrl+Space",  # other clients' settings are left alone
        },
    )
    config = load_config(path, environ={})
    assert isinstance(config, GatewayConfig)
    assert config.source == path
    assert list(config.servers) == ["fs", "remote", "legacy", "fake"]  # file order
    fs = config.servers["fs"]
    assert fs == ServerConfig(
        key="fs",
        transport="stdio",
        command="npx",
        args=("-y", "@modelcontextprotocol/server-filesystem", "/tmp"),
        env={"DEBUG": "1"},
        cwd=tmp_path / "srv",
        timeout=12.0,
    )
    remote = config.servers["remote"]
    assert (remote.transport, remote.url) == ("http", "https://example.com/mcp")
    assert remote.headers == {"Authorization": "Bearer abc"}
    assert config.servers["legacy"].transport == "sse"
    fake = config.servers["fake"]
    assert (fake.transport, fake.catalog, fake.catalog_server) == (
        "stub",
        tmp_path / "catalog.json",
        "github",
    )
    assert config.options == GatewayOptions()
    assert config.call_timeout_for("fs") == 12.0
    assert config.call_timeout_for("remote") == 30.0


def test_gateway_options_defaults_and_overrides(tmp_path: Path) -> None:
    defaults = parse_config({"mcpServers": {}}).options
    assert defaults == GatewayOptions(
        profile="gateway",
        transport="stdio",
        host="127.0.0.1",
        port=8765,
        call_timeout=30.0,
        connect_timeout=20.0,
        cache_stable=False,
    )
    options = parse_config(
        {
            "mcpServers": {},
            "gateway": {
                "profile": "aggregate",
                "transport": "http",
                "host": "0.0.0.0",
                "port": 9000,
                "call_timeout": 5,
                "connect_timeout": 2.5,
                "cache_stable": True,
            },
        }
    ).options
    assert options == GatewayOptions("aggregate", "http", "0.0.0.0", 9000, 5.0, 2.5, True)


@pytest.mark.parametrize("suffix", [".yaml", ".yml"])
def test_yaml_document(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"gateway{suffix}"
    path.write_text(
        "mcpServers:\n"
        "  time:\n"
        "    command: mcp-server-time\n"
        "    args: [--local-timezone, UTC]\n"
        "  api:\n"
        "    url: http://127.0.0.1:8000/mcp\n"
        "gateway:\n"
        "  mode: search\n"
        "  port: 8800\n",
        encoding="utf-8",
    )
    config = load_config(path, environ={})
    assert config.servers["time"].args == ("--local-timezone", "UTC")
    assert config.servers["api"].transport == "http"
    assert (config.options.profile, config.options.port) == ("search", 8800)


def test_mode_is_the_old_name_of_profile() -> None:
    """`gateway.mode` (before 0.2) still works; giving both names is an error naming them."""
    options = parse_config({"mcpServers": {}, "gateway": {"mode": "transparent"}}).options
    assert options.profile == "transparent"
    with pytest.raises(ConfigError, match="profile or its old name mode"):
        parse_config({"mcpServers": {}, "gateway": {"mode": "gateway", "profile": "gateway"}})


def test_type_inference_and_aliases() -> None:
    servers = parse_config(
        {
            "mcpServers": {
                "a": {"url": "http://h/mcp"},
                "b": {"url": "http://h/sse"},
                "c": {"url": "http://h/sse/?x=1"},
                "d": {"type": "streamable-http", "url": "http://h/mcp"},
                "e": {"type": "streamableHttp", "url": "http://h/mcp"},
                "f": {"transport": "sse", "url": "http://h/events"},
                "g": {"type": "stdio", "command": "x"},
            }
        }
    ).servers
    assert {k: s.transport for k, s in servers.items()} == {
        "a": "http",
        "b": "sse",
        "c": "sse",
        "d": "http",
        "e": "http",
        "f": "sse",
        "g": "stdio",
    }


def test_disabled_and_harmless_keys() -> None:
    servers = parse_config(
        {
            "mcpServers": {
                "off": {"command": "x", "disabled": True},
                "on": {
                    "command": "y",
                    "disabled": False,
                    "autoApprove": ["read"],
                    "alwaysAllow": [],
                    "description": "kept server",
                },
            }
        }
    ).servers
    assert list(servers) == ["on"]


def test_keys_are_kept_verbatim() -> None:
    servers = parse_config({"mcpServers": {"My Server.v2:x": {"command": "x"}}}).servers
    assert list(servers) == ["My Server.v2:x"]
    assert servers["My Server.v2:x"].key == "My Server.v2:x"


# -- environment expansion ---------------------------------------------------------------------


def test_env_expansion_everywhere(tmp_path: Path) -> None:
    environ = {"TOKEN": "s3cret", "ROOT": "/data", "EMPTY": "", "PORT": "9100"}
    config = parse_config(
        {
            "mcpServers": {
                "fs": {
                    "command": "${ROOT}/bin/server",
                    "args": ["--root=${ROOT}", "${MISSING:-fallback}", "${EMPTY:-was-empty}"],
                    "env": {"API_TOKEN": "${TOKEN}"},
                },
                "api": {
                    "url": "https://${HOST:-example.com}/mcp",
                    "headers": {"Authorization": "Bearer ${TOKEN}"},
                },
            },
            "gateway": {"port": "${PORT}", "call_timeout": "${CALL:-7.5}"},
        },
        environ=environ,
    )
    fs = config.servers["fs"]
    assert fs.command == "/data/bin/server"
    assert fs.args == ("--root=/data", "fallback", "was-empty")
    assert fs.env == {"API_TOKEN": "s3cret"}
    api = config.servers["api"]
    assert api.url == "https://example.com/mcp"
    assert api.headers == {"Authorization": "Bearer s3cret"}
    assert (config.options.port, config.options.call_timeout) == (9100, 7.5)


def test_env_expansion_uses_os_environ_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GATESPEC_TEST_CMD", "from-os-environ")
    config = parse_config({"mcpServers": {"x": {"command": "${GATESPEC_TEST_CMD}"}}})
    assert config.servers["x"].command == "from-os-environ"


def test_unset_variable_names_it_and_the_key(tmp_path: Path) -> None:
    error = load_error(
        tmp_path, {"mcpServers": {"api": {"url": "http://h/mcp", "headers": {"X": "${NOPE}"}}}}
    )
    assert error.path == "mcpServers.api.headers.X"
    assert "NOPE" in str(error) and "mcpServers.api.headers.X" in str(error)


def test_expand_env_direct() -> None:
    assert expand_env("a${X}b${Y:-y}c", {"X": "1"}) == "a1byc"
    assert expand_env("$X and ${X", {"X": "1"}) == "$X and ${X"  # only ${NAME} forms expand
    assert expand_env("${E}", {"E": ""}) == ""
    with pytest.raises(ConfigError, match="U is not set"):
        expand_env("${U}", {})


# -- errors name the file, the key path and the problem ----------------------------------------


@pytest.mark.parametrize(
    ("servers", "path", "problem"),
    [
        ({"fs": {"command": "x", "args": ["a", "b", 3]}}, "mcpServers.fs.args[2]", "string"),
        ({"fs": {"command": "x", "args": "a b"}}, "mcpServers.fs.args", "array"),
        ({"fs": {"command": 5}}, "mcpServers.fs.command", "string"),
        ({"fs": {"command": ""}}, "mcpServers.fs.command", "empty"),
        ({"fs": {"command": "x", "env": {"DEBUG": 1}}}, "mcpServers.fs.env.DEBUG", "string"),
        ({"fs": {"command": "x", "env": ["A=1"]}}, "mcpServers.fs.env", "object"),
        ({"fs": {"command": "x", "comand": "y"}}, "mcpServers.fs.comand", "unknown key"),
        ({"fs": {"command": "x", "envFile": ".env"}}, "mcpServers.fs.envFile", "unknown key"),
        ({"fs": {}}, "mcpServers.fs", "missing command"),
        ({"fs": {"args": ["x"]}}, "mcpServers.fs", "missing command"),
        ({"fs": {"command": "x", "url": "http://h/mcp"}}, "mcpServers.fs", "both command and url"),
        ({"fs": {"type": "websocket", "url": "ws://h"}}, "mcpServers.fs.type", "unknown type"),
        ({"fs": {"type": "stdio"}}, "mcpServers.fs.command", "missing"),
        ({"fs": {"type": "http"}}, "mcpServers.fs.url", "missing"),
        ({"fs": {"type": "http", "url": "http://h/mcp", "env": {}}}, "mcpServers.fs.env", "stdio"),
        ({"fs": {"command": "x", "headers": {}}}, "mcpServers.fs.headers", "not valid"),
        ({"fs": {"type": "sse", "url": "ftp://h/sse"}}, "mcpServers.fs.url", "http"),
        ({"fs": {"url": "http://h/mcp", "headers": {"A": 1}}}, "mcpServers.fs.headers.A", "string"),
        ({"fs": {"type": "stub"}}, "mcpServers.fs.catalog", "missing"),
        ({"fs": {"command": "x", "timeout": -1}}, "mcpServers.fs.timeout", "positive"),
        ({"fs": {"command": "x", "timeout": "soon"}}, "mcpServers.fs.timeout", "number"),
        ({"fs": {"command": "x", "timeout": True}}, "mcpServers.fs.timeout", "number"),
        ({"fs": {"command": "x", "disabled": "maybe"}}, "mcpServers.fs.disabled", "true or false"),
        ({"fs": {"command": "x", "type": "stdio", "transport": "stdio"}}, "mcpServers.fs", "both"),
        ({"fs": ["command", "x"]}, "mcpServers.fs", "object"),
        ({"": {"command": "x"}}, "mcpServers.''", "non-empty"),
    ],
)
def test_server_errors(tmp_path: Path, servers: dict[str, Any], path: str, problem: str) -> None:
    error = load_error(tmp_path, {"mcpServers": servers})
    assert error.path == path
    assert path in str(error)
    assert problem in error.problem


@pytest.mark.parametrize(
    ("gateway", "path", "problem"),
    [
        ({"profile": "proxy"}, "gateway.profile", "expected one of gateway, transparent"),
        ({"mode": "proxy"}, "gateway.mode", "expected one of gateway, transparent"),
        ({"transport": "sse"}, "gateway.transport", "expected one of stdio, http"),
        ({"port": 0}, "gateway.port", "1-65535"),
        ({"port": 70000}, "gateway.port", "1-65535"),
        ({"port": "eighty"}, "gateway.port", "1-65535"),
        ({"port": 80.5}, "gateway.port", "1-65535"),
        ({"port": True}, "gateway.port", "1-65535"),
        ({"call_timeout": 0}, "gateway.call_timeout", "positive"),
        ({"connect_timeout": "nan"}, "gateway.connect_timeout", "positive"),
        ({"cache_stable": "perhaps"}, "gateway.cache_stable", "true or false"),
        ({"host": 127}, "gateway.host", "string"),
        ({"cache-stable": True}, "gateway.cache-stable", "did you mean 'cache_stable'"),
    ],
)
def test_gateway_errors(tmp_path: Path, gateway: dict[str, Any], path: str, problem: str) -> None:
    error = load_error(tmp_path, {"mcpServers": {}, "gateway": gateway})
    assert error.path == path
    assert problem in error.problem


def test_document_shape_errors(tmp_path: Path) -> None:
    assert load_error(tmp_path, []).problem.startswith("expected an object at the top level")
    assert load_error(tmp_path, {"servers": {}}).path == "mcpServers"
    assert load_error(tmp_path, {"mcpServers": []}).path == "mcpServers"
    assert load_error(tmp_path, {"mcpServers": {}, "gateway": []}).path == "gateway"


def test_unknown_key_suggests_the_right_one(tmp_path: Path) -> None:
    error = load_error(tmp_path, {"mcpServers": {"x": {"command": "x", "Args": []}}})
    assert "did you mean 'args'" in str(error)


def test_invalid_json_reports_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{\n  "mcpServers": {\n    "x": {"command": "y",}\n  }\n}\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"invalid JSON at line 3") as info:
        load_config(path)
    assert str(path) in str(info.value)


def test_invalid_yaml_reports_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("mcpServers:\n  x:\n    command: [unclosed\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"invalid YAML at line \d+") as info:
        load_config(path)
    assert str(path) in str(info.value)


def test_yaml_non_string_server_key(tmp_path: Path) -> None:
    path = tmp_path / "keys.yml"
    path.write_text("mcpServers:\n  42:\n    command: x\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="non-empty string"):
        load_config(path)


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.json"
    with pytest.raises(ConfigError, match="cannot read file") as info:
        load_config(path)
    assert str(path) in str(info.value)


def test_parse_config_without_source() -> None:
    with pytest.raises(ConfigError) as info:
        parse_config({"mcpServers": {"x": {"command": 1}}}, environ={})
    assert str(info.value).startswith("<config>: mcpServers.x.command:")
    assert info.value.source is None


def test_absolute_paths_and_home_are_kept(tmp_path: Path) -> None:
    config = parse_config(
        {"mcpServers": {"s": {"type": "stub", "catalog": str(tmp_path / "c.json")}}},
        source=Path("/elsewhere/mcp.json"),
    )
    assert config.servers["s"].catalog == tmp_path / "c.json"
    home = parse_config({"mcpServers": {"x": {"command": "x", "cwd": "~"}}}).servers["x"]
    assert home.cwd == Path.home()


def test_configs_are_frozen() -> None:
    config = parse_config({"mcpServers": {"x": {"command": "x"}}})
    with pytest.raises(AttributeError):
        config.servers["x"].command = "y"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        config.options = GatewayOptions()  # type: ignore[misc]


def test_refresh_interval_zero_disables_and_negative_is_refused(tmp_path: Path) -> None:
    servers = {"fs": {"command": "x"}}
    assert parse_config({"mcpServers": servers}).options.refresh_interval == 30.0
    off = parse_config({"mcpServers": servers, "gateway": {"refresh_interval": 0}})
    assert off.options.refresh_interval == 0.0
    err = load_error(tmp_path, {"mcpServers": servers, "gateway": {"refresh_interval": -1}})
    assert "gateway.refresh_interval" in str(err) and "zero or a positive" in str(err)


def test_a_misspelt_top_level_key_is_an_error_with_a_suggestion(tmp_path: Path) -> None:
    error = load_error(tmp_path, {"mcpServers": {}, "gatway": {"profile": "search"}})
    assert error.path == "gatway"
    assert "unknown top-level key" in error.problem and "did you mean 'gateway'" in error.problem
    error = load_error(tmp_path, {"mcpServers": {}, "Gateway": {}})
    assert "did you mean 'gateway'" in error.problem


def test_another_clients_top_level_key_is_reported_not_fatal(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A file shared with a desktop client holds that client's own settings beside mcpServers.
    path = write_json(tmp_path, {"mcpServers": {}, "globalShortcut": "Ctrl+Space"})
    with caplog.at_level("WARNING", logger="gatespec.config"):
        load_config(path, environ={})
    assert "ignoring top-level key 'globalShortcut'" in caplog.text


def test_unprefixed_names_one_server_of_the_aggregate_profile(tmp_path: Path) -> None:
    """gateway.unprefixed (AM-AGGREGATE-UNPREFIXED): off by default, one configured server."""
    servers = {"everything": {"command": "x"}, "memory": {"command": "y"}}
    agg: dict[str, Any] = {"profile": "aggregate"}
    assert parse_config({"mcpServers": servers, "gateway": agg}).options.unprefixed is None
    on = parse_config({"mcpServers": servers, "gateway": {**agg, "unprefixed": "everything"}})
    assert on.options.unprefixed == "everything"
    typo = load_error(
        tmp_path, {"mcpServers": servers, "gateway": {**agg, "unprefixed": "everythin"}}
    )
    assert "gateway.unprefixed" in str(typo) and "everything" in str(typo)  # did you mean
    two = load_error(
        tmp_path, {"mcpServers": servers, "gateway": {**agg, "unprefixed": ["a", "b"]}}
    )
    assert "gateway.unprefixed" in str(two)
    other = {"profile": "gateway", "unprefixed": "memory"}
    wrong = load_error(tmp_path, {"mcpServers": servers, "gateway": other})
    assert "aggregate profile only" in str(wrong)
