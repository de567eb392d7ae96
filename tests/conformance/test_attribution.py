"""Every expectation resting on an amendment names it, at case and at failure level, and
--select AM-… finds the checks whose rules rest on it (not only those whose requirements do)."""

from __future__ import annotations

from gatespec_conformance.live.checks import Emit, Family, family_requirements
from gatespec_conformance.live.run import plan
from gatespec_conformance.report import Outcome, Selector
from gatespec_conformance.rules import Finding, Rule


async def _nothing(live, emit) -> None:  # pragma: no cover - never run
    return None


def test_select_an_amendment_that_sits_on_rules_only() -> None:
    chosen = {f.key for f in plan("gateway", Selector(["AM-ERROR-PAYLOAD-CLOSED"]))}
    assert {"errors/payload", "browse/path-invalid", "execute/args-invalid"} <= chosen
    assert "cards/budget" not in chosen  # its rules rest on no such amendment
    chosen = {f.key for f in plan("gateway", Selector(["AM-TAG-GRAMMAR"]))}
    assert "cards/fields" in chosen


def test_a_failure_names_the_amendment_that_sits_on_its_check() -> None:
    family = Family("view/text", "server.view.text", _nothing, amended_by=("AM-VIEW-SELECTOR",))
    refs = family_requirements(family, "gateway")
    emit = Emit(family, "gateway", refs, Selector())
    seed_rule = Rule("tool_view does not give the artifact's content", ("VIEW-DRILLDOWN",))
    emit.judge("lines/1", [Finding(seed_rule, "")])
    emit.judge("all", "no answer")
    for result in emit.sink:
        assert result.outcome is Outcome.FAIL
        assert [f.amended_by for f in result.failures] == [("AM-VIEW-SELECTOR",)]
        assert "AM-VIEW-SELECTOR" in result.amended_by
