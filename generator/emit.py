"""Render the generated tree from a loaded spec: templates, datamodel-code-generator models,
vectors computed by the freshly rendered package, then one pinned formatter pass.

Output is byte-identical run to run: no timestamps, sorted or spec-ordered iteration only, and
ruff (pinned in pyproject) formats every Python file.
"""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jinja2
from datamodel_code_generator import DataModelType, InputFileType, PythonVersion, generate

from . import checks
from .facts import FactChecker
from .grammar import Analysis, GrammarCompiler
from .ir import Spec
from .schema import SchemaResolver
from .vectors import build_cases, disagreements, meta_schema

PACKAGE = "gatespec_surface"
TEMPLATES = Path(__file__).parent / "templates"

# output path -> (template, spec files it derives from)
PACKAGE_FILES: dict[str, tuple[str, tuple[str, ...]]] = {
    "__init__.py": ("init.py.j2", ("surface.yaml",)),
    "errors.py": ("errors.py.j2", ("errors.yaml",)),
    "grammars.py": ("grammars.py.j2", ("grammars.yaml",)),
    "parsers.py": ("parsers.py.j2", ("grammars.yaml", "profiles.yaml", "cards.yaml")),
    "budgets.py": (
        "budgets.py.j2",
        ("budgets.yaml", "cards.yaml", "browse.yaml", "firewall.yaml"),
    ),
    "render.py": ("render.py.j2", ("cards.yaml",)),
    "validators.py": ("validators.py.j2", ("models.yaml", "cards.yaml")),
    "schemas.py": ("schemas.py.j2", ("models.yaml", "profiles.yaml", "grammars.yaml")),
    "descriptors.py": ("descriptors.py.j2", ("profiles.yaml",)),
    "strategies.py": ("strategies.py.j2", ("grammars.yaml", "models.yaml", "profiles.yaml")),
    "requirements.py": ("requirements.py.j2", ("requirements.yaml", "amendments.yaml")),
    "seed_facts.py": ("seed_facts.py.j2", ("seed_facts.yaml", "amendments.yaml")),
    "checks.py": ("checks.py.j2", ("requirements.yaml",)),
    "vectors/__init__.py": ("vectors_init.py.j2", ("vectors.yaml",)),
}
TEST_FILES: dict[str, tuple[str, tuple[str, ...]]] = {
    "test_grammars.py": ("test_grammars.py.j2", ("grammars.yaml",)),
    "test_models.py": ("test_models.py.j2", ("models.yaml", "cards.yaml")),
    "test_descriptors.py": ("test_descriptors.py.j2", ("profiles.yaml",)),
    "test_vectors.py": ("test_vectors.py.j2", ("vectors.yaml",)),
}


def _docstring(text: str) -> str:
    return " ".join(text.split()).replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["py"] = repr
    env.filters["docstring"] = _docstring
    env.filters["tuple"] = lambda v: tuple(v)
    return env


