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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from datamodel_code_generator import (
    DataModelType,
    InputFileType,
    LiteralType,
    PythonVersion,
    generate,
)

from . import checks, coverage, spec_schema, typescript
from .facts import FactChecker
from .grammar import Analysis, GrammarCompiler
from .ir import Spec
from .schema import SchemaResolver
from .seed_text import Seeds, seed_folder
from .vectors import build_cases, disagreements, meta_schema
from .views import RECORD_MODELS, Views

PACKAGE = "gatespec_surface"
TEMPLATES = Path(__file__).parent / "templates"
SUPPORT = Path(__file__).parent / "support"
SUPPORT_PACKAGE = "_support"
# The project's licence, copied into generated/ so that the surface's own distribution,
# built from generated/ alone, carries it.
LICENSE = Path(__file__).resolve().parent.parent / "LICENSE"


@dataclass(frozen=True)
class Output:
    """One rendered file: its path, its template, the spec files it derives from and the
    view-model its template receives."""

    path: str
    template: str
    sources: tuple[str, ...]
    view: Callable[[Views], object]


PACKAGE_FILES: tuple[Output, ...] = (
    Output("__init__.py", "init.py.j2", ("surface.yaml", "profiles.yaml"), Views.init),
    Output("errors.py", "errors.py.j2", ("errors.yaml", "models.yaml"), Views.errors),
    Output("grammars.py", "grammars.py.j2", ("grammars.yaml",), Views.grammars),
    Output(
        "parsers.py",
        "parsers.py.j2",
        ("grammars.yaml", "profiles.yaml", "cards.yaml"),
        Views.parsers,
    ),
    Output(
        "budgets.py",
        "budgets.py.j2",
        ("budgets.yaml", "cards.yaml", "browse.yaml", "firewall.yaml"),
        Views.budgets,
    ),
    Output("render.py", "render.py.j2", ("cards.yaml",), Views.render),
    Output("text.py", "text.py.j2", ("cards.yaml",), Views.init),
    Output("validators.py", "validators.py.j2", ("models.yaml", "cards.yaml"), Views.validators),
    Output(
        "schemas.py",
        "schemas.py.j2",
        ("models.yaml", "profiles.yaml", "grammars.yaml"),
        Views.schemas,
    ),
    Output("descriptors.py", "descriptors.py.j2", ("profiles.yaml",), Views.descriptors),
    Output("operations.py", "operations.py.j2", ("profiles.yaml",), Views.operations),
    Output(
        "strategies.py",
        "strategies.py.j2",
        ("grammars.yaml", "models.yaml", "profiles.yaml"),
        Views.strategies,
    ),
    Output(
        "requirements.py",
        "requirements.py.j2",
        ("requirements.yaml", "amendments.yaml"),
        Views.requirements,
    ),
    Output(
        "seed_facts.py",
        "seed_facts.py.j2",
        ("seed_facts.yaml", "amendments.yaml"),
        Views.seed_facts,
    ),
    Output("vectors/__init__.py", "vectors_init.py.j2", ("vectors.yaml",), Views.vectors),
)
# generated/ is also the project folder of the surface's own distribution (gatespec-surface).
DIST_FILES: tuple[Output, ...] = (
    Output("pyproject.toml", "surface_pyproject.toml.j2", ("surface.yaml",), Views.init),
    Output("README.md", "surface_README.md.j2", ("surface.yaml",), Views.init),
)
TEST_FILES: tuple[Output, ...] = (
    Output("test_grammars.py", "test_grammars.py.j2", ("grammars.yaml",), Views.test_grammars),
    Output(
        "test_descriptors.py",
        "test_descriptors.py.j2",
        ("profiles.yaml",),
        Views.test_descriptors,
    ),
    Output("test_vectors.py", "test_vectors.py.j2", ("vectors.yaml",), Views.nothing),
)


def _docstring(text: str) -> str:
    return " ".join(text.split()).replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


