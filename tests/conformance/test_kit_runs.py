"""How a layer-2 run reports itself: an IUT that cannot start is one failure charged to no
requirement (every family skipped as not run); the progress line counts checks as the report
does; --tools N asks only queries whose answer the fixture serves; --sizes '' is accepted as
the literal quotes a quoted option passes on."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from gatespec_conformance import cli
from gatespec_conformance.report import CheckResult, Outcome, Progress
from tests.conformance.mutants.harness import outcomes, run_kit

IUT = [sys.executable, "-m", "tests.independent_gateway", "--config", "{mcp_config}"]


def test_an_iut_that_cannot_start_is_one_failure(tmp_path: Path) -> None:
    status, report = run_kit(
        tmp_path,
        "gateway",
        command=["/nonexistent/gateway-binary"],
        options=["--enforce", "must", "--startup-timeout", "10"],
    )
    (failed,) = outcomes(report, "fail")
    assert failed["name"] == "server/gateway/start" and failed["requirements"] == []
    assert "/nonexistent/gateway-binary" in str(failed["example"])
    skipped = outcomes(report, "skip")
    assert skipped and all("not run" in c["reason"] or "seed" in c["reason"] for c in skipped)
    assert status == 1  # whatever --enforce says: nothing was judged
    charged = {rid for rid, row in report["requirements"].items() if row["fail"]}
    assert charged == set()  # no requirement is charged with it (the skips count as skips)


def test_query_cases_name_only_tools_the_fixture_serves(tmp_path: Path) -> None:
    status, report = run_kit(
        tmp_path,
        "gateway",
        command=[*IUT, "--profile", "gateway"],
        options=["--level", "seed", "--tools", "10"],
        select=["server/gateway/browse/query"],
    )
    names = [c["name"] for c in report["checks"]]
    assert names == [
        "server/gateway/browse/query/read file",
        "server/gateway/browse/query/echo the text back",
    ]
    assert status == 0


def test_progress_counts_checks_as_the_report_does() -> None:
    stream = io.StringIO()
    progress = Progress("server/gateway", 2, stream, interval=0)
    progress.advance_family([CheckResult("a/1", Outcome.PASS), CheckResult("a/2", Outcome.FAIL)])
    progress.advance_family([CheckResult("b/1", Outcome.FAIL), CheckResult("b/2", Outcome.FAIL)])
    assert stream.getvalue().splitlines()[-1] == "server/gateway: 2/2 families, 4 checks, 3 failed"


@pytest.mark.parametrize(("given", "sizes"), [("''", []), ('""', []), ("", []), ("1, 20", [1, 20])])
def test_sizes_accept_empty_quotes_from_a_quoted_option(given: str, sizes: list[int]) -> None:
    assert cli._sizes(given) == sizes


def test_sizes_still_refuse_what_is_no_size() -> None:
    with pytest.raises(Exception, match="expected sizes"):
        cli._sizes("'a'")


def test_a_selection_that_runs_no_check_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """errors/payload judges what the families it runs with collected: selected alone it has
    nothing to judge, and the run says so (exit 2) instead of passing empty."""
    launch = Path(__file__).resolve().parents[1] / "cleanroom" / "launch.py"
    command = [sys.executable, str(launch), "tollbooth", "--", "serve", "--profile", "gateway"]
    argv = ["server", "--profile", "gateway", "--level", "seed", "--max-examples", "3"]
    argv += ["--sizes", "", "-q", "--select", "server/gateway/errors/payload*"]
    status = cli.main([*argv, "--", *command, "--config", "{mcp_config}"])
    assert status == 2
    assert "ran no check" in capsys.readouterr().err


def test_a_missing_adapter_script_is_one_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The quick start's relative path, run where it does not exist (a wheel install): one
    line naming the file and where the kit ships it, not a run of failures (issue 24)."""
    monkeypatch.chdir(tmp_path)
    status = cli.main(["functions", "--", "python3", "docs/examples/adapter_minimal.py"])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1
    assert "docs/examples/adapter_minimal.py: no such file" in err
    assert f"relative to {tmp_path}" in err and "the kit ships it at" in err
    shipped = Path(err.rsplit("the kit ships it at ", 1)[1].strip())
    assert shipped.is_file() and shipped.name == "adapter_minimal.py"


def test_an_iut_serving_another_profile_gets_one_hint(tmp_path: Path) -> None:
    """The aggregate profile asked of gatespec started without --profile aggregate (so in the
    gateway profile): the report's first note says which profile's tools it lists (issue 24)."""
    gateway = [sys.executable, "-m", "gatespec.cli", "serve", "--config", "{mcp_config}"]
    status, report = run_kit(
        tmp_path, "aggregate", command=gateway, select=["server/aggregate/namespacing"]
    )
    assert status == 1
    hint = report["notes"][0]
    assert hint.startswith("the IUT does not serve the aggregate profile")
    assert "tool_browse, tool_execute, tool_view: the gateway profile's meta-tools" in hint
