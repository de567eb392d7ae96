"""The aggregate profile's fixtures serve only tool entries MCP allows, and the IUT starts the
fixture the kit reads its expectations from.

Seeds 001 and 004 say nothing about an upstream that breaks MCP; MCP's schema makes
Tool.inputSchema required and an object schema ({"type": "object", ...}), and an MCP client may
refuse a whole tools/list page holding any other entry (the official SDK's client does). A
clean-room aggregate built on that SDK lost every tool of both fixtures to the kit's three
malformed entries, and with them routing (its re-fetch on a miss failed) and list_changed (its
refresh failed). The entries stay in the gateway and transparent profiles, where seed 000's
catalog is judged on surviving them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp_types import _v2025_11_25, _v2026_07_28
from pydantic import ValidationError

import gatespec_conformance
from gatespec_conformance.fixtures.catalog import FIXTURE_TOOLS, fixture_tools
from gatespec_conformance.fixtures.rich import RELAY_TOOLS
from gatespec_conformance.live import run as sv
from gatespec_conformance.live.aggregate import AGG_SERVERS, expected_tools

# MCP's own schema of each protocol era (the SDK's wire models, generated from schema.json);
# the SDK's lenient mcp_types.Tool accepts more than MCP does.
ERAS = (_v2025_11_25, _v2026_07_28)


def _mcp_allows(entry: dict) -> bool:
    try:
        for era in ERAS:
            era.Tool.model_validate(entry)
    except ValidationError:
        return False
    return True


def test_the_aggregate_fixture_serves_only_what_mcp_allows() -> None:
    served = fixture_tools(mcp_valid_only=True)
    assert all(_mcp_allows(t.wire()) for t in served)
    left_out = {t.name for t in FIXTURE_TOOLS} - {t.name for t in served}
    # exactly the entries MCP's Tool model refuses, by the SDK's own model
    assert left_out == {t.name for t in FIXTURE_TOOLS if not _mcp_allows(t.wire())}
    assert left_out == {"not_object_schema", "schema_is_a_list", "no_input_schema"}
    # names MCP only discourages stay: the spec-level split check still has its material
    assert {"bad name", "1st_tool"} <= {t.name for t in served}
    # every tool of the other profiles' fixture is still there
    assert len(fixture_tools()) == len(served) + len(left_out)


def test_what_the_kit_expects_is_what_the_fixture_serves() -> None:
    required, optional, forbidden = expected_tools("alpha")
    served = {f"alpha__{t.name}" for t in fixture_tools(mcp_valid_only=True)}
    served |= {f"alpha__{t['name']}" for t in RELAY_TOOLS}
    assert set(required) | optional | forbidden <= served
    assert "alpha__echo" in required and "alpha__fix_listing" in required


def test_the_config_starts_the_kits_own_fixture(tmp_path: Path) -> None:
    """An IUT that starts upstreams with the SDK's clean environment still runs this kit's
    fixture: each entry carries PYTHONPATH naming where the kit was imported from."""
    files = sv.fixture_files(tmp_path, profile="aggregate")
    servers = json.loads(files.mcp_config.read_text())["mcpServers"]
    assert sorted(servers) == sorted(AGG_SERVERS)
    root = str(Path(gatespec_conformance.__file__).resolve().parents[1])
    for entry in servers.values():
        assert "--mcp-valid-only" in entry["args"] and "--rich" in entry["args"]
        assert entry["env"]["PYTHONPATH"].split(":")[0] == root
    single = json.loads(sv.fixture_files(tmp_path / "one").mcp_config.read_text())
    (entry,) = single["mcpServers"].values()
    assert "--mcp-valid-only" not in entry["args"]  # the gateway's fixture keeps every entry
    assert entry["env"]["PYTHONPATH"].split(":")[0] == root
    search = sv.fixture_files(tmp_path / "search", profile="search")
    (entry,) = json.loads(search.mcp_config.read_text())["mcpServers"].values()
    assert "--mcp-valid-only" in entry["args"] and "--mcp-valid-only" in search.argv


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("broken", ["not_object_schema", "schema_is_a_list", "no_input_schema"])
def test_a_page_holding_a_left_out_entry_is_refused_by_mcps_schema(
    era: object, broken: str
) -> None:
    """Why they are left out: MCP's result schema refuses the whole page (what the SDK client
    checks an answer against), while a page of the entries kept passes."""
    entry = next(t for t in FIXTURE_TOOLS if t.name == broken).wire()
    ok = next(t for t in FIXTURE_TOOLS if t.name == "echo").wire()
    # 2026-07-28 results carry these (the fixture's SDK server adds them)
    envelope = {"resultType": "complete", "cacheScope": "private", "ttlMs": 0}
    with pytest.raises(ValidationError, match="inputSchema"):
        era.ListToolsResult.model_validate({**envelope, "tools": [ok, entry]})  # type: ignore[attr-defined]
    kept = [t.wire() for t in fixture_tools(mcp_valid_only=True)]
    era.ListToolsResult.model_validate({**envelope, "tools": kept})  # type: ignore[attr-defined]
