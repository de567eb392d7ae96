"""Seed facts against the spec, and the accounting of every number in spec/.

A seed fact (seed_facts.yaml) is what a seed states, pinned to the places the spec holds it.
Generation fails when a place disagrees with the fact and no amendment names the fact with the
value the spec holds instead. Every number in spec/ must be pinned by a fact or listed in
extensions.yaml with the reason gatespec has it, so nothing invented passes as a seed's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from .errors import SpecError
from .grammar import Analysis, GrammarCompiler
from .ir import BOUND_KEYWORDS, SeedFact, Source, Spec, walk_sources
from .key_paths import MISSING, Place, resolve_path
from .seed_text import QUOTE_MAX_CHARS, Seeds, normalise

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


class FactChecker:
    def __init__(
        self,
        spec: Spec,
        raw: dict[str, Any],
        compiler: GrammarCompiler,
        analyses: dict[str, Analysis],
        caps: dict[str, int | None],
        seeds: Seeds | None = None,
    ) -> None:
        self.spec = spec
        self.raw = raw
        self.compiler = compiler
        self.analyses = analyses
        self.caps = caps
        self.seeds = seeds

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
            Place(f"{file}#{where}", None if value is MISSING else value)
            for where, value in self._through_bounds(file, path)
        ]

    def _through_bounds(self, file: str, path: str) -> list[tuple[str, Any]]:
        """resolve_path, where a bound keyword a schema sets through `x-bound` (maxLength:
        firewall.summary_max_chars) reads as the rule's value: a bound moved to another rule
        is a bound changed."""
        out = []
        for where, value in resolve_path(self.raw[file], path):
            parent, _, keyword = where.rpartition(".")
            if value is MISSING and keyword in BOUND_KEYWORDS and parent:
                node = dict(resolve_path(self.raw[file], parent)).get(parent)
                ref = node.get("x-bound", {}).get(keyword) if isinstance(node, dict) else None
                if isinstance(ref, str):
                    section, _, attr = ref.partition(".")
                    rule = getattr(getattr(self.spec.budgets, section, None), attr, MISSING)
                    out.append((f"{where} (x-bound {ref})", rule))
                    continue
            out.append((where, value))
        return out

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
        if compare == "contains":
            words = fact_value if isinstance(fact_value, list) else [fact_value]
            return isinstance(spec_value, str) and all(
                _squeeze(str(w)) in _squeeze(spec_value) for w in words
            )
        have, want = cls._members(spec_value), cls._members(fact_value)
        if compare == "none_of" and spec_value is None:
            return True  # nothing there: none of the excluded members either
        if have is None or want is None:
            return False
        return {
            "set": have == want,
            "subset": have <= want,
            "superset": have >= want,
            "none_of": not (have & want),
        }[compare]

    # ------------------------------------------------------------ the seed's own words

    def citations(self) -> list[SpecError]:
        """Each fact's quotes are words of its cited seed section; every section a fact, an
        amendment, a requirement or any other `source` cites exists in its seed."""
        if self.seeds is None:
            return []
        errors: list[SpecError] = []
        for number, info in self.spec.surface.seeds.items():
            if number in self.seeds.problems:
                errors.append(
                    SpecError(
                        "surface.yaml",
                        f"seeds.{number}.file",
                        f"cannot read seed {number} ({info.file}): {self.seeds.problems[number]}",
                    )
                )
            elif self.seeds.texts[number].problems:
                errors.append(
                    SpecError(
                        "surface.yaml",
                        f"seeds.{number}",
                        "; ".join(self.seeds.texts[number].problems),
                    )
                )
        for fact_id, fact in self.spec.seed_facts.items():
            where = f"facts.{fact_id}"
            text, why = self.seeds.locate(fact.seed, fact.section)
            if text is None:
                if fact.seed not in self.seeds.problems:
                    errors.append(SpecError(FACTS_FILE, f"{where}.section", str(why)))
                continue
            for i, quote in enumerate(fact.quote):
                if len(quote) > QUOTE_MAX_CHARS:
                    errors.append(
                        SpecError(
                            FACTS_FILE,
                            f"{where}.quote[{i}]",
                            f"{len(quote)} characters: quote a few words (at most "
                            f"{QUOTE_MAX_CHARS}), not the passage",
                        )
                    )
                if normalise(quote) not in text:
                    errors.append(
                        SpecError(
                            FACTS_FILE,
                            f"{where}.quote[{i}]",
                            f"{quote!r} is not in {self.seeds.where(fact.seed, fact.section)}: "
                            "a fact rests on the seed's own words",
                        )
                    )
            if fact.kind == "stated":
                for leaf in _unquoted(fact):
                    errors.append(
                        SpecError(
                            FACTS_FILE,
                            f"{where}.value",
                            f"{leaf!r} is not in the words quoted from "
                            f"{self.seeds.where(fact.seed, fact.section)}: a stated value is "
                            "the seed's own (quote the words that state it, or say "
                            "`kind: inference`)",
                        )
                    )
        for file, where, src in self._sources():
            if (
                src.seed in self.seeds.texts
                and self.seeds.texts[src.seed].section(src.section) is None
            ):
                errors.append(
                    SpecError(file, where, f"seed {src.seed} has no section {src.section!r}")
                )
        return errors

    def _sources(self) -> list[tuple[str, str, Source]]:
        spec = self.spec
        parts: list[tuple[str, Any]] = [
            ("grammars.yaml", {f"grammars.{k}": g.spec for k, g in spec.grammars.items()}),
            ("errors.yaml", {f"codes.{k}": v for k, v in spec.error_codes.items()}),
            ("models.yaml", {f"models.{k}": v for k, v in spec.models.items()}),
            ("budgets.yaml", spec.budgets),
            ("profiles.yaml", spec.profiles),
            ("amendments.yaml", {f"amendments.{k}": v for k, v in spec.amendments.items()}),
            (
                "requirements.yaml",
                {f"requirements[{i}]": r for i, r in enumerate(spec.requirements)},
            ),
        ]
        out: list[tuple[str, str, Source]] = []
        for file, obj in parts:
            found: list[tuple[str, Source]] = []
            walk_sources(obj, "", found)
            out.extend((file, w, s) for w, s in found)
        return out

    # ------------------------------------------------------------ amendments

    def amendment_scope(self) -> list[SpecError]:
        """Only a change changes facts, and only facts in the sections it says it amends."""
        errors: list[SpecError] = []
        facts = self.spec.seed_facts
        for am_id, am in self.spec.amendments.items():
            where = f"amendments.{am_id}"
            if am.changes and am.kind != "change":
                errors.append(
                    SpecError(
                        "amendments.yaml",
                        f"{where}.kind",
                        f"a {am.kind} decides what a seed leaves open and changes no seed fact; "
                        f"it changes {', '.join(sorted(am.changes))}: make it a change",
                    )
                )
            for fact_id in am.changes:
                fact = facts.get(fact_id)
                if fact is None:
                    continue
                if not any(_within(fact, src) for src in am.sources):
                    cited = ", ".join(f"seed {s.seed} §{s.section}" for s in am.sources)
                    errors.append(
                        SpecError(
                            "amendments.yaml",
                            f"{where}.amends",
                            f"{fact_id} sits in seed {fact.seed} §{fact.section}, which the "
                            f"amendment does not amend ({cited}): name that section in amends",
                        )
                    )
        return errors

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
                                f"{_says(fact)} {_wanted(fact)} "
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

    def restated(self) -> list[SpecError]:
        """Prose that states a number refers to where the spec holds it: a model rule, or an
        extension reason in the file of the rule, that writes a rule's seed-pinned value as a
        literal would keep saying it after an amendment changed it. {section.key} renders the
        rule's value; an unknown one is an error."""
        errors: list[SpecError] = []
        pinned: dict[str, dict[int, str]] = {}  # file -> value -> "section.key"
        for fact in self.spec.seed_facts.values():
            for at in fact.at:
                file, _, path = at.partition("#")
                if file not in RULE_FILES_OF_BOUNDS or path.count(".") != 1:
                    continue
                for place in self.places(at):
                    if isinstance(place.value, int) and not isinstance(place.value, bool):
                        pinned.setdefault(file, {})[place.value] = path
        texts: list[tuple[str, str, str, set[str]]] = []  # file, where, text, files it may restate
        for mname, model in self.spec.models.items():
            for rname, text in model.rules.items():
                texts.append(("models.yaml", f"models.{mname}.rules.{rname}", text, set(pinned)))
        for file, entries in self.spec.extensions.items():
            for path, reason in entries.items():
                texts.append((EXTENSIONS_FILE, f"extensions.{file}.{path}", reason, {file}))
        for file, where, text, scope in texts:
            for m in _PLACEHOLDER.finditer(text):
                if not isinstance(
                    getattr(getattr(self.spec.budgets, m.group(1), None), m.group(2), None), int
                ):
                    errors.append(SpecError(file, where, f"{m.group(0)} names no integer rule"))
            bare = _PLACEHOLDER.sub("", text)
            for m in _NUMBER.finditer(bare):
                n = int(m.group(1))
                for rule_file in sorted(scope):
                    ref = pinned.get(rule_file, {}).get(n)
                    if ref is not None:
                        errors.append(
                            SpecError(
                                file,
                                where,
                                f"states {n}, the value of {ref} a seed fact pins: write "
                                f"{{{ref}}} so that the text follows the rule",
                            )
                        )
        return errors

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
                v is MISSING for _, v in resolve_path(self.raw[file], path)
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


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    elif value is not None and not isinstance(value, bool):
        yield value


