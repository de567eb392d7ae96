"""Every seed-breaking mutant of the clean-room implementations (tests/cleanroom/mutants.py)
is caught at --level seed by the kit family that should catch it, and charged to the rule it
breaks: the kit can fail an implementation nobody here wrote, for the right reason.

Each mutant runs only the family that should catch it (--select); test_tollbooth_kit.py and
test_switchyard_kit.py prove the same families pass on the unbroken implementations.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.cleanroom.harness import failures, run_functions, run_server
from tests.cleanroom.mutants import MUTANTS

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


@dataclass(frozen=True)
class Case:
    impl: str
    mutant: str
    where: str  # "functions", or the profile served
    family: str  # the family that must catch it (and that alone is selected)
    requirement: str  # a requirement every failure in that family must name
    extra: tuple[str, ...] = ()  # the implementation's own flags
    options: tuple[str, ...] = ()  # the kit's


CS = ("--cache-stable",)
SIZES = ("--sizes", "1,5")

CASES = [
    # tollbooth, layer 1 (our adapter around its library)
    Case(
        "tollbooth", "approx-tokens", "functions", "functions/count_tokens/*", "BUDGET-EXACT-CL100K"
    ),
    Case(
        "tollbooth",
        "special-token-crash",
        "functions",
        "functions/count_tokens/*",
        "BUDGET-EXACT-CL100K",
    ),
    Case(
        "tollbooth",
        "trailing-newline",
        "functions",
        "functions/grammar_match/tool_id/*",
        "TOOLID-GRAMMAR",
    ),
    Case("tollbooth", "hash-unsorted", "functions", "functions/hash8/*", "HASH-CANONICAL-SHAPE"),
    Case(
        "tollbooth",
        "no-ellipsis",
        "functions",
        "functions/truncate_description/*",
        "TRUNC-HARD-CUT-ELLIPSIS",
    ),
    Case(
        "tollbooth",
        "annotation-crash",
        "functions",
        "functions/annotation_fields/*",
        "ANNOT-COST-HINT",
    ),
    Case(
        "tollbooth",
        "tags-unsorted",
        "functions",
        "functions/validate_card/invalid/*",
        "CARD-TAGS-SORTED",
    ),
    # tollbooth, layer 2 (its own MCP server)
    Case(
        "tollbooth",
        "path-trailing-slash",
        "gateway",
        "server/gateway/browse/path-invalid",
        "PATH-NO-TRAILING-SLASH",
    ),
    Case(
        "tollbooth",
        "path-uppercase",
        "gateway",
        "server/gateway/browse/path-invalid",
        "PATH-LOWERCASE-ONLY",
    ),
    Case(
        "tollbooth",
        "root-small-catalog",
        "gateway",
        "server/gateway/browse/root",
        "BROWSE-ROOT-ONE-PER-NAMESPACE",
        options=SIZES,
    ),
    Case(
        "tollbooth",
        "both-arguments",
        "gateway",
        "server/gateway/browse/args-invalid",
        "BROWSE-EXACTLY-ONE-ARG",
    ),
    Case(
        "tollbooth",
        "args-unvalidated",
        "gateway",
        "server/gateway/execute/args-invalid",
        "VALIDATE-NO-UPSTREAM-ON-INVALID",
    ),
    Case(
        "tollbooth", "order-reversed", "gateway", "server/gateway/browse/order", "ORDER-SCORE-DESC"
    ),
    Case(
        "tollbooth", "schema-on-card", "gateway", "server/gateway/cards/banned", "CARD-NO-SCHEMAS"
    ),
    Case(
        "tollbooth",
        "marker-always",
        "gateway",
        "server/gateway/cache-stable/first-browse",
        "CACHE-MARKER-FIRST-BROWSE",
        extra=CS,
        options=CS,
    ),
    Case(
        "tollbooth",
        "one-bad-schema-drops-server",
        "gateway",
        "server/gateway/catalog/tool-id",
        "BROWSE-PATH-CHILDREN",
        # tollbooth names the fixture's tools `mcp:` (seed 000 §1.4's fallback); with no tool
        # listed the kit cannot discover that namespace, so it is told
        options=("--namespace", "mcp"),
    ),
    Case(
        "tollbooth",
        "tool-dropped",
        "gateway",
        "server/gateway/catalog/tool-id",
        "BROWSE-PATH-CHILDREN",
    ),
    Case(
        "tollbooth",
        "no-facts",
        "gateway",
        "server/gateway/execute/structured",
        "ENVELOPE-STRUCTURED-CONTENT-FACTS",
    ),
    Case(
        "tollbooth",
        "summary-uncapped",
        "gateway",
        "server/gateway/execute/large-text",
        "ENVELOPE-TEXT-SUMMARY",
    ),
    # errors/payload judges the error answers other families collect: the family that sends
    # malformed paths judges their payloads itself
    Case(
        "tollbooth",
        "error-no-path",
        "gateway",
        "server/gateway/browse/path-invalid",
        "ERROR-BROWSE-SHAPE",
    ),
    Case(
        "tollbooth",
        "not-found-as-invalid",
        "gateway",
        "server/gateway/browse/path-not-found",
        "ERROR-PATH-NOT-FOUND",
    ),
    Case(
        "tollbooth",
        "budget-on-description",
        "gateway",
        "server/gateway/cards/budget",
        "BUDGET-PROMPT-FORM",
    ),
    Case(
        "tollbooth",
        "upstream-error-hidden",
        "gateway",
        "server/gateway/execute/upstream-error",
        "ROUTE-PROPAGATE-ERRORS",
    ),
    Case(
        "tollbooth",
        "stripped-name-hashless",
        "transparent",
        "server/transparent/catalog/tool-id",
        "TOOLID-HASH8-WHEN-NO-VERSION",
    ),
    # switchyard (seeds 003 and 001/004)
    Case(
        "switchyard",
        "names-not-namespaced",
        "aggregate",
        "server/aggregate/namespacing",
        "ROUTE-DOUBLE-UNDERSCORE-NAMES",
    ),
    Case(
        "switchyard",
        "route-to-first-server",
        "aggregate",
        "server/aggregate/routing",
        "ROUTE-UPSTREAM-CLEAN-NAME",
    ),
    Case(
        "switchyard",
        "namespaced-name-upstream",
        "aggregate",
        "server/aggregate/routing",
        "ROUTE-UPSTREAM-CLEAN-NAME",
    ),
    Case(
        "switchyard",
        "prompts-one-server",
        "aggregate",
        "server/aggregate/prompts",
        "AGG-PROMPTS-LIST-NAMESPACED",
    ),
    Case(
        "switchyard",
        "unknown-tool-routed",
        "aggregate",
        "server/aggregate/routing",
        "ROUTE-UNKNOWN-TOOL",
    ),
    Case(
        "switchyard",
        "search-full-schemas",
        "search",
        "server/search/search/fields",
        "SEARCH-NO-SCHEMAS-IN-RESULTS",
    ),
    Case("switchyard", "batch-reversed", "search", "server/search/search/batch", "SEARCH-BATCH"),
]


def test_every_mutant_has_a_case() -> None:
    named = {(c.impl, c.mutant) for c in CASES}
    defined = {(impl, name) for impl, found in MUTANTS.items() for name in found}
    assert defined - named <= _OVER_HTTP and named <= defined


# Access-control mutants need two identities over HTTP: test_switchyard_kit.py runs those.
_OVER_HTTP = {("switchyard", "search-shows-all"), ("switchyard", "call-unchecked")}


@pytest.mark.parametrize("case", CASES, ids=[f"{c.impl}-{c.mutant}" for c in CASES])
def test_mutant_is_caught_by_the_right_family(tmp_path: Path, case: Case) -> None:
    select = case.family if case.family.endswith("*") else case.family + "*"
    if case.where == "functions":
        status, report = run_functions(
            tmp_path, case.impl, "seed", select=[select], mutant=case.mutant, max_examples="50"
        )
    else:
        status, report = run_server(
            tmp_path,
            case.impl,
            case.where,
            "seed",
            extra=case.extra,
            options=case.options,
            select=[select],
            mutant=case.mutant,
        )
    found = failures(report)
    assert status == 1 and found, f"{case.mutant} went unnoticed"
    prefix = case.family.rstrip("*")
    assert all(name.startswith(prefix) for name, _, _ in found)
    assert any(case.requirement in reqs for _, _, reqs in found), found[:3]
