"""Static checks on the spec, run before anything is rendered. Each failure is a SpecError
naming the file, the key path and what is wrong."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path
from typing import Any

from .errors import SpecError, SpecErrors
from .grammar import Analysis, GrammarCompiler
from .ir import Spec
from .ir import grammar_refs as _refs


def grammar_checks(
    spec: Spec, compiler: GrammarCompiler, analyses: dict[str, Analysis]
) -> list[SpecError]:
    errors: list[SpecError] = []
    for name, g in spec.grammars.items():
        where = f"grammars.{name}"
        a = analyses[name]
        cap = g.spec.max_length
        if cap is not None:
            if a.max_len is not None and cap > a.max_len:
                errors.append(
                    SpecError(
                        "grammars.yaml",
                        f"{where}.max_length",
                        f"cap {cap} can never be reached: the longest {name} the grammar "
                        f"admits is {a.max_len} characters",
                    )
                )
            if cap < a.min_len:
                errors.append(
                    SpecError(
                        "grammars.yaml",
                        f"{where}.max_length",
                        f"cap {cap} is below the shortest {name} the grammar admits "
                        f"({a.min_len}); every value would exceed it",
                    )
                )
        referrers = [
            other for other, og in spec.grammars.items() if any(r == name for r in _refs(og.nodes))
        ]
        if cap is not None and referrers and (a.max_len is None or cap < a.max_len):
            errors.append(
                SpecError(
                    "grammars.yaml",
                    f"{where}.max_length",
                    f"{name} is used inside {', '.join(referrers)}, where a length cap tighter "
                    "than its syntax would not bind: state the bound in the syntax instead",
                )
            )
        errors += [
            SpecError("grammars.yaml", f"{where}.syntax", problem)
            for problem in compiler.ambiguities(g.nodes, "")
        ]
        effective = cap if cap is not None else a.max_len
        rx = re.compile(a.regex)
        for i, value in enumerate(g.spec.plain(g.spec.valid)):
            ok = rx.fullmatch(value) is not None and (effective is None or len(value) <= effective)
            if not ok:
                errors.append(
                    SpecError("grammars.yaml", f"{where}.valid[{i}]", f"{value!r} does not match")
                )
        for i, value in enumerate(g.spec.plain(g.spec.invalid)):
            ok = rx.fullmatch(value) is not None and (effective is None or len(value) <= effective)
            if ok:
                errors.append(
                    SpecError("grammars.yaml", f"{where}.invalid[{i}]", f"{value!r} matches")
                )
    return errors


def budget_checks(spec: Spec) -> list[SpecError]:
    """Budgets that contradict each other, found before any runtime meets them."""
    errors: list[SpecError] = []
    b = spec.budgets
    fw = b.firewall
    if fw.text_artifact_threshold_chars > fw.summary_max_chars:
        errors.append(
            SpecError(
                "firewall.yaml",
                "firewall.text_artifact_threshold_chars",
                f"{fw.text_artifact_threshold_chars} exceeds summary_max_chars "
                f"({fw.summary_max_chars}): a cut summary would have no full text behind it",
            )
        )
    if b.tokens.card.target > b.tokens.card.hard_cap:
        errors.append(SpecError("budgets.yaml", "tokens.card", "target exceeds hard_cap"))
    # The preamble line must fit its allowance whatever the counts (exact cl100k_base tokens).
    try:
        import tiktoken

        encoder = tiktoken.get_encoding(f"{b.tokens.encoder}_offline")
    except Exception as exc:  # the runtime refuses to run without it too: say so loudly
        errors.append(SpecError("budgets.yaml", "tokens.encoder", f"cannot load encoder: {exc}"))
        return errors
    worst = {"count": 10**6, "total": 10**7}
    for key in ("query", "path"):
        text = getattr(b.render.preamble, key).format(**worst)
        n = len(encoder.encode(text, disallowed_special=()))
        if n > b.tokens.browse_response.preamble:
            errors.append(
                SpecError(
                    "cards.yaml",
                    f"render.preamble.{key}",
                    f"renders in {n} tokens with large counts; the preamble allowance is "
                    f"{b.tokens.browse_response.preamble}",
                )
            )
    return errors


# The two parses below are cached by source text: a mutation run (generator/mutations.py) runs
# the static checks once per mutant in one process, over sources that do not change.
@functools.cache
def _test_names(source: str) -> frozenset[str]:
    return frozenset(
        node.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.name.startswith("test")
    )


def _test_functions(path: Path) -> frozenset[str]:
    return _test_names(path.read_text(encoding="utf-8"))


class _Tests:
    """Whether a hand-written test `path::function` exists (parsed once per file)."""

    def __init__(self, project_root: Path) -> None:
        self.root = project_root
        self.cache: dict[Path, frozenset[str]] = {}

    def missing(self, node: str) -> str | None:
        """Why `node` names no test, or None when it does."""
        file, _, func = node.partition("::")
        path = self.root / file
        if not path.is_file():
            return f"check file {file} does not exist"
        if path not in self.cache:
            self.cache[path] = _test_functions(path)
        if func.split("[")[0] not in self.cache[path]:
            return f"no test {func} in {file}"
        return None


def requirement_checks(spec: Spec, checks: dict[str, str], project_root: Path) -> list[SpecError]:
    """Every requirement names at least one check (or the work that will cover it), and every
    check it names exists: a check id of the generator's (`checks`: id -> pytest node; the
    hand-written nodes among them must exist), an external one, or a hand-written test
    `path::function`."""
    errors: list[SpecError] = []
    tests = _Tests(project_root)
    for i, r in enumerate(spec.requirements):
        where = f"requirements[{i}] ({r.id})"
        if not r.checks and not r.pending:
            errors.append(
                SpecError(
                    "requirements.yaml",
                    where,
                    "no covering check (name one in `checks`, or the work that will cover it in `pending`)",
                )
            )
        for check in r.checks:
            if "::" in check:
                problem = tests.missing(check)
            elif check in checks:
                node = checks[check]
                problem = None if node.startswith("generated/") else tests.missing(node)
            elif check in spec.external_checks:
                problem = None
            else:
                problem = f"unknown check id {check!r}"
            if problem:
                errors.append(SpecError("requirements.yaml", where, problem))
    return errors


def raise_if(errors: list[SpecError]) -> None:
    if errors:
        raise SpecErrors(errors)


KIT = Path("src") / "gatespec_conformance"
_AMENDMENT_ID = re.compile(r"AM-[A-Z0-9]+(?:-[A-Z0-9]+)*")


def kit_amendments(project_root: Path) -> set[str]:
    """Amendment ids the conformance kit's rules name (string constants in its modules)."""
    found: set[str] = set()
    for path in sorted((project_root / KIT).rglob("*.py")):
        found |= _amendment_constants(path.read_text(encoding="utf-8"))
    return found


