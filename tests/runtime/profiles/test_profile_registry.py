"""The profile registry (gatespec.profiles.registry): one row per profile the spec defines,
each naming its runtime, its MCP server and what it ranks and lists."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from gatespec.config import load_config
from gatespec.profiles import registry
from gatespec.profiles.aggregate.runtime import AggregateRuntime
from gatespec.profiles.aggregate.server import AggregateServer
from gatespec.runtime import ProxyRuntime
from gatespec_surface import PROFILE_NAMES
from gatespec_surface.descriptors import PROFILES as SPEC_PROFILES


def test_the_rows_are_the_spec_profiles_in_its_order() -> None:
    assert tuple(registry.PROFILES) == PROFILE_NAMES
    assert registry.SERVED == PROFILE_NAMES


def test_an_unknown_profile_is_a_typed_error() -> None:
    with pytest.raises(registry.UnknownProfile, match="'hub' is not served"):
        registry.profile_named("hub")


def test_the_profiles_with_meta_tools_rank_and_the_namespaced_one_lists_compactly() -> None:
    # profiles.yaml: the meta-tool profiles serve a ranked catalog; seed 001's compact
    # listTools is the aggregate registry's, the profile whose tools/list is namespaced.
    for name, row in registry.PROFILES.items():
        assert row.ranks is bool(SPEC_PROFILES[name].meta_tools), name
    compact = registry.compact_lister()
    assert SPEC_PROFILES[compact.name].lists_upstream_tools == "namespaced"
    assert "001" in SPEC_PROFILES[compact.name].seeds
    assert [r.name for r in registry.PROFILES.values() if r.compact_listing] == [compact.name]


def test_each_row_builds_its_runtime_and_server(tmp_path: Path) -> None:
    config_file = tmp_path / "servers.json"
    config_file.write_text('{"mcpServers": {}}')
    config = load_config(str(config_file))

    async def build(name: str) -> tuple[Any, Any]:
        row = registry.profile_named(name)
        runtime = row.runtime(config, name)
        try:
            await runtime.start()
            return runtime, registry.build_server(runtime, fallback_session="t")
        finally:
            await runtime.aclose()

    for name in PROFILE_NAMES:
        runtime, server = anyio.run(build, name)
        assert runtime.profile == name
        assert server.fallback_session == "t"
        if SPEC_PROFILES[name].meta_tools:
            assert isinstance(runtime, ProxyRuntime)
            assert server.handlers.names == SPEC_PROFILES[name].meta_tools
        else:
            assert isinstance(runtime, AggregateRuntime)
            assert isinstance(server, AggregateServer)


def test_the_registry_and_the_cli_load_without_the_mcp_sdk() -> None:
    # The CLI checks --profile before the SDK is imported (gatespec.spawn overlaps the two).
    code = "import sys, gatespec.cli; assert not [m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')], 'mcp imported'"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
