"""Seed facts against the spec, and the accounting of every number in spec/.

A seed fact (seed_facts.yaml) is what a seed states, pinned to the places the spec holds it.
Generation fails when a place disagrees with the fact and no amendment names the fact with the
value the spec holds instead. Every number in spec/ must be pinned by a fact or listed in
extensions.yaml with the reason gatespec has it, so nothing invented passes as a seed's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .errors import SpecError
from .grammar import Analysis, GrammarCompiler
from .ir import Spec

FACTS_FILE = "seed_facts.yaml"
EXTENSIONS_FILE = "extensions.yaml"
# Files whose numbers are bounds (vectors, requirements and amendments hold data, not bounds).
BOUND_FILES = (
    "grammars.yaml",
    "models.yaml",
    "budgets.yaml",
    "cards.yaml",
    "browse.yaml",
    "firewall.yaml",
    "profiles.yaml",
)
_STEP = re.compile(r"\.?([^.\[\]{}]+)|\[(\d+)\]|\.?\{([^}]+)\}")
_MISSING = object()


@dataclass(frozen=True)
class Place:
    """One resolved location: its display name and the spec's value there."""

    where: str
    value: Any


def _steps(path: str) -> list[str | int | list[str]]:
    out: list[str | int | list[str]] = []
    pos = 0
    while pos < len(path):
        m = _STEP.match(path, pos)
        if not m or m.end() == pos:
            raise ValueError(f"cannot read key path {path!r} at {pos}")
        key, index, alts = m.groups()
        out.append(key if key is not None else int(index) if index is not None else alts.split(","))
        pos = m.end()
    return out


def resolve_path(data: Any, path: str) -> list[tuple[str, Any]]:
    """(key path, value) for every place `path` names in `data`; a missing key gives _MISSING."""
    results: list[tuple[str, Any]] = [("", data)]
    for step in _steps(path):
        nxt: list[tuple[str, Any]] = []
        for where, node in results:
            keys = step if isinstance(step, list) else [step]
            for key in keys:
                label = f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}".lstrip(".")
                if isinstance(key, int):
                    ok = isinstance(node, list) and 0 <= key < len(node)
                    nxt.append((label, node[key] if ok else _MISSING))
                else:
                    ok = isinstance(node, dict) and key in node
                    nxt.append((label, node[key] if ok else _MISSING))
        results = nxt
    return results


