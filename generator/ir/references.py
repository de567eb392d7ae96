"""Every name a spec file uses must exist where it points: one checker per spec file, each
adding what it finds to one list, so that a run reports every dangling reference at once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from ..errors import SpecError, SpecErrors
from .model import BOUND_KEYWORDS, RULE_FILES, Source, Spec
from .nodes import Alt, Group, Node, Opt, Ref, Rep


def walk_sources(obj: Any, where: str, out: list[tuple[str, Source]]) -> None:
    """Collect (key path, Source) for every seed citation inside `obj`."""
    if isinstance(obj, Source):
        out.append((where, obj))
    elif isinstance(obj, BaseModel):
        for name in type(obj).model_fields:
            walk_sources(getattr(obj, name), f"{where}.{name}" if where else name, out)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            walk_sources(v, f"{where}.{k}" if where else str(k), out)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            walk_sources(v, f"{where}[{i}]", out)


def grammar_refs(nodes: tuple[Node, ...]) -> list[str]:
    """The grammar names a syntax refers to, in order, repeats kept."""
    out: list[str] = []
    for n in nodes:
        if isinstance(n, Ref):
            out.append(n.name)
        elif isinstance(n, (Opt, Rep, Group)):
            out.extend(grammar_refs(n.nodes))
        elif isinstance(n, Alt):
            for opt in n.options:
                out.extend(grammar_refs(opt))
    return out


def _schema_refs(schema: Any, where: str, out: list[tuple[str, str, Any]]) -> None:
    """Collect (where, extension key, value) for every x- extension in a JSON Schema."""
    if isinstance(schema, dict):
        for k, v in schema.items():
            if k.startswith("x-"):
                out.append((f"{where}.{k}", k, v))
            _schema_refs(v, f"{where}.{k}", out)
    elif isinstance(schema, list):
        for i, v in enumerate(schema):
            _schema_refs(v, f"{where}[{i}]", out)


def _props_of(schema: Any, target: str, where: str) -> list[str]:
    """Property names of the object schema that holds the extension at `target`."""
    parent = target.rsplit(".", 1)[0]
    node = schema
    rel = parent[len(where) :].lstrip(".")
    for part in [p for p in rel.split(".") if p]:
        node = node.get(part, {}) if isinstance(node, dict) else {}
    return list((node or {}).get("properties", {}))


class _Found:
    """The spec under check and the problems found so far, with the lookups every checker
    shares (an amendment, an error code, a requirement, a grammar by name)."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.errors: list[SpecError] = []
        self.requirement_ids = {r.id for r in spec.requirements}

    def add(self, file: str, where: str, problem: str) -> None:
        self.errors.append(SpecError(file, where, problem))

    def amendment(self, file: str, where: str, name: str) -> None:
        if name not in self.spec.amendments:
            self.add(file, where, f"unknown amendment {name!r}")

    def amendments(self, file: str, where: str, names: list[str]) -> None:
        for name in names:
            self.amendment(file, where, name)

    def code(self, file: str, where: str, name: str) -> None:
        if name not in self.spec.error_codes:
            self.add(file, where, f"unknown error code {name!r}")

    def requirement(self, file: str, where: str, rid: str) -> None:
        if rid not in self.requirement_ids:
            self.add(file, where, f"unknown requirement {rid!r}")


def _seeds(found: _Found) -> None:
    """Every file: each source cites a seed surface.yaml lists."""
    spec = found.spec
    seeds = set(spec.surface.seeds)
    files: list[tuple[str, Any]] = [
        ("grammars.yaml", {f"grammars.{k}": g.spec for k, g in spec.grammars.items()}),
        ("errors.yaml", {f"codes.{k}": v for k, v in spec.error_codes.items()}),
        ("models.yaml", {f"models.{k}": v for k, v in spec.models.items()}),
        *(
            (file, {k: getattr(spec.budgets, k) for k in model.model_fields})
            for file, model in RULE_FILES.items()
        ),
        ("profiles.yaml", spec.profiles),
        ("amendments.yaml", {f"amendments.{k}": v for k, v in spec.amendments.items()}),
        ("requirements.yaml", {f"requirements[{i}]": r for i, r in enumerate(spec.requirements)}),
    ]
    for file, obj in files:
        cited: list[tuple[str, Source]] = []
        walk_sources(obj, "", cited)
        for where, src in cited:
            if src.seed not in seeds:
                found.add(file, where, f"unknown seed {src.seed!r}")