def _environment(templates: Path | None) -> jinja2.Environment:
    """Built-in templates, each overridden by a file of the same name in `templates`."""
    builtin = jinja2.FileSystemLoader(TEMPLATES)
    loader: jinja2.BaseLoader = builtin
    if templates is not None:
        loader = jinja2.ChoiceLoader([jinja2.FileSystemLoader(templates), builtin])
    env = jinja2.Environment(
        loader=loader,
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
    def __init__(self, spec: Spec, project_root: Path, templates: Path | None = None) -> None:
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
        self.env = _environment(templates)
        self._vector_files = sorted({c["file"] for c in build_cases(spec, self.analyses)})
        self.views = Views(spec, self.analyses, self.caps, self.resolver, self._vector_files)

    # ------------------------------------------------------------ checks

    def check_nodes(self) -> dict[str, str]:
        """Check id -> the pytest node that performs it (coverage.py)."""
        return coverage.check_nodes(self.spec, self.analyses, self.vector_files())

    def vector_files(self) -> list[str]:
        return list(self._vector_files)

    def seeds(self) -> Seeds:
        """The seed texts the spec cites (../shared/seeds beside the checkout)."""
        files = {n: info.file for n, info in self.spec.surface.seeds.items()}
        return Seeds(seed_folder(self.project_root), files)

    def static_checks(self) -> None:
        errors = checks.grammar_checks(self.spec, self.compiler, self.analyses)
        errors += checks.budget_checks(self.spec)
        errors += checks.requirement_checks(self.spec, self.check_nodes(), self.project_root)
        facts = FactChecker(
            self.spec, self.spec.raw, self.compiler, self.analyses, self.caps, self.seeds()
        )
        errors += facts.citations()
        errors += facts.amendment_scope()
        errors += facts.check()
        errors += checks.seed_verdicts(self.spec)
        errors += checks.unreferenced_amendments(
            self.spec, build_cases(self.spec, self.analyses), self.project_root
        )
        errors += facts.accounting()
        errors += facts.restated()
        checks.raise_if(errors)

    # ------------------------------------------------------------ rendering

    def render(self, output: Output) -> str:
        template = self.env.get_template(output.template)
        return template.render(
            header=self.views.header(output.sources), view=output.view(self.views)
        )

    def _datamodel(
        self, sources: tuple[str, ...], names: list[str], doc: str, **options: Any
    ) -> str:
        """One module of models from datamodel-code-generator, with our header."""
        bundle = self.resolver.bundle(names, "rust")
        header = self.env.get_template("_header.j2").render(header=self.views.header(sources))
        code = generate(
            json.dumps(bundle, sort_keys=False),
            input_file_type=InputFileType.JsonSchema,
            disable_timestamp=True,
            target_python_version=PythonVersion.PY_311,
            use_standard_collections=True,
            use_union_operator=True,
            enum_field_as_literal=LiteralType.All,
            collapse_root_models=True,
            custom_file_header=f'{header.rstrip()}\n"""{doc}"""',
            formatters=[],
            **options,
        )
        assert isinstance(code, str)
        return code

    def _models(self) -> str:
        return self._datamodel(
            ("models.yaml", "grammars.yaml"),
            list(self.spec.models),
            "Models of the surface (models.yaml), generated by datamodel-code-generator.",
            output_model_type=DataModelType.PydanticV2BaseModel,
            use_annotated=True,
            field_constraints=True,
            extra_fields="forbid",
            use_schema_description=True,
            use_field_description=True,
        )

    def _records(self) -> str:
        """Plain slotted dataclasses of the models parsers build on hot paths (no validation:
        that is models.py's and validators.py's job)."""
        return self._datamodel(
            ("models.yaml",),
            list(RECORD_MODELS),
            "Plain records of the models parsers build on hot paths (no validation).",
            output_model_type=DataModelType.DataclassesDataclass,
            dataclass_arguments={"slots": True},
        )

    def render_to(self, out: Path, format_code: bool = True, check_answers: bool = True) -> None:
        """Write the whole generated tree under `out` (which must be empty or absent).
        format_code=False skips the formatter (for throw-away renders: it changes no behaviour);
        check_answers=False writes the vectors even where the code disagrees with them (the
        mutation report judges such renders in each language)."""
        pkg = out / PACKAGE
        tests = out / "tests"
        for output in PACKAGE_FILES:
            path = pkg / output.path
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(self.render(output), encoding="utf-8")
        (pkg / "models.py").write_text(self._models(), encoding="utf-8")
        (pkg / "records.py").write_text(self._records(), encoding="utf-8")
        (pkg / "py.typed").write_text("", encoding="utf-8")
        tests.mkdir(parents=True, exist_ok=True)
        for output in TEST_FILES:
            (tests / output.path).write_text(self.render(output), encoding="utf-8")
        for output in DIST_FILES:
            (out / output.path).write_text(self.render(output), encoding="utf-8")
        shutil.copyfile(LICENSE, out / "LICENSE")
        if format_code:
            _format(out)
        _copy_support(pkg / SUPPORT_PACKAGE)  # formatted already: copied verbatim
        self._write_vectors(out, check_answers)
        spec_schema.write(out / spec_schema.FOLDER)

    def render_typescript_to(self, out: Path, python_out: Path) -> None:
        """Write the TypeScript package under `out` from the same views; `python_out` is a
        finished Python render, whose vector files both packages ship."""
        typescript.render_to(self.env, self.views, out, python_out / PACKAGE / "vectors")

    def _write_vectors(self, out: Path, check_answers: bool = True) -> None:
        """The spec's expected answers, checked against the package just rendered: any
        disagreement fails generation (the code is judged by the spec, never the reverse)."""
        cases = build_cases(self.spec, self.analyses)
        if check_answers:
            checks.raise_if(disagreements(cases, _import_fresh(out).run_case))
        by_file: dict[str, list[dict[str, Any]]] = {}
        for case in cases:
            case = dict(case)
            by_file.setdefault(case.pop("file"), []).append(case)
        vdir = out / PACKAGE / "vectors"
        for file, file_cases in sorted(by_file.items()):
            doc = {
                "$comment": "Generated from spec/vectors.yaml and spec/grammars.yaml; do not edit.",
                "$schema": "./meta-schema.json",
                "spec_version": self.spec.surface.spec_version,
                "spec_hash": self.spec.spec_hash,
                "cases": file_cases,
            }
            _write_json(vdir / file, doc)
        _write_json(vdir / "meta-schema.json", meta_schema(self.spec))
        schemas = self.views.schemas()
        _write_json(
            vdir / "schemas.json",
            {"models": schemas.model_schemas, "meta_tool_inputs": schemas.input_schemas},
        )


def _write_json(path: Path, doc: Any) -> None:
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _copy_support(dest: Path) -> None:
    """generator/support/*.py into the package, each with a line saying where it came from."""
    dest.mkdir(parents=True, exist_ok=True)
    for source in sorted(SUPPORT.glob("*.py")):
        note = f"# Copied from generator/support/{source.name} by `make generate`; do not edit.\n"
        (dest / source.name).write_text(note + source.read_text(encoding="utf-8"), encoding="utf-8")


def _format(out: Path) -> None:
    ruff = [sys.executable, "-m", "ruff"]
    config = ["--config", str(Path(__file__).parent / "ruff.toml")]
    subprocess.run([*ruff, "check", "--fix-only", "--quiet", *config, str(out)], check=True)
    subprocess.run([*ruff, "format", "--quiet", *config, str(out)], check=True)


def _import_fresh(out: Path) -> Any:
    """Import the just-rendered package's vectors module, shadowing any installed copy; the
    modules imported before are back in place on return."""
    ours = [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]
    saved = {name: sys.modules.pop(name) for name in ours}
    sys.path.insert(0, str(out))
    try:
        importlib.invalidate_caches()
        module = importlib.import_module(f"{PACKAGE}.vectors")
        assert Path(str(module.__file__)).resolve().is_relative_to(out.resolve())
        return module
    finally:
        sys.path.remove(str(out))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]
        sys.modules.update(saved)


def replace_tree(src: Path, dest: Path) -> None:
    """Make `dest` hold exactly `src`'s files, rewriting only those whose bytes differ: an
    unchanged file keeps its modification time, so make targets that depend on it (the
    install stamp) do not rerun after a spec edit that did not change it."""
    fresh = {p.relative_to(src) for p in src.rglob("*") if p.is_file()}
    if dest.exists():
        for path in sorted(dest.rglob("*"), reverse=True):
            rel = path.relative_to(dest)
            if path.is_file() and rel not in fresh and "__pycache__" not in rel.parts:
                path.unlink()
            elif path.is_dir() and "__pycache__" not in rel.parts and not any(path.iterdir()):
                path.rmdir()
    for rel in sorted(fresh):
        target = dest / rel
        data = (src / rel).read_bytes()
        if target.is_file() and target.read_bytes() == data:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
