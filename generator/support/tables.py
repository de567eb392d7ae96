"""Record types of the generated tables: profiles, requirements, amendments, seed facts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Profile:
    name: str
    summary: str
    seeds: tuple[str, ...]  # the seeds its design comes from
    meta_tools: tuple[str, ...]
    lists_upstream_tools: str  # none | stripped | namespaced


@dataclass(frozen=True)
class Requirement:
    id: str
    level: str
    seed: str
    section: str
    scope: str
    profiles: tuple[str, ...]
    text: str
    amended_by: str | None
    checks: tuple[str, ...]
    pending: str | None


@dataclass(frozen=True)
class Amendment:
    id: str
    title: str
    seed: str
    section: str
    kind: str  # change | clarification | extension
    changes: tuple[str, ...]  # ids of the seed facts it overrides (seed_facts.SEED_FACTS)
    decision: str
    rationale: str


@dataclass(frozen=True)
class SeedFact:
    id: str
    seed: str
    section: str
    statement: str
    value: Any  # what the seed states (None for a statement with no single value)
    spec_value: Any  # what the spec holds (the value, or the amendment's value)
    amended_by: tuple[str, ...]
    at: tuple[str, ...]  # where the spec holds it (spec file#key path, or a grammar view)