class FactChecker:
    def __init__(
        self,
        spec: Spec,
        raw: dict[str, Any],
        compiler: GrammarCompiler,
        analyses: dict[str, Analysis],
        caps: dict[str, int | None],
    ) -> None:
        self.spec = spec
        self.raw = raw
        self.compiler = compiler
        self.analyses = analyses
        self.caps = caps

    # ------------------------------------------------------------ places

    def places(self, at: str) -> list[Place]:
        """The spec's value(s) at `at`. Raises ValueError for an unknown file or grammar."""
        kind, _, rest = at.partition(":")
        if kind in ("regex", "maxlen") and "#" not in at:
            if rest not in self.spec.grammars:
                raise ValueError(f"unknown grammar {rest!r}")
            g = self.spec.grammars[rest]
            if kind == "regex":
                return [
                    Place(
                        f"grammars.yaml#grammars.{rest}.syntax",
                        self.compiler.regex(g.nodes, captures=False),
                    )
                ]
            return [Place(f"grammars.yaml#grammars.{rest} (longest)", self.caps[rest])]
        file, sep, path = at.partition("#")
        if not sep or file not in self.raw:
            raise ValueError(f"{at!r} is not FILE#key.path of a spec file")
        return [
            Place(f"{file}#{where}", None if value is _MISSING else value)
            for where, value in resolve_path(self.raw[file], path)
        ]

    # ------------------------------------------------------------ comparison

    @staticmethod
    def _members(value: Any) -> set[Any] | None:
        if isinstance(value, dict):
            return set(value)
        if isinstance(value, list):
            try:
                return set(value)
            except TypeError:
                return None
        return None

    @classmethod
    def holds(cls, compare: str, spec_value: Any, fact_value: Any) -> bool:
        if compare == "equal":
            return bool(spec_value == fact_value and type(spec_value) is type(fact_value))
        if compare == "keys":
            if not isinstance(spec_value, dict):
                return False
            return set(spec_value) == set(fact_value or [])
        have, want = cls._members(spec_value), cls._members(fact_value)
        if have is None or want is None:
            return False
        return {"set": have == want, "subset": have <= want, "superset": have >= want}[compare]

    # ------------------------------------------------------------ the check

    def check(self) -> list[SpecError]:
        errors: list[SpecError] = []
        facts = self.spec.seed_facts
        claims: dict[str, list[tuple[str, Any]]] = {}
        for am_id, am in self.spec.amendments.items():
            where = f"amendments.{am_id}.changes"
            if am.kind == "change" and not am.changes:
                errors.append(
                    SpecError(
                        "amendments.yaml",
                        where,
                        "a change must name the seed facts it overrides (seed_facts.yaml)",
                    )
                )
            for fact_id, value in am.changes.items():
                if fact_id not in facts:
                    errors.append(
                        SpecError("amendments.yaml", where, f"unknown seed fact {fact_id!r}")
                    )
                    continue
                claims.setdefault(fact_id, []).append((am_id, value))
        for fact_id, fact in facts.items():
            where = f"facts.{fact_id}"
            if fact.seed not in self.spec.surface.seeds:
                errors.append(SpecError(FACTS_FILE, f"{where}.seed", f"unknown seed {fact.seed!r}"))
            for at in fact.at:
                try:
                    places = self.places(at)
                except ValueError as exc:
                    errors.append(SpecError(FACTS_FILE, f"{where}.at", str(exc)))
                    continue
                for place in places:
                    if self.holds(fact.compare, place.value, fact.value):
                        continue
                    shown = (
                        sorted(place.value)
                        if fact.compare != "equal" and isinstance(place.value, dict)
                        else place.value
                    )
                    amended = claims.get(fact_id, [])
                    if not amended:
                        errors.append(
                            SpecError(
                                place.where.split("#")[0] if "#" in place.where else FACTS_FILE,
                                place.where.split("#")[-1],
                                f"seed {fact.seed} §{fact.section} states {fact.value!r} "
                                f"({fact_id}: {fact.statement}) but the spec holds "
                                f"{shown!r}; restore it or name an amendment that "
                                f"changes {fact_id} to this value",
                            )
                        )
                        continue
                    if not any(self.holds(fact.compare, place.value, v) for _, v in amended):
                        names = ", ".join(f"{a} says {v!r}" for a, v in amended)
                        errors.append(
                            SpecError(
                                place.where.split("#")[0] if "#" in place.where else FACTS_FILE,
                                place.where.split("#")[-1],
                                f"the spec holds {shown!r} for {fact_id}, but {names}",
                            )
                        )
        return errors

    # ------------------------------------------------------------ accounting

    def pinned(self) -> set[str]:
        """Places (file#path) pinned by facts, and grammars pinned whole by a view."""
        out: set[str] = set()
        for fact in self.spec.seed_facts.values():
            for at in fact.at:
                kind, _, rest = at.partition(":")
                if kind in ("regex", "maxlen") and "#" not in at:
                    # a pattern pins the syntax; the longest length pins the cap as well
                    part = ".syntax" if kind == "regex" else ""
                    out.add(f"grammars.yaml#grammars.{rest}{part}")
                    continue
                try:
                    places = self.places(at)
                except ValueError:
                    continue
                # a fact about a mapping's keys pins the keys, not the values under them
                out.update(
                    p.where
                    for p in places
                    if fact.compare == "equal" or not isinstance(p.value, dict)
                )
        return out

    def numbers(self) -> Iterator[str]:
        """file#path of every number in the bound files."""
        for file in BOUND_FILES:
            yield from (f"{file}#{w}" for w in _numbers(self.raw[file], ""))

    def accounting(self) -> list[SpecError]:
        errors: list[SpecError] = []
        pinned = self.pinned()
        listed = {
            f"{file}#{path}": reason
            for file, entries in self.spec.extensions.items()
            for path, reason in entries.items()
        }
        for loc in listed:
            file, _, path = loc.partition("#")
            if file not in self.raw or all(
                v is _MISSING for _, v in resolve_path(self.raw[file], path)
            ):
                errors.append(
                    SpecError(EXTENSIONS_FILE, f"extensions.{file}.{path}", "names no spec value")
                )
            elif _covered(loc, pinned):
                errors.append(
                    SpecError(
                        EXTENSIONS_FILE,
                        f"extensions.{file}.{path}",
                        "a seed fact pins this value: it is not an extension",
                    )
                )
        for loc in self.numbers():
            if not _covered(loc, pinned) and not _covered(loc, listed):
                file, _, path = loc.partition("#")
                errors.append(
                    SpecError(
                        file,
                        path,
                        "a number no seed fact pins and extensions.yaml does not list: pin it "
                        "to the seed that states it (seed_facts.yaml) or say why gatespec has it "
                        "(extensions.yaml)",
                    )
                )
        return errors


def _covered(loc: str, places: set[str] | dict[str, str]) -> bool:
    """Whether `loc` or a container of it (a whole grammar, a whole object) is in `places`."""
    while True:
        if loc in places:
            return True
        cut = max(loc.rfind("."), loc.rfind("["))
        if cut <= loc.find("#"):
            return False
        loc = loc[:cut]


def _numbers(node: Any, where: str) -> Iterator[str]:
    if isinstance(node, dict):
        for k, v in node.items():
            key = str(k)
            if key in ("source", "x-bound"):
                continue  # citations, and references to a bound stated elsewhere
            yield from _numbers(v, f"{where}.{key}" if where else key)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _numbers(v, f"{where}[{i}]")
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        yield where
