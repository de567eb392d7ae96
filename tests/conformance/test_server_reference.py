"""Layer 2 against gatespec itself: every check passes in both profiles, over stdio and over
Streamable HTTP, and with cache_stable; the fixture upstream, placeholders, selection and
expected-failure scoping behave as documented."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from gatespec.upstream._sdk import raw_request
from gatespec_conformance import cli
from gatespec_conformance.fixtures.catalog import ECHO, FIXTURE_TOOLS
from gatespec_conformance.fixtures.upstream import fixture_argv
from gatespec_conformance.live import run as sv
from gatespec_conformance.live.surface import semantic_schema
from gatespec_conformance.live.truncation_judge import truncation_findings
from gatespec_conformance.report import Selector
from gatespec_surface.budgets import CLUSTER_THRESHOLD
from gatespec_surface.grammars import is_name
from tests.conformance.mutants.harness import (
    access_config,
    aggregate_argv,
    families,
    http_gatespec,
    outcomes,
    run_kit,
    serve_argv,
    write_config,
)

pytestmark = pytest.mark.timeout(180)


def every_family(profile: str) -> set[str]:
    return {f.key for f in sv.all_families() if profile in f.profiles}


def assert_clean(status: int, report: dict) -> None:
    failed = [(c["name"], c.get("reason")) for c in outcomes(report, "fail")]
    assert failed == [] and status == 0 and report["ok"]
    assert outcomes(report, "expected-failure") == [] and report["stale"] == []
    assert report["info"]["implementation"].startswith("gatespec ")


# ------------------------------------------------------------------ gatespec passes


@pytest.mark.parametrize("profile", ["gateway", "transparent", "search"])
def test_gatespec_passes_over_stdio(tmp_path: Path, profile: str) -> None:
    config = write_config(tmp_path, profile)
    junit = tmp_path / "junit.xml"
    status, report = run_kit(
        tmp_path,
        profile,
        command=serve_argv(config),
        options=["--junit", str(junit)],
        sizes="1,21",
    )
    assert_clean(status, report)
    sized = {c["name"] for c in report["checks"] if "/tools=" in c["name"]}
    if profile == "gateway":  # the size-dependent families ran on fixtures of 1 and 21 tools
        assert "server/gateway/browse/root/tools=1" in sized
        assert any(n.startswith("server/gateway/browse/walk/tools=21/") for n in sized)
    else:
        assert sized == set()
    assert families(report) == every_family(profile)
    skipped = {c["name"] for c in outcomes(report, "skip")}
    # not started with cache_stable; names AM-NAME-MAPPING maps are listed, not excluded;
    # identities are checked over HTTP (test_server_mutants.py runs the access families)
    assert all(
        "/cache-stable/" in n or "/catalog/excluded/" in n or "/access/" in n for n in skipped
    )
    must = [c for c in report["checks"] if c["level"].startswith("MUST")]
    assert len(must) > (20 if profile == "search" else 200)
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("name") == "server"
    assert suite.get("failures") == "0"


def test_gatespec_passes_with_cache_stable_over_stdio(tmp_path: Path) -> None:
    # A full run: every other family must also hold on a cache-stable session.
    config = write_config(tmp_path, "gateway", cache_stable=True)
    status, report = run_kit(
        tmp_path, "gateway", command=serve_argv(config), options=["--cache-stable"]
    )
    assert_clean(status, report)
    passed = {"/".join(c["name"].split("/")[2:4]) for c in outcomes(report, "pass")}
    assert passed >= {
        "cache-stable/first-browse",
        "cache-stable/all-new",
        "cache-stable/mixed",
        "cache-stable/frozen",
        "cache-stable/all-seen",
    }
    skipped = {"/".join(c["name"].split("/")[2:4]) for c in outcomes(report, "skip")}
    skipped.discard("catalog/excluded")  # a spec with AM-NAME-MAPPING lists them, mapped
    skipped = {s for s in skipped if not s.startswith("access/")}  # identities: over HTTP
    assert skipped == {"cache-stable/off", "browse/order"}  # §5 replaces §2.5 ordering


@pytest.fixture(scope="module")
def http_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """One gatespec gateway over HTTP for the tests below (the user starts it; --url)."""
    with http_gatespec(tmp_path_factory.mktemp("http"), "gateway") as served:
        yield served


def test_gatespec_gateway_passes_over_http(tmp_path: Path, http_gateway: tuple) -> None:
    url, call_log = http_gateway
    status, report = run_kit(
        tmp_path,
        "gateway",
        options=["--url", url, "--call-log", str(call_log)],
    )
    assert_clean(status, report)
    assert families(report) == every_family("gateway")
    assert report["info"]["protocol"] == "2026-07-28"  # sessionless Streamable HTTP
    assert json.loads(call_log.read_text().splitlines()[0])["name"]  # the fixture logged calls


# Every transparent family passes over stdio above; the handshake-era HTTP transport has its
# own faster tests (tests/runtime/server/test_server_transports.py): `make test-slow`.
@pytest.mark.slow
def test_gatespec_transparent_passes_over_http_in_the_handshake_era(tmp_path: Path) -> None:
    with http_gatespec(tmp_path, "transparent") as (url, call_log):
        status, report = run_kit(
            tmp_path,
            "transparent",
            options=["--url", url, "--call-log", str(call_log), "--protocol", "legacy"],
        )
    assert_clean(status, report)
    assert families(report) == every_family("transparent")
    assert report["info"]["protocol"] == "2025-11-25"  # list_changed as a notification


def test_gatespec_search_passes_over_http_behind_two_identities(tmp_path: Path) -> None:
    access, identities = access_config(tmp_path)
    with http_gatespec(tmp_path, "search", access=access) as (url, call_log):
        status, report = run_kit(
            tmp_path,
            "search",
            options=["--url", url, "--call-log", str(call_log), *identities.options()],
        )
    assert_clean(status, report)
    assert families(report) == every_family("search")
    assert outcomes(report, "skip") == []  # every check ran, the access ones included


def test_without_a_call_log_upstream_proofs_are_skipped(
    tmp_path: Path, http_gateway: tuple
) -> None:
    url, _ = http_gateway
    status, report = run_kit(
        tmp_path, "gateway", options=["--url", url], select=["server/*/execute/args-*"]
    )
    assert status == 0
    skipped = outcomes(report, "skip")
    assert skipped and all("no call log" in c["reason"] for c in skipped)
    assert any("--call-log" in n for n in report["notes"])


def test_a_connect_failure_keeps_the_iuts_stderr(tmp_path: Path) -> None:
    status, report = run_kit(
        tmp_path,
        "gateway",
        command=["sh", "-c", "echo BOOM >&2; exit 3"],
        select=["server/gateway/surface/handshake"],
    )
    assert status == 1
    (failed,) = outcomes(report, "fail")
    assert "cannot connect" in failed["reason"] and "its stderr ends: BOOM" in failed["reason"]


# ------------------------------------------------------------------ expected failures


def test_expected_failure_entries_are_scoped_to_the_profile_and_the_run(tmp_path: Path) -> None:
    config = write_config(tmp_path, "transparent")
    listed = (
        "server/gateway/cards/banned/*   # another profile: left alone\n"
        + "server/transparent/hydrate/*   # deselected below: neither confirmed nor stale\n"
        + "server/transparent/surface/meta-tools   # passes: stale\n"
        + "server/transparent/no-such-family/*   # matches nothing: stale\n"
    )
    status, report = run_kit(
        tmp_path,
        "transparent",
        command=serve_argv(config),
        select=["server/transparent/surface/*"],
        expected_failures=listed,
    )
    assert status == 1
    assert {s["pattern"] for s in report["stale"]} == {
        "server/transparent/surface/meta-tools",
        "server/transparent/no-such-family/*",
    }


# ------------------------------------------------------------------ command line


def test_placeholders_and_environment(tmp_path: Path) -> None:
    files = sv.fixture_files(tmp_path)
    argv = sv.expand_command(
        ["{python}", "gw", "--upstream", "{fixture_command}", "--log={call_log}", "{mcp_config}"],
        files,
    )
    assert argv[3].endswith(f"--call-log {files.call_log}") and "fixtures.upstream" in argv[3]
    assert argv[4] == f"--log={files.call_log}" and argv[5] == str(files.mcp_config)
    config = json.loads(files.mcp_config.read_text())
    entry = config["mcpServers"][sv.FIXTURE_KEY]
    assert [entry["command"], *entry["args"]] == fixture_argv(files.call_log)
    env = files.env()
    assert json.loads(env[sv.ENV_FIXTURE_ARGV]) == files.argv
    assert env[sv.ENV_CALL_LOG] == str(files.call_log)
    assert sv.expand_command(['{"a": {x}}'], files) == ['{"a": {x}}']  # other braces stay


def test_list_needs_no_iut_and_names_requirements(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["server", "--profile", "gateway", "--list", "--max-examples", "2"]
    assert cli.main([*argv, "--select", "ERROR-PATH-INVALID"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines and all(
        "ERROR-PATH-INVALID (MUST, amended by AM-FULLMATCH)" in line for line in lines
    )
    assert any(line.startswith("server/gateway/browse/path-invalid/0002\t") for line in lines)
    assert any("/vectors/paths/" in line for line in lines)


@pytest.mark.parametrize(
    "extra",
    [
        ["--profile", "nosuch"],
        ["--profile", "gateway", "--select", "server/gateway/nothing-here"],
        ["--profile", "gateway", "--url", "http://127.0.0.1:9/mcp", "--", "x"],
        ["--profile", "gateway", "--protocol", "2024-11-05"],
    ],
)
def test_usage_errors(extra: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["server", *extra]) == 2
    assert "gatespec-conformance: error:" in capsys.readouterr().err


def test_selection_runs_families_whose_case_names_may_match() -> None:
    keys = lambda *p: {f.key for f in sv.plan("gateway", Selector(p))}  # noqa: E731
    assert keys("server/gateway/cards/budget/fixture:echo*") == {"cards/budget"}
    assert keys("server/gateway/cards/*") >= {"cards/budget", "cards/fields", "cards/banned"}
    assert keys("VIEW-DRILLDOWN") >= {"view/text", "view/misses"}
    assert keys("server/transparent/*") == set()
    assert keys("server/*/surface/handshake") == {"surface/handshake"}
    assert keys("server/gateway/c?rds/b[a-z]dget/*") == {"cards/budget"}
    assert keys("*/cache-stable/*") == {f.key for f in sv.plan("gateway", Selector())
                                        if f.key.startswith("cache-stable/")}  # fmt: skip


# ------------------------------------------------------------------ the fixture and judges


def test_fixture_catalog_is_adversarial_as_documented() -> None:
    admitted = [t for t in FIXTURE_TOOLS if t.expect == "admit"]
    assert len(admitted) > CLUSTER_THRESHOLD
    assert len({t.name for t in FIXTURE_TOOLS}) == len(FIXTURE_TOOLS)
    assert {"read_file", "read-file", "readFile", "read.file"} <= {t.name for t in admitted}
    bad_names = [t.name for t in FIXTURE_TOOLS if not is_name(t.name)]
    assert len(bad_names) == 3 and all(
        t.expect == "exclude" for t in FIXTURE_TOOLS if t.name in bad_names
    )


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_fixture_upstream_serves_raw_entries_logs_calls_and_announces(
    tmp_path: Path, mode: str
) -> None:
    log = tmp_path / "calls.jsonl"
    argv = fixture_argv(log)
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=sv.fixture_env())
    changed = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    # Raw requests, as gatespec's upstream layer sends them: the SDK's typed tools/list (which
    # its call_tool runs to validate results) rejects the whole page of malformed entries.
    async def session() -> tuple[list[dict], list[dict], dict]:
        async with Client(params, mode=mode, cache=None, message_handler=on_message) as client:
            s = client.session
            before = (await raw_request(s, "tools/list", {}))["tools"]
            echo = {"name": ECHO, "arguments": {"text": "hi", "times": 2}}
            echoed = await raw_request(s, "tools/call", echo)
            add = {"name": "add_tool", "arguments": {}}
            if mode == "legacy":
                await raw_request(s, "tools/call", add)
                with anyio.fail_after(10):
                    await changed.wait()
            else:
                async with client.listen(tools_list_changed=True) as events:
                    await raw_request(s, "tools/call", add)
                    with anyio.fail_after(10):
                        await events.__anext__()
            after = (await raw_request(s, "tools/list", {}))["tools"]
            return before, after, echoed

    before, after, echo = anyio.run(session)
    assert before == [t.wire() for t in FIXTURE_TOOLS]  # malformed entries sent verbatim
    assert next(t for t in before if t["name"] == "schema_is_a_list")["inputSchema"] == []
    assert [t["name"] for t in after[len(before) :]] == ["added_1"]
    assert echo["content"][0]["text"] == "hi hi"
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(c["name"], c["arguments"]) for c in logged] == [
        (ECHO, {"text": "hi", "times": 2}),
        ("add_tool", {}),
    ]
    assert all(isinstance(c["ts"], float) for c in logged)


def test_fixture_add_tool_after_announces_on_a_timer() -> None:
    # The handshake-era path outside any request (the per-request session objects are gone).
    argv = [*fixture_argv(), "--add-tool-after", "1"]
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=sv.fixture_env())
    changed = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async def session() -> list[str]:
        async with Client(params, mode="legacy", cache=None, message_handler=on_message) as c:
            await raw_request(c.session, "tools/list", {})
            with anyio.fail_after(10):
                await changed.wait()
            return [t["name"] for t in (await raw_request(c.session, "tools/list", {}))["tools"]]

    assert anyio.run(session)[-1] == "added_1"


def causes(full: str, shown: str, level: str = "spec") -> list[str]:
    return [f.rule.cause for f in truncation_findings(full, shown, level)]


def test_truncation_judge() -> None:
    full = "First sentence here. Second one, e.g. longer! Third?"
    assert causes(full, full) == []
    assert causes(full, "First sentence here.") == []
    # AM-SENTENCE-ENDS: "." before white space ends a sentence, even in "e.g. longer".
    assert causes(full, "First sentence here. Second one, e.g.") == []
    assert causes("A b. " + "word " * 60, "A b.") == []
    assert causes("word " * 80, "word word word…") == []
    assert causes(full, "First sentence here. Second…") != []  # one fits
    assert causes(full, "Second one") != []
    assert causes("Writes report.txt files.", "Writes report.") != []
    assert causes("a\nb", "a\nb") == ["the description holds a line break"]


def test_truncation_judge_at_the_seed_level() -> None:
    # §2.4 as written: any "." ends a candidate prefix, so "report." is a cut the seed allows
    # and the spec does not (AM-SENTENCE-ENDS); either level names the amendment.
    full = "Writes report.txt files for the whole quarter and more."
    seed = truncation_findings(full, "Writes report.", "seed")
    assert seed == []
    spec = truncation_findings(full, "Writes report.", "spec")
    assert spec and "AM-SENTENCE-ENDS" in spec[0].rule.amended_by
    cjk = "从工作区读取文件。文件路径必须是相对路径。"
    found = truncation_findings(cjk, "从工作区读取文件。", "seed")
    assert found and found[0].rule.levels == frozenset({"seed"})
    assert "AM-SENTENCE-ENDS" in found[0].rule.amended_by


def test_semantic_schema_ignores_annotations_and_required_order() -> None:
    a = {"type": "object", "description": "x", "properties": {"title": {"type": "string"}},
         "required": ["b", "a"]}  # fmt: skip
    b = {"type": "object", "properties": {"title": {"type": "string", "title": "t"}},
         "required": ["a", "b"]}  # fmt: skip
    assert semantic_schema(a) == semantic_schema(b)
    assert semantic_schema({"properties": {"title": {}}}) == {"properties": {"title": {}}}


# ------------------------------------------------------------------ the aggregate profile


def test_gatespec_aggregate_passes_over_stdio(tmp_path: Path) -> None:
    """Every aggregate family, the registry change included (the kit wrote the config)."""
    status, report = run_kit(tmp_path, "aggregate")  # no COMMAND: gatespec itself
    assert_clean(status, report)
    assert {c["name"].split("/")[2] for c in report["checks"]} == every_family("aggregate")
    passed = {c["name"] for c in outcomes(report, "pass")}
    assert "server/aggregate/list-changed/registry" in passed
    assert outcomes(report, "skip") == []


@pytest.mark.slow
@pytest.mark.parametrize("level", ["spec", "seed"])
def test_gatespec_aggregate_passes_in_the_handshake_era(tmp_path: Path, level: str) -> None:
    command = aggregate_argv()  # from the kit's own {mcp_config}
    status, report = run_kit(
        tmp_path, "aggregate", command=command, options=["--protocol", "legacy", "--level", level]
    )
    assert_clean(status, report)
    assert report["info"]["protocol"] == "2025-11-25"
    skipped = {"/".join(c["name"].split("/")[2:4]) for c in outcomes(report, "skip")}
    # the seed level leaves out what only an amendment states (a config edit adding and
    # removing servers is AM-REGISTRY-RELOAD's)
    assert skipped <= (
        {"resources", "broadcast-partial", "cancellation", "list-changed/registry"}
        if level == "seed"
        else set()
    )
