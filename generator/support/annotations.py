"""Seed 002's mapping of MCP tool annotations to card fields. Hints are untrusted and
informational: a hint that is not the expected type is ignored."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class HintRule:
    """When annotation `hint` is `when` (a bool), the card gets `tag` and/or `side_effects`;
    a hint with `field` set is a number copied to that field (the cost hint) when positive."""

    hint: str
    when: bool | None = None
    side_effects: bool | None = None
    tag: str | None = None
    field: str | None = None


class AnnotationMapping:
    def __init__(self, rules: Sequence[HintRule], side_effects_default: bool) -> None:
        self.flags = [r for r in rules if r.field is None]
        numbers = [r for r in rules if r.field is not None]
        if len(numbers) != 1 or any(r.when is None for r in self.flags):
            raise ValueError("expected one number hint (the cost) and a `when` on every flag")
        self.cost = numbers[0]
        self.side_effects_default = side_effects_default

    def fields(self, annotations: Mapping[str, Any] | None) -> tuple[bool, list[str], float]:
        """(side_effects, sorted tags, cost_hint)."""
        ann: Mapping[str, Any] = annotations if isinstance(annotations, Mapping) else {}
        side_effects = self.side_effects_default
        tags: set[str] = set()
        for rule in self.flags:
            if ann.get(rule.hint) is rule.when:
                if rule.tag is not None:
                    tags.add(rule.tag)
                if rule.side_effects is not None:
                    side_effects = rule.side_effects
        cost = ann.get(self.cost.hint)
        cost_hint = 0.0
        if isinstance(cost, (int, float)) and not isinstance(cost, bool):
            if math.isfinite(cost) and cost > 0:
                cost_hint = float(cost)
        return side_effects, sorted(tags), cost_hint