class Generator:
    def __init__(self, spec: Spec, project_root: Path) -> None:
        self.spec = spec
        self.project_root = project_root
        self.compiler = GrammarCompiler(spec.grammars)
        self.analyses: dict[str, Analysis] = {
            name: self.compiler.analyse(g) for name, g in spec.grammars.items()
        }
        self.caps: dict[str, int | None] = {
            name: (
                g.spec.max_length if g.spec.max_length is not None else self.analyses[name].max_len
            )
            for name, g in spec.grammars.items()
        }
        self.resolver = SchemaResolver(spec, self.analyses, self.caps)
        self.env = _environment()

    # ------------------------------------------------------------ checks

    def emitted_checks(self) -> dict[str, str]:
        """Check id -> the emitted pytest node that performs it."""
        t = "generated/tests"
        out: dict[str, str] = {}
        for name in self.spec.grammars:
            out[f"grammar.{name}.examples"] = f"{t}/test_grammars.py::test_examples[{name}]"
            out[f"grammar.{name}.valid"] = f"{t}/test_grammars.py::test_valid[{name}]"
            out[f"grammar.{name}.invalid"] = f"{t}/test_grammars.py::test_invalid[{name}]"
            out[f"grammar.{name}.json_schema"] = (
                f"{t}/test_grammars.py::test_json_schema_agrees[{name}]"
            )
            a = self.analyses[name]
            cap = self.spec.grammars[name].spec.max_length
            if cap is not None and (a.max_len is None or a.max_len > cap):
                out[f"grammar.{name}.cap"] = f"{t}/test_grammars.py::test_over_cap[{name}]"
        specials = {
            "grammar.tool_id.roundtrip": "test_grammars.py::test_tool_id_roundtrip",
            "hash8.emitted": "test_grammars.py::test_make_tool_id",
            "hash8.shape_only": "test_grammars.py::test_hash8_ignores_prose",
            "grammar.path.parse": "test_grammars.py::test_path_parse",
            "wire_name.roundtrip": "test_grammars.py::test_wire_name_roundtrip",
            "grammar.aggregate_name.roundtrip": "test_grammars.py::test_aggregate_roundtrip",
            "grammar.search_operation.roundtrip": "test_grammars.py::test_search_operation_roundtrip",
            "grammar.view_selector.parse": "test_grammars.py::test_view_selector_parse",
            "server_key.normalise": "test_grammars.py::test_server_key_normalise",
            "model.ChoiceCard.valid": "test_models.py::test_card_valid",
            "model.ChoiceCard.invalid": "test_models.py::test_card_invalid",
            "model.ChoiceCard.banned": "test_models.py::test_card_banned_any_form",
            "model.ChoiceCard.render": "test_models.py::test_card_render",
            "annotations.untrusted": "test_models.py::test_annotation_mapping_untrusted",
            "descriptor.profiles": "test_descriptors.py::test_profiles",
            "descriptor.shape": "test_descriptors.py::test_descriptor_shape",
            "descriptor.accepts": "test_descriptors.py::test_schema_accepts_valid",
            "descriptor.rejects": "test_descriptors.py::test_schema_rejects_invalid",
            "descriptor.tool_browse.exactly_one": "test_descriptors.py::test_browse_exactly_one",
            "model.schemas": "test_descriptors.py::test_model_schemas",
        }
        out.update({k: f"{t}/{v}" for k, v in specials.items()})
        for file in self.vector_files():
            out[f"vectors.{file.removesuffix('.json')}"] = f"{t}/test_vectors.py::test_vector"
        return out

    def vector_files(self) -> list[str]:
        return sorted({c["file"] for c in build_cases(self.spec, self.analyses)})

    def static_checks(self) -> None:
        errors = checks.grammar_checks(self.spec, self.compiler, self.analyses)
        errors += checks.budget_checks(self.spec)
        errors += checks.requirement_checks(self.spec, self.emitted_checks(), self.project_root)
        facts = FactChecker(self.spec, self.spec.raw, self.compiler, self.analyses, self.caps)
        errors += facts.check()
        errors += facts.accounting()
        checks.raise_if(errors)

    # ------------------------------------------------------------ context

    def _grammar_rows(self) -> list[dict[str, Any]]:
        rows = []
        for name, g in self.spec.grammars.items():
            a = self.analyses[name]
            rows.append(
                {
                    "name": name,
                    "const": name.upper(),
                    "summary": " ".join(g.spec.summary.split()),
                    "summary_line": " ".join(g.spec.summary.split())[:80],
                    "regex": a.regex,
                    "portable": a.portable,
                    "min_len": a.min_len,
                    "cap": self.caps[name],
                    "error": g.spec.error,
                    "captures": a.captures,
                    "syntax": self._syntax_text(g.nodes),
                    "alphabet": self._alphabet(name),
                }
            )
        return rows

    def _alphabet(self, name: str) -> str | None:
        tree = self.analyses[name].tree
        chars: set[str] = set()

        def walk(nodes: list[Any]) -> bool:
            for n in nodes:
                if n[0] == "lit":
                    chars.update(n[1])
                elif n[0] == "set":
                    chars.update(n[1])
                elif n[0] in ("seq", "rep"):
                    if not walk(n[1]):
                        return False
                elif n[0] == "alt":
                    if not all(walk(o) for o in n[1]):
                        return False
            return True

        # A negated class has no finite alphabet worth reporting against.
        if any(n for n in self._sets(self.spec.grammars[name].nodes) if n.startswith("^")):
            return None
        walk(tree)
        return "".join(sorted(chars))

    def _sets(self, nodes: Any) -> list[str]:
        from .ir import Alt, CharSet, Group, Opt, Ref, Rep

        out: list[str] = []
        for n in nodes:
            if isinstance(n, CharSet):
                out.append(n.body)
            elif isinstance(n, Ref):
                out += self._sets(self.spec.grammars[n.name].nodes)
            elif isinstance(n, (Opt, Rep, Group)):
                out += self._sets(n.nodes)
            elif isinstance(n, Alt):
                for o in n.options:
                    out += self._sets(o)
        return out

    def _syntax_text(self, nodes: Any) -> str:
        from .ir import Alt, CharSet, Group, Lit, Opt, Ref, Rep

        parts = []
        for n in nodes:
            if isinstance(n, Lit):
                parts.append(json.dumps(n.text, ensure_ascii=False))
            elif isinstance(n, CharSet):
                q = GrammarCompiler._quant(n.min, n.max)
                parts.append(f"[{n.body}]{q}")
            elif isinstance(n, Ref):
                parts.append(n.name)
            elif isinstance(n, Opt):
                parts.append(f"[ {self._syntax_text(n.nodes)} ]")
            elif isinstance(n, Group):
                parts.append(f"( {self._syntax_text(n.nodes)} )")
            elif isinstance(n, Rep):
                q = GrammarCompiler._quant(n.min, n.max)
                parts.append(f"( {self._syntax_text(n.nodes)} ){q}")
            elif isinstance(n, Alt):
                parts.append("( " + " | ".join(self._syntax_text(o) for o in n.options) + " )")
        return " ".join(parts)

    def _arg_grammars(self) -> tuple[dict, dict, dict]:
        grammars, required, one = {}, {}, {}
        for name, t in self.spec.profiles.meta_tools.items():
            props = t.input_schema.get("properties", {})
            g = {}
            for prop, schema in props.items():
                value = schema.get("x-grammar", [])
                g[prop] = tuple(value if isinstance(value, list) else [value])
            grammars[name] = g
            required[name] = tuple(t.input_schema.get("required", []))
            one[name] = tuple(t.input_schema.get("x-exactly-one-of", []))
        return grammars, required, one

    def context(self) -> dict[str, Any]:
        spec = self.spec
        b = spec.budgets
        grammars, required, one = self._arg_grammars()
        model_schemas = {n: self.resolver.standalone(n, "portable") for n in spec.models}
        input_schemas = {
            n: self.resolver.resolve(t.input_schema, "portable")
            for n, t in spec.profiles.meta_tools.items()
        }
        marker_nodes = spec.grammars[b.cache_stable.marker.id_grammar].nodes
        return {
            "spec_version": spec.surface.spec_version,
            "spec_hash": spec.spec_hash,
            "spec_hash_short": f"sha256 {spec.spec_hash[:16]}",
            "codes": list(spec.error_codes.items()),
            "payload_message_max": spec.models["ErrorPayload"].json_schema["properties"]["message"][
                "maxLength"
            ],
            "payload_path_max": spec.models["ErrorPayload"].json_schema["properties"]["path"][
                "maxLength"
            ],
            "grammars": self._grammar_rows(),
            "grammar_names": list(spec.grammars),
            "wire": spec.profiles.wire_encoding,
            "annotations": b.annotations,
            "annotation_tags": {
                hint: rule.tag
                for hint, rule in (
                    ("readOnlyHint", b.annotations.readOnlyHint),
                    ("destructiveHint", b.annotations.destructiveHint),
                )
                if rule.tag
            },
            "cost_hint_key": "costHint",
            "b": b,
            "render": b.render,
            "default_order": tuple((k.key, k.order == "desc") for k in b.ordering.default),
            "seen_order": (
                (
                    b.cache_stable.seen_prefix_order.key,
                    b.cache_stable.seen_prefix_order.order == "desc",
                ),
            ),
            "new_order": (
                (
                    b.cache_stable.new_suffix_order.key,
                    b.cache_stable.new_suffix_order.order == "desc",
                ),
            ),
            "marker_id": "".join(n.text for n in marker_nodes),  # type: ignore[union-attr]
            "card_rules": spec.models["ChoiceCard"].rules,
            "model_schemas": model_schemas,
            "input_schemas": input_schemas,
            "stripped_input_schema": spec.profiles.stripped_entry.input_schema,
            "profiles": list(spec.profiles.profiles.items()),
            "advertise_output_schemas": spec.profiles.advertise_output_schemas,
            "meta_tools": list(spec.profiles.meta_tools.items()),
            "profile_tools": {n: list(p.meta_tools) for n, p in spec.profiles.profiles.items()},
            "trees": {n: a.tree for n, a in self.analyses.items()},
            "spec_valid": {n: tuple(g.spec.plain(g.spec.valid)) for n, g in spec.grammars.items()},
            "spec_invalid": {
                n: tuple(g.spec.plain(g.spec.invalid)) for n, g in spec.grammars.items()
            },
            "natural_max": {n: a.max_len for n, a in self.analyses.items()},
            "arg_grammars": grammars,
            "arg_required": required,
            "arg_exactly_one": one,
            "requirements": spec.requirements,
            "amendments": list(spec.amendments.items()),
            "checks": self.emitted_checks(),
            "seed_facts": self._seed_facts(),
            "name_mapping": spec.name_mapping,
            "name_alphabet_class": _class_body(self._alphabet("name") or ""),
            "profile_facts": self._profile_facts(),
            "vector_files": self.vector_files(),
            "tool_id_fields": list(spec.models["ToolIdParts"].json_schema["properties"]),
        }

    def _seed_facts(self) -> list[dict[str, Any]]:
        claims: dict[str, list[tuple[str, Any]]] = {}
        for am_id, am in self.spec.amendments.items():
            for fact_id, value in am.changes.items():
                claims.setdefault(fact_id, []).append((am_id, value))
        out = []
        for fact_id, f in self.spec.seed_facts.items():
            amended = claims.get(fact_id, [])
            # what the amended spec states, from the amendment's own words (static checks have
            # made sure the spec holds it)
            spec_value = amended[0][1] if amended else f.value
            out.append(
                {
                    "id": fact_id,
                    "seed": f.seed,
                    "section": f.section,
                    "statement": f.statement,
                    "value": f.value,
                    "spec_value": spec_value,
                    "amended_by": [a for a, _ in amended],
                    "at": f.at,
                }
            )
        return out

    def _profile_facts(self) -> dict[str, str]:
        """profile -> the seed fact that states its meta-tools."""
        out = {}
        for fact_id, f in self.spec.seed_facts.items():
            for at in f.at:
                for profile in self.spec.profiles.profiles:
                    if at == f"profiles.yaml#profiles.{profile}.meta_tools":
                        out[profile] = fact_id
        return out

    # ------------------------------------------------------------ rendering

    def _render(self, template: str, sources: tuple[str, ...], ctx: dict[str, Any]) -> str:
        header_ctx = {**ctx, "sources": ", ".join(f"spec/{s}" for s in sources)}
        return self.env.get_template(template).render(**header_ctx)

    def _datamodel(
        self, ctx: dict[str, Any], sources: tuple[str, ...], doc: str, **options: Any
    ) -> str:
        """One module of the models from datamodel-code-generator, with our header."""
        bundle = self.resolver.bundle(list(self.spec.models), "rust")
        header = self._render("_header.j2", sources, ctx).rstrip("\n")
        code = generate(
            json.dumps(bundle, sort_keys=False),
            input_file_type=InputFileType.JsonSchema,
            disable_timestamp=True,
            target_python_version=PythonVersion.PY_311,
            use_standard_collections=True,
            use_union_operator=True,
            enum_field_as_literal="all",
            collapse_root_models=True,
            custom_file_header=f'{header}\n"""{doc}"""',
            formatters=[],
            **options,
        )
        assert isinstance(code, str)
        return code

    def _models(self, ctx: dict[str, Any]) -> str:
        return self._datamodel(
            ctx,
            ("models.yaml", "grammars.yaml"),
            "Models of the surface (models.yaml), generated by datamodel-code-generator.",
            output_model_type=DataModelType.PydanticV2BaseModel,
            use_annotated=True,
            field_constraints=True,
            extra_fields="forbid",
            use_schema_description=True,
            use_field_description=True,
        )

    def _records(self, ctx: dict[str, Any]) -> str:
        """Plain slotted dataclasses of the same models: cheap to build on hot paths (parsing),
        no validation (that is models.py's and validators.py's job)."""
        return self._datamodel(
            ctx,
            ("models.yaml",),
            "Plain records of the surface's models (no validation), for hot paths.",
            output_model_type=DataModelType.DataclassesDataclass,
            dataclass_arguments={"slots": True},
        )

    def render_to(self, out: Path, format_code: bool = True) -> None:
        """Write the whole generated tree under `out` (which must be empty or absent).
        format_code=False skips the formatter (for throw-away renders: it changes no behaviour)."""
        ctx = self.context()
        pkg = out / PACKAGE
        tests = out / "tests"
        for rel, (template, sources) in PACKAGE_FILES.items():
            path = pkg / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(self._render(template, sources, ctx), encoding="utf-8")
        (pkg / "models.py").write_text(self._models(ctx), encoding="utf-8")
        (pkg / "records.py").write_text(self._records(ctx), encoding="utf-8")
        (pkg / "py.typed").write_text("", encoding="utf-8")
        tests.mkdir(parents=True, exist_ok=True)
        for rel, (template, sources) in TEST_FILES.items():
            (tests / rel).write_text(self._render(template, sources, ctx), encoding="utf-8")
        if format_code:
            _format(out)
        self._write_vectors(out, ctx)

    def _write_vectors(self, out: Path, ctx: dict[str, Any]) -> None:
        """The spec's expected answers, checked against the package just rendered: any
        disagreement fails generation (the code is judged by the spec, never the reverse)."""
        module = _import_fresh(out)
        cases = build_cases(self.spec, self.analyses)
        checks.raise_if(disagreements(cases, module.run_case))
        by_file: dict[str, list[dict[str, Any]]] = {}
        for case in cases:
            case = dict(case)
            by_file.setdefault(case.pop("file"), []).append(case)
        vdir = out / PACKAGE / "vectors"
        for file, file_cases in sorted(by_file.items()):
            doc = {
                "$comment": "Generated from spec/vectors.yaml and spec/grammars.yaml; do not edit.",
                "$schema": "./meta-schema.json",
                "spec_version": ctx["spec_version"],
                "spec_hash": ctx["spec_hash"],
                "cases": file_cases,
            }
            (vdir / file).write_text(
                json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
            )
        (vdir / "meta-schema.json").write_text(
            json.dumps(meta_schema(self.spec), indent=1, ensure_ascii=False) + "\n",
            encoding="utf-8",
        )
        (vdir / "schemas.json").write_text(
            json.dumps(
                {"models": ctx["model_schemas"], "meta_tool_inputs": ctx["input_schemas"]},
                indent=1,
                ensure_ascii=False,
            )
            + "\n",
            encoding="utf-8",
        )


def _class_body(chars: str) -> str:
    """A regex character-class body matching exactly `chars` (escaped for Python's re)."""
    return "".join("\\" + c if c in "\\]^-[" else c for c in chars)


def _format(out: Path) -> None:
    ruff = [sys.executable, "-m", "ruff"]
    config = ["--config", str(Path(__file__).parent / "ruff.toml")]
    subprocess.run([*ruff, "check", "--fix-only", "--quiet", *config, str(out)], check=True)
    subprocess.run([*ruff, "format", "--quiet", *config, str(out)], check=True)


def _import_fresh(out: Path) -> Any:
    """Import the just-rendered package's vectors module, shadowing any installed copy."""
    for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
        del sys.modules[name]
    sys.path.insert(0, str(out))
    try:
        importlib.invalidate_caches()
        module = importlib.import_module(f"{PACKAGE}.vectors")
        assert Path(module.__file__).resolve().is_relative_to(out.resolve())
        return module
    finally:
        sys.path.remove(str(out))


def replace_tree(src: Path, dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(src, dest)