def _unquoted(fact: SeedFact) -> list[Any]:
    """The numbers and words of a stated fact's value that its quotes do not contain (case and
    white space aside; a number must stand alone, so 64 is not found in 640)."""
    quoted = _squeeze(" ".join(fact.quote))
    missing = []
    for leaf in _leaves(fact.value):
        if isinstance(leaf, (int, float)):
            if not re.search(rf"(?<![\d.]){re.escape(str(leaf))}(?![\d])", quoted):
                missing.append(leaf)
        elif all(at.startswith("regex:") for at in fact.at) and str(leaf).startswith(
            ("(?:", "\\/")
        ):
            # a pattern as the generator compiles it (references inlined): its parts are
            # the sub-grammars' own facts, each checked against its quote
            continue
        elif _squeeze(str(leaf)) not in quoted:
            missing.append(leaf)
    return missing


def _squeeze(text: str) -> str:
    """Text compared by its letters: case, white space, "-" and "_" aside; SHALL is MUST
    (RFC 2119)."""
    return re.sub(r"[\s_-]+", "", re.sub(r"\bSHALL\b", "MUST", text)).lower()


def _says(fact: SeedFact) -> str:
    """Who says it: the seed itself, or the spec reading the seed's words."""
    quote = "; ".join(f'"{q}"' for q in fact.quote)
    if fact.kind == "inference":
        return f"inferred from seed {fact.seed} §{fact.section} ({quote}):"
    return f"seed {fact.seed} §{fact.section} states ({quote}):"