@functools.cache
def _amendment_constants(source: str) -> frozenset[str]:
    return frozenset(
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and _AMENDMENT_ID.fullmatch(node.value)
    )


def amendment_references(
    spec: Spec, cases: list[dict[str, Any]], kit: set[str]
) -> dict[str, list[str]]:
    """amendment id -> what refers to it: a grammar (its amendments or examples), a vector case
    (hand-written or generated from a grammar), a requirement, a rule section, a model, a
    meta-tool, the stripped entry or name mapping, or a rule of the conformance kit."""
    refs: dict[str, list[str]] = {a: [] for a in spec.amendments}

    def add(ids: list[str] | tuple[str, ...], where: str) -> None:
        for a in ids:
            refs.setdefault(a, []).append(where)

    for gname, g in spec.grammars.items():
        add(g.spec.amendments, f"grammars.{gname}")
        add(g.spec.examples_amended_by, f"grammars.{gname} examples")
    add(spec.name_mapping.amendments, "name_mapping")
    add(spec.profiles.stripped_entry.amendments, "stripped_entry")
    for tname, t in spec.profiles.meta_tools.items():
        add(t.amendments, f"meta_tools.{tname}")
    for mname, m in spec.models.items():
        add(m.amendments, f"models.{mname}")
    for sec_name in type(spec.budgets).model_fields:
        add(getattr(getattr(spec.budgets, sec_name), "amendments", []) or [], f"rules.{sec_name}")
    for r in spec.requirements:
        add([r.amended_by] if r.amended_by else [], f"requirements.{r.id}")
    for case in cases:
        add(case.get("amended_by", []), f"vectors {case['file']}:{case['name']}")
    add(sorted(kit & set(spec.amendments)), "the conformance kit")
    return refs


def unreferenced_amendments(
    spec: Spec, cases: list[dict[str, Any]], project_root: Path
) -> list[SpecError]:
    """An amendment nothing refers to decides nothing anyone checks (issue 20): the kit cannot
    select it, and no failure is charged to it."""
    refs = amendment_references(spec, cases, kit_amendments(project_root))
    return [
        SpecError(
            "amendments.yaml",
            f"amendments.{a}",
            "no grammar, vector, requirement, rule, model, meta-tool or kit rule refers to it: "
            "name it where the spec rests on it (amendments / amended_by)",
        )
        for a in spec.amendments
        if not refs.get(a)
    ]


def seed_verdicts(spec: Spec) -> list[SpecError]:
    """A grammar example whose verdict the seed's own grammar (its regex fact, and its length
    fact) would give the other way rests on an amendment, and names it (issue 20: every
    expectation resting on an amendment names it)."""
    errors: list[SpecError] = []
    for gname, g in spec.grammars.items():
        found = [
            (fid, f) for fid, f in spec.seed_facts.items() if f"regex:{gname}" in f.at and f.value
        ]
        if not found or g.spec.examples_amended_by:
            continue
        fact_id, regex_fact = found[0]
        seed_rx = re.compile(str(regex_fact.value))
        caps = [
            f.value
            for f in spec.seed_facts.values()
            if f"grammars.yaml#grammars.{gname}.max_length" in f.at
        ]
        seed_cap = caps[0] if caps else g.spec.max_length
        for kind in ("valid", "invalid"):
            for i, example in enumerate(getattr(g.spec, kind)):
                if not isinstance(example, str):
                    continue
                seed_ok = seed_rx.fullmatch(example) is not None and (
                    seed_cap is None or len(example) <= seed_cap
                )
                if seed_ok != (kind == "valid"):
                    errors.append(
                        SpecError(
                            "grammars.yaml",
                            f"grammars.{gname}.{kind}[{i}]",
                            f"{example!r} is {kind} only under an amendment (the seed's "
                            f"grammar, {fact_id}, says otherwise): name it in amended_by",
                        )
                    )
    return errors