def _grammars(found: _Found) -> None:
    """grammars.yaml: error codes, amendments, requirements, and references to other grammars
    (known, and without a cycle, which would make the grammar infinite)."""
    spec, file = found.spec, "grammars.yaml"
    found.amendments(file, "name_mapping.amendments", spec.name_mapping.amendments)
    for gname, g in spec.grammars.items():
        where = f"grammars.{gname}"
        found.code(file, f"{where}.error", g.spec.error)
        found.amendments(file, f"{where}.amendments", g.spec.amendments)
        for ref in grammar_refs(g.nodes):
            if ref not in spec.grammars:
                found.add(file, f"{where}.syntax", f"unknown grammar {ref!r}")
        for rid in g.spec.requirements:
            found.requirement(file, f"{where}.requirements", rid)
        found.amendments(file, f"{where}.examples_amended_by", g.spec.examples_amended_by)
        for kind in ("valid", "invalid"):
            for j, ex in enumerate(getattr(g.spec, kind)):
                if not isinstance(ex, str):
                    found.amendments(file, f"{where}.{kind}[{j}].amended_by", ex.amended_by)

    def visit(name: str, stack: tuple[str, ...]) -> None:
        if name in stack:
            found.add(file, f"grammars.{name}", "cycle: " + " -> ".join(stack))
            return
        if name in spec.grammars:
            for ref in grammar_refs(spec.grammars[name].nodes):
                visit(ref, (*stack, name))

    for gname in spec.grammars:
        visit(gname, ())


def _bound(found: _Found, file: str, where: str, value: Any) -> None:
    """An x-bound: {JSON-Schema keyword: an integer rule of a rule file}."""
    if not isinstance(value, dict) or not value:
        found.add(file, where, "expected {JSON-Schema keyword: rule}")
        return
    for keyword, ref in value.items():
        if keyword not in BOUND_KEYWORDS:
            found.add(file, f"{where}.{keyword}", "not a bound keyword")
        section_name, _, attr = str(ref).partition(".")
        bound = getattr(getattr(found.spec.budgets, section_name, None), attr, None)
        if not isinstance(bound, int) or isinstance(bound, bool):
            found.add(file, f"{where}.{keyword}", f"{ref!r} is not an integer rule")


def _schema_extensions(found: _Found, file: str, where: str, schema: Any) -> None:
    """The x- extensions of a JSON Schema (a model's, a meta-tool's input)."""
    spec = found.spec
    extensions: list[tuple[str, str, Any]] = []
    _schema_refs(schema, where, extensions)
    for w, key, value in extensions:
        if key == "x-grammar":
            for g in value if isinstance(value, list) else [value]:
                if g not in spec.grammars:
                    found.add(file, w, f"unknown grammar {g!r}")
        elif key == "x-model":
            if value not in spec.models:
                found.add(file, w, f"unknown model {value!r}")
        elif key == "x-bound":
            _bound(found, file, w, value)
        elif key == "x-exactly-one-of":
            props = set(_props_of(schema, w, where))
            if not isinstance(value, list) or len(value) < 2 or not set(value) <= props:
                found.add(file, w, "must list two or more declared properties")
        elif key != "x-error-code":
            found.add(file, w, f"unknown extension {key!r}")


def _models(found: _Found) -> None:
    """models.yaml: schema extensions and amendments."""
    for mname, m in found.spec.models.items():
        _schema_extensions(found, "models.yaml", f"models.{mname}.schema", m.json_schema)
        found.amendments("models.yaml", f"models.{mname}.amendments", m.amendments)


def _profiles(found: _Found) -> None:
    """profiles.yaml: meta-tools (schemas, output models, errors) and the profiles' seeds and
    meta-tools."""
    spec, file = found.spec, "profiles.yaml"
    for tname, t in spec.profiles.meta_tools.items():
        where = f"meta_tools.{tname}"
        found.amendments(file, f"{where}.amendments", t.amendments)
        _schema_extensions(found, file, f"{where}.input_schema", t.input_schema)
        if t.output is not None and t.output not in spec.models:
            found.add(file, f"{where}.output", f"unknown model {t.output!r}")
        if (t.result == "upstream") != (t.output is None):
            found.add(
                file,
                f"{where}.output",
                "a meta-tool has an output model, or returns the upstream result: not both",
            )
        for c in t.errors:
            found.code(file, f"{where}.errors", c)
    for pname, p in spec.profiles.profiles.items():
        for seed in p.seeds:
            if seed not in spec.surface.seeds:
                found.add(file, f"profiles.{pname}.seeds", f"unknown seed {seed!r}")
        for tool in p.meta_tools:
            if tool not in spec.profiles.meta_tools:
                found.add(file, f"profiles.{pname}.meta_tools", f"unknown meta-tool {tool!r}")
    found.amendments(file, "stripped_entry.amendments", spec.profiles.stripped_entry.amendments)


