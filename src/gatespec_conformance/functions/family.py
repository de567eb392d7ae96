"""A layer-1 family: drawn inputs for one emitted check id, the answer each must get
(an expected answer or a property it must have), and what that answer rests on."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

__all__ = ["Draw", "Family", "Property", "constant", "plain"]

Draw = st.SearchStrategy[tuple[str, dict[str, Any]]]  # (label, input); label "" for none


@dataclass(frozen=True)
class Property:
    """An expected answer stated as a property of the `ok` value (round trips)."""

    says: str  # shown as the expected answer in reports
    judge: Callable[[Any], str | None]  # why the ok value is wrong, or None


Expected = dict[str, Any] | Property


@dataclass(frozen=True)
class Family:
    path: str  # "<function>/<family>", the name prefix after "functions/"
    function: str
    check_ids: tuple[str, ...]
    draw: Callable[[], Draw]
    expect: Callable[[dict[str, Any]], Expected]
    # Labelled families draw `oversample` times more and keep a label-balanced subset:
    # hypothesis favours the first option of a sampled_from (about half the draws).
    oversample: int = 1
    # Amendments the expected answers rest on (besides those of the requirements).
    amended_by: tuple[str, ...] = ()
    # Why the seeds say nothing this family could check ("" when they do).
    extension: str = ""
    # (label, input) -> the requirement ids its case evidences; None (or a None answer): every
    # one of check_ids'.
    requirements: Callable[[str, dict[str, Any]], tuple[str, ...] | None] | None = None
    # (label, input) -> why the seeds state nothing for this one case ("" when they do).
    case_extension: Callable[[str, dict[str, Any]], str] | None = None
    # input -> what the seed itself states of the answer where the exact expected answer rests
    # on `amended_by` (judged at --level seed instead of skipping the case).
    seed_prop: Callable[[dict[str, Any]], Property] | None = None
    # (label, input) -> the amendments this one case's expected answer rests on (instead of
    # amended_by), for families whose values differ in what the seed says of them.
    case_amended: Callable[[str, dict[str, Any]], tuple[str, ...]] | None = None


def plain(strategy: st.SearchStrategy[dict[str, Any]]) -> Draw:
    return strategy.map(lambda inp: ("", inp))


def constant(answer: dict[str, Any], _inp: dict[str, Any]) -> dict[str, Any]:
    return answer