def _wanted(fact: SeedFact) -> str:
    value = fact.value
    return {
        "equal": f"{value!r}",
        "set": f"exactly {value!r}",
        "keys": f"exactly the keys {value!r}",
        "subset": f"nothing beyond {value!r}",
        "superset": f"at least {value!r}",
        "none_of": f"none of {value!r}",
        "contains": f"text containing {value!r}",
    }[fact.compare]


def _within(fact: SeedFact, src: Source) -> bool:
    if fact.seed != src.seed:
        return False
    return fact.section == src.section or any(
        fact.section.startswith(src.section + sep) for sep in (".", ": ")
    )


_PLACEHOLDER = re.compile(r"\{([a-z_]+)\.([a-z_]+)\}")
_NUMBER = re.compile(r"(?<![\w.])(\d+)(?![\w.]\d)")
RULE_FILES_OF_BOUNDS = ("budgets.yaml", "cards.yaml", "browse.yaml", "firewall.yaml")


def render_text(spec: Spec, text: str) -> str:
    """A spec text with each {section.key} replaced by the rule's value (one source per number)."""

    def value(m: re.Match[str]) -> str:
        return str(getattr(getattr(spec.budgets, m.group(1), None), m.group(2), m.group(0)))

    return _PLACEHOLDER.sub(value, text)


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