def _rule_files(found: _Found) -> None:
    """budgets.yaml, cards.yaml, browse.yaml, firewall.yaml: amendments, the marker's grammar."""
    b = found.spec.budgets
    for file, model in RULE_FILES.items():
        for sec_name in model.model_fields:
            for a in getattr(getattr(b, sec_name), "amendments", []):
                found.amendment(file, f"{sec_name}.amendments", a)
    if b.cache_stable.marker.id_grammar not in found.spec.grammars:
        found.add("browse.yaml", "cache_stable.marker.id_grammar", "unknown grammar")


def _requirements(found: _Found) -> None:
    """requirements.yaml: ids are unique; amended_by names an amendment."""
    seen: set[str] = set()
    for i, r in enumerate(found.spec.requirements):
        if r.id in seen:
            found.add("requirements.yaml", f"requirements[{i}].id", f"duplicate {r.id}")
        seen.add(r.id)
        if r.amended_by:
            found.amendment("requirements.yaml", f"requirements[{i}].amended_by", r.amended_by)


def _vector_answers(found: _Found, where: str, case: Any) -> None:
    """A case's expected answers: a seed answer only under an amendment, each {ok} or {error}."""
    file = "vectors.yaml"
    if case.seed_expect is not None and case.seed_expect_any is not None:
        found.add(file, f"{where}.seed_expect_any", "not with seed_expect")
    if case.seed_expect_any is not None and len(case.seed_expect_any) < 2:
        found.add(file, f"{where}.seed_expect_any", "two answers or more")
    seed_answers = [case.seed_expect, *(case.seed_expect_any or [])]
    if any(a is not None for a in seed_answers) and not case.amended_by:
        found.add(
            file,
            f"{where}.seed_expect",
            "a seed answer differs from the expected one only under an amendment: "
            "name it in amended_by",
        )
    answers = [("expect", case.expect), ("seed_expect", case.seed_expect)]
    answers += [(f"seed_expect_any[{i}]", a) for i, a in enumerate(case.seed_expect_any or [])]
    for key, answer in answers:
        if answer is None:
            continue
        if len(answer) != 1 or not ({"ok", "error"} & set(answer)):
            found.add(file, f"{where}.{key}", "expected {ok: V} or {error: CODE}")
        elif "error" in answer:
            found.code(file, f"{where}.{key}.error", answer["error"])


def _vectors(found: _Found) -> None:
    """vectors.yaml: unique case names, requirements, amendments, well-formed answers."""
    file = "vectors.yaml"
    for function, cases in found.spec.vectors.items():
        names: set[str] = set()
        for j, case in enumerate(cases):
            where = f"cases.{function}[{j}]"
            if case.name in names:
                found.add(file, f"{where}.name", f"duplicate {case.name}")
            names.add(case.name)
            if not case.requirements:
                found.add(file, f"{where}.requirements", "empty")
            for rid in case.requirements:
                found.requirement(file, f"{where}.requirements", rid)
            found.amendments(file, f"{where}.amended_by", case.amended_by)
            _vector_answers(found, where, case)


def _extensions(found: _Found) -> None:
    """extensions.yaml: each names a spec file."""
    for file in found.spec.extensions:
        if file not in found.spec.raw:
            found.add("extensions.yaml", f"extensions.{file}", "not a spec file")


# One checker per spec file (errors.yaml and amendments.yaml refer to nothing but seeds).
CHECKERS: tuple[Callable[[_Found], None], ...] = (
    _seeds,
    _grammars,
    _models,
    _profiles,
    _rule_files,
    _requirements,
    _vectors,
    _extensions,
)


def resolve_references(spec: Spec) -> None:
    """Every name a spec file uses must exist where it points. Raises SpecErrors."""
    found = _Found(spec)
    for check in CHECKERS:
        check(found)
    if found.errors:
        raise SpecErrors(found.errors)
