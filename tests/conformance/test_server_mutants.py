"""Deliberately broken gatespec runtimes (tests/conformance/mutants/serve_mutant.py): each is
caught by the named layer-2 check family, whose failures name the broken requirement.

Each mutant runs only the checks that should catch it (--select), so the module stays fast;
test_server_reference.py proves the same checks pass on the unbroken runtime.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from gatespec_conformance.live.access import FAMILIES as ACCESS
from tests.conformance.mutants.harness import (
    access_config,
    aggregate_argv,
    http_gatespec,
    outcomes,
    run_kit,
    serve_argv,
    write_config,
)
from tests.conformance.mutants.serve_mutant import MUTANTS

pytestmark = pytest.mark.timeout(120)


@dataclass(frozen=True)
class Mutant:
    name: str
    profile: str
    family: str  # the family that must fail (and that alone is selected)
    requirement: str  # a requirement id every failing check of it must name
    cache_stable: bool = False
    levels: tuple[str, ...] = ("spec",)  # the levels that must catch it
    options: tuple[str, ...] = ()
    sizes: str = ""


_BOTH = ("spec", "seed")


CASES = [
    Mutant("truncation-off", "gateway", "cards/budget", "BUDGET-CARD-HARD-CAP"),
    Mutant("order-reversed", "gateway", "browse/order", "ORDER-SCORE-DESC"),
    Mutant(
        "args-unvalidated", "gateway", "execute/args-invalid", "VALIDATE-NO-UPSTREAM-ON-INVALID"
    ),
    Mutant("banned-field", "gateway", "cards/banned", "CARD-NO-SCHEMAS"),
    Mutant(
        "marker-first-browse",
        "gateway",
        "cache-stable/first-browse",
        "CACHE-MARKER-FIRST-BROWSE",
        cache_stable=True,
    ),
    Mutant("path-code", "gateway", "browse/path-invalid", "ERROR-PATH-INVALID"),
    Mutant("budget-on-description", "gateway", "cards/budget", "BUDGET-PROMPT-FORM"),
    Mutant("hash8-name-only", "transparent", "catalog/tool-id", "HASH-INPUT"),
    Mutant(
        "stripped-real-schema",
        "transparent",
        "stripped/schema",
        "EXPOSE-TRANSPARENT-SENTINEL-SCHEMA",
    ),
    Mutant("view-off-by-one", "gateway", "view/text", "VIEW-DRILLDOWN"),
    Mutant(
        "stripped-callable", "transparent", "stripped/not-callable", "EXPOSE-STRIPPED-NOT-CALLABLE"
    ),
    # Each of these is caught at both levels: the seeds state what they break.
    Mutant("wire-text-over-cap", "gateway", "cards/budget", "BUDGET-CARD-HARD-CAP", levels=_BOTH),
    Mutant(
        "root-small-catalog",
        "gateway",
        "browse/root",
        "BROWSE-ROOT-ONE-PER-NAMESPACE",
        levels=_BOTH,
        sizes="1",
    ),
    Mutant("estimated-tokens", "gateway", "cards/budget", "BUDGET-EXACT-CL100K", levels=_BOTH),
    Mutant("special-tokens-crash", "gateway", "browse/walk", "BROWSE-PATH-CHILDREN", levels=_BOTH),
    Mutant(
        "malformed-rejects-listing",
        "transparent",
        "catalog/tool-id",
        "EXPOSE-TRANSPARENT-FULL-CATALOG",
        levels=_BOTH,
        options=("--namespace", "fixture"),
    ),
    Mutant("batch-reversed", "search", "search/batch", "SEARCH-BATCH"),
    Mutant("call-drops-structure", "search", "search/call", "SEARCH-CALL-RESULT-MAPPING"),
    # The aggregate profile (issue 10), each caught by its own family.
    Mutant(
        "single-underscore",
        "aggregate",
        "namespacing",
        "ROUTE-DOUBLE-UNDERSCORE-NAMES",
        levels=_BOTH,
    ),
    Mutant("route-first-server", "aggregate", "routing", "ROUTE-UNDERSCORE-PREFIX", levels=_BOTH),
    Mutant(
        "prompts-unnamespaced", "aggregate", "prompts", "AGG-PROMPTS-LIST-NAMESPACED", levels=_BOTH
    ),
    Mutant("first-page-only", "aggregate", "pagination", "AGG-LIST-PAGINATION", levels=_BOTH),
    Mutant("all-or-nothing", "aggregate", "broadcast-partial", "AGG-BROADCAST-PARTIAL-FAILURE"),
    Mutant("cancel-shielded", "aggregate", "cancellation", "RELAY-CANCEL"),
    # A config edit drives addServer only by AM-REGISTRY-RELOAD: --level seed skips that case.
    Mutant("reload-silent", "aggregate", "list-changed", "REGISTRY-CHANGE-EVENT"),
    Mutant("unknown-server-unavailable", "aggregate", "routing", "ROUTE-UNKNOWN-SERVER"),
    Mutant("read-uri-upstream", "aggregate", "resources", "AGG-RESOURCES-READ-ROUTED"),
    Mutant(
        "capabilities-tools-only",
        "aggregate",
        "capabilities",
        "TRANSPORT-ADVERTISE-CAPABILITIES",
        levels=_BOTH,
    ),
]
# Each aggregate run starts gatespec and two fixtures: two of them run with `make test`, the
# rest with `make test-slow` (CI runs both). A mutant caught at both levels runs its seed level
# with `make test-slow` too: `make test` sees the same family catch it at the spec level.
_FAST_AGGREGATE = {("route-first-server", "spec"), ("first-page-only", "spec")}
RUNS = [
    pytest.param(
        m,
        level,
        id=f"{m.name}-{level}",
        marks=(
            [pytest.mark.slow]
            if level == "seed"
            or (m.profile == "aggregate" and (m.name, level) not in _FAST_AGGREGATE)
            else []
        ),
    )
    for m in CASES
    for level in m.levels
]

# Access control: served over HTTP behind the kit's two identities (harness.access_config).
ACCESS_CASES = [
    Mutant("search-unfiltered", "search", "access/visible", "SEARCH-ACCESS-FILTERED"),
    Mutant("forbidden-tells", "search", "access/no-leak", "SEARCH-NO-LEAK-TO-UNAUTHORISED"),
    Mutant(
        "list-changed-to-all",
        "transparent",
        "access/list-changed",
        "SEARCH-NO-LEAK-TO-UNAUTHORISED",
    ),
    Mutant("batch-escapes-policy", "search", "access/forbidden", "SEARCH-CALL-FORBIDDEN"),
    Mutant("expiry-ignored", "search", "access/expired", "SEARCH-BEARER-TOKEN"),
    Mutant("artifacts-shared", "gateway", "access/artifacts", "SEARCH-NO-LEAK-TO-UNAUTHORISED"),
]
# Each starts gatespec over HTTP: two run with `make test` (the search and the gateway profile),
# the rest with `make test-slow`; tests/runtime/access covers each behaviour directly.
_FAST_ACCESS = {"search-unfiltered", "artifacts-shared"}
ACCESS_RUNS = [
    pytest.param(m, id=m.name, marks=[] if m.name in _FAST_ACCESS else [pytest.mark.slow])
    for m in ACCESS_CASES
]


def test_every_mutant_has_a_case() -> None:
    assert {m.name for m in CASES + ACCESS_CASES} == set(MUTANTS)


@pytest.mark.parametrize(("mutant", "level"), RUNS)
def test_mutant_is_caught_by_the_right_check(tmp_path: Path, mutant: Mutant, level: str) -> None:
    config = write_config(tmp_path, mutant.profile, cache_stable=mutant.cache_stable)
    family = f"server/{mutant.profile}/{mutant.family}"
    if mutant.profile == "aggregate":
        command = aggregate_argv(mutant.name)
    else:
        command = serve_argv(config, mutant.name)
    status, report = run_kit(
        tmp_path,
        mutant.profile,
        command=command,
        options=[*(["--cache-stable"] if mutant.cache_stable else []), *mutant.options]
        + ["--level", level],
        select=[family],  # the family's name selects all of its cases
        sizes=mutant.sizes,
    )
    failed = outcomes(report, "fail")
    assert status == 1 and not report["ok"]
    assert failed, f"{mutant.name} went unnoticed"
    assert all(c["name"].startswith(family) for c in failed)
    charged = [{r["id"] for f in c["failures"] for r in f["requirements"]} for c in failed]
    assert all(mutant.requirement in ids for ids in charged)
    assert all(c["example"] is not None and c["reason"] for c in failed)
    row = report["requirements"][mutant.requirement]
    assert row["fail"] == len(failed) and row["level"].startswith("MUST")


def test_an_iut_that_dies_is_restarted_and_the_run_goes_on(tmp_path: Path) -> None:
    config = write_config(tmp_path, "gateway")
    status, report = run_kit(
        tmp_path,
        "gateway",
        command=serve_argv(config, "exit-on-view"),
        select=["server/gateway/view/text/*", "server/gateway/view/json-pointer/*"]
        + ["server/gateway/execute/after-timeout"],
    )
    assert status == 1
    by_family = {c["name"].split("/")[3]: c for c in report["checks"]}
    assert by_family["text"]["outcome"] == "fail" and by_family["json-pointer"]["outcome"] == "fail"
    assert "Connection closed" in by_family["text"]["reason"]
    assert by_family["after-timeout"]["outcome"] == "pass"  # on a restarted IUT
    assert sum("restarted the IUT" in n for n in report["notes"]) == 2


@pytest.mark.parametrize("mutant", ACCESS_RUNS)
def test_access_mutant_is_caught_by_the_right_check(tmp_path: Path, mutant: Mutant) -> None:
    family = f"server/{mutant.profile}/{mutant.family}"
    access, identities = access_config(tmp_path)
    with http_gatespec(tmp_path, mutant.profile, access=access, mutant=mutant.name) as served:
        url, call_log = served
        status, report = run_kit(
            tmp_path,
            mutant.profile,
            options=["--url", url, "--call-log", str(call_log), *identities.options()],
            select=[family],
        )
    failed = outcomes(report, "fail")
    assert status == 1 and failed, f"{mutant.name} went unnoticed"
    assert all(c["name"].startswith(family) for c in failed)
    charged = [{r["id"] for f in c["failures"] for r in f["requirements"]} for c in failed]
    assert all(mutant.requirement in ids for ids in charged)
    assert all(c["example"] is not None and c["reason"] for c in failed)


@pytest.mark.slow  # the search profile's full run over HTTP is in make test (reference)
@pytest.mark.parametrize("profile", ["gateway", "transparent", "search"])
def test_the_access_checks_pass_on_gatespec(tmp_path: Path, profile: str) -> None:
    """The same checks, unbroken: none of them fails (the mutants above are their evidence)."""
    access, identities = access_config(tmp_path)
    with http_gatespec(tmp_path, profile, access=access) as (url, call_log):
        status, report = run_kit(
            tmp_path,
            profile,
            options=["--url", url, "--call-log", str(call_log), *identities.options()],
            select=[f"server/{profile}/access/*"],
        )
    assert status == 0 and outcomes(report, "fail") == [] and outcomes(report, "skip") == []
    ran = {c["name"].split("/")[3] for c in report["checks"]}
    assert ran == {f.key.split("/")[1] for f in ACCESS if profile in f.profiles}
