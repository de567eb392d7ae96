"""The TypeScript target: the same IR and views as the Python surface, rendered through the
templates in templates/typescript/ into an npm package (generated-ts/).

What is language-neutral stays in the views (values, tables, schemas, the vectors); what is
TypeScript is here and in the templates: regex spelling, identifier case, the package files.
The hand-written algorithms (templates/typescript/_support/*.ts, the counterparts of
support/*.py) are copied verbatim. The vector files are the Python render's, byte for byte,
so both languages answer the same cases."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from .errors import SpecError
from .ts_types import model_types
from .views import Budgets, GrammarRow, Views

FOLDER = "generated-ts"
NPM_NAME = "gatespec-surface"
TEMPLATES = Path(__file__).parent / "templates" / "typescript"
SUPPORT = TEMPLATES / "_support"
# The package's dependencies, at the versions the project's own package.json pins for
# building and testing it (one place to bump them); runtime ones with a caret.
RUNTIME_DEPENDENCIES = ("ajv", "js-tiktoken")
BUILD_DEPENDENCIES = ("@types/node", "typescript")
ROOT_PACKAGE_JSON = Path(__file__).resolve().parent.parent / "package.json"
LICENSE = Path(__file__).resolve().parent.parent / "LICENSE"
# Build and pack outputs inside the package folder: never generated, never compared.
NOT_GENERATED = ("dist", "node_modules")


def _python_space_class() -> str:
    """Python's white space (what `str.isspace()` and `\\s` in a str pattern match) as the
    inside of a regex character class, derived from this interpreter rather than written out:
    ECMAScript's \\s differs (U+001C-U+001F and U+0085 in, U+FEFF out). The generator respells
    grammars with it, and the package's text rules import the same class (`PY_SPACE_MODULE`)."""
    points = [c for c in range(sys.maxunicode + 1) if chr(c).isspace()]
    runs: list[tuple[int, int]] = []
    for c in points:
        if runs and runs[-1][1] == c - 1:
            runs[-1] = (runs[-1][0], c)
        else:
            runs.append((c, c))

    def one(c: int) -> str:
        return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"

    return "".join(
        one(a) if a == b else f"{one(a)}{'-' if b > a + 1 else ''}{one(b)}" for a, b in runs
    )


# Python `re` spellings with another meaning (or none) in ECMAScript's unicode mode: \s is
# spelled out as Python's own white space.
_PY_SPACE = _python_space_class()
# The generated support module holding that class for the text rules (text.ts imports it).
PY_SPACE_MODULE = "pyspace.ts"
_SYNTAX = frozenset("^$\\.*+?()[]{}|/")
_KEPT_ESCAPES = frozenset("nrtfv0")


def ecmascript_regex(pattern: str, where: str) -> str:
    """A Python regex as ECMAScript source with the same meaning under the `u` flag: named
    groups respelled, \\s spelled out, identity escapes that unicode mode rejects dropped.
    Constructs whose meaning differs and that the spec does not use (\\w, \\b, inline flags,
    backreferences) are refused rather than approximated."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            nxt = pattern[i + 1]
            i += 2
            if nxt == "s":
                out.append(_PY_SPACE if in_class else f"[{_PY_SPACE}]")
            elif nxt == "S" and not in_class:
                out.append(f"[^{_PY_SPACE}]")
            elif nxt == "d":
                out.append("\\p{Nd}")
            elif nxt == "D" and not in_class:
                out.append("\\P{Nd}")
            elif nxt in "xu":
                width = 2 if nxt == "x" else 4
                out.append(pattern[i - 2 : i + width])
                i += width
            elif nxt in _SYNTAX or nxt in _KEPT_ESCAPES or (in_class and nxt == "-"):
                out.append("\\" + nxt)
            elif not nxt.isalnum():
                out.append(nxt)  # an identity escape of a plain character
            else:
                raise SpecError("grammars.yaml", where, f"no ECMAScript spelling for \\{nxt}")
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            if pattern.startswith("[^]", i) or pattern.startswith("[]", i):
                raise SpecError(
                    "grammars.yaml", where, "a class starting with ] differs in ECMAScript"
                )
        elif pattern.startswith("(?P<", i):
            out.append("(?<")
            i += 4
            continue
        elif pattern.startswith("(?", i) and not pattern.startswith(
            ("(?:", "(?=", "(?!", "(?<=", "(?<!"), i
        ):
            raise SpecError(
                "grammars.yaml", where, f"no ECMAScript spelling for {pattern[i : i + 4]!r}"
            )
        out.append(ch)
        i += 1
    return "".join(out)


def pascal(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def _js(value: Any, indent: int | None = None) -> str:
    """A JSON literal, which is also a TypeScript expression (ASCII only, key order kept)."""
    if isinstance(value, tuple):
        value = list(value)
    return json.dumps(value, ensure_ascii=True, indent=indent)


@dataclass(frozen=True)
class TsGrammarRow(GrammarRow):
    js_regex: str = ""


@dataclass(frozen=True)
class TsGrammars:
    grammars: tuple[TsGrammarRow, ...]


@dataclass(frozen=True)
class TsBudgets(Budgets):
    banned_js: tuple[str, ...] = ()


@dataclass(frozen=True)
class Package:
    npm_name: str
    spec_version: str
    spec_hash: str
    profiles: tuple[str, ...]
    files: tuple[str, ...]
    dependencies: dict[str, str]
    build_dependencies: dict[str, str]


@dataclass(frozen=True)
class Models:
    models: tuple[str, ...]


class TsViews:
    """The TypeScript views: the shared ones, plus what only this target needs."""

    def __init__(self, views: Views) -> None:
        self.v = views

    def package(self) -> Package:
        init = self.v.init()
        return Package(
            npm_name=NPM_NAME,
            spec_version=init.spec_version,
            spec_hash=init.spec_hash,
            profiles=init.profiles,
            files=tuple(self.v.vector_files),
            dependencies={d: f"^{v}" for d, v in pinned(RUNTIME_DEPENDENCIES).items()},
            build_dependencies=pinned(BUILD_DEPENDENCIES),
        )

    def grammars(self) -> TsGrammars:
        return TsGrammars(
            tuple(
                TsGrammarRow(**vars(g), js_regex=ecmascript_regex(g.regex, f"grammars.{g.name}"))
                for g in self.v.grammars().grammars
            )
        )

    def budgets(self) -> TsBudgets:
        b = self.v.budgets()
        banned = tuple(
            ecmascript_regex(p, "budgets.banned.stringified") for p in b.b.banned.stringified
        )
        return TsBudgets(**vars(b), banned_js=banned)

    def models(self) -> Models:
        return Models(tuple(model_types(self.v.schemas().model_schemas)))


def pinned(names: tuple[str, ...]) -> dict[str, str]:
    """The versions the project's package.json pins for building and testing the package."""
    pins = json.loads(ROOT_PACKAGE_JSON.read_text(encoding="utf-8")).get("devDependencies", {})
    missing = [d for d in names if d not in pins]
    if missing:
        raise SpecError("package.json", "devDependencies", f"missing {missing} (TypeScript target)")
    return {d: pins[d] for d in names}


@dataclass(frozen=True)
class TsOutput:
    path: str
    template: str
    sources: tuple[str, ...]
    view: Callable[[TsViews], object]


def _shared(method: Callable[[Views], object]) -> Callable[[TsViews], object]:
    return lambda ts: method(ts.v)


FILES: tuple[TsOutput, ...] = (
    TsOutput("src/index.ts", "index.ts.j2", ("surface.yaml", "profiles.yaml"), TsViews.package),
    TsOutput(
        "src/errors.ts", "errors.ts.j2", ("errors.yaml", "models.yaml"), _shared(Views.errors)
    ),
    TsOutput("src/grammars.ts", "grammars.ts.j2", ("grammars.yaml",), TsViews.grammars),
    TsOutput(
        "src/parsers.ts",
        "parsers.ts.j2",
        ("grammars.yaml", "profiles.yaml", "cards.yaml"),
        _shared(Views.parsers),
    ),
    TsOutput(
        "src/budgets.ts",
        "budgets.ts.j2",
        ("budgets.yaml", "cards.yaml", "browse.yaml", "firewall.yaml"),
        TsViews.budgets,
    ),
    TsOutput("src/render.ts", "render.ts.j2", ("cards.yaml",), _shared(Views.render)),
    TsOutput(
        "src/validators.ts",
        "validators.ts.j2",
        ("models.yaml", "cards.yaml"),
        _shared(Views.validators),
    ),
    TsOutput(
        "src/schemas.ts",
        "schemas.ts.j2",
        ("models.yaml", "profiles.yaml", "grammars.yaml"),
        _shared(Views.schemas),
    ),
    TsOutput("src/models.ts", "models.ts.j2", ("models.yaml", "grammars.yaml"), TsViews.models),
    TsOutput(
        "src/descriptors.ts", "descriptors.ts.j2", ("profiles.yaml",), _shared(Views.descriptors)
    ),
    TsOutput("src/tokens.ts", "tokens.ts.j2", ("budgets.yaml",), TsViews.package),
    TsOutput("src/truncate.ts", "truncate.ts.j2", ("cards.yaml",), TsViews.package),
    TsOutput("src/vectors.ts", "vectors.ts.j2", ("vectors.yaml",), TsViews.package),
    TsOutput("src/answers.ts", "answers.ts.j2", ("vectors.yaml",), TsViews.package),
    TsOutput("src/adapter.ts", "adapter.ts.j2", ("vectors.yaml",), TsViews.package),
    TsOutput("src/cli.ts", "cli.ts.j2", ("surface.yaml",), TsViews.package),
    TsOutput("test/vectors.test.ts", "vectors.test.ts.j2", ("vectors.yaml",), TsViews.package),
    TsOutput("test/surface.test.ts", "surface.test.ts.j2", ("profiles.yaml",), TsViews.package),
)
# Not TypeScript: no header comment (JSON has none); README carries its own.
PLAIN_FILES: tuple[TsOutput, ...] = (
    TsOutput("package.json", "package.json.j2", ("surface.yaml",), TsViews.package),
    TsOutput("tsconfig.json", "tsconfig.json.j2", (), TsViews.package),
    TsOutput("README.md", "README.md.j2", ("surface.yaml",), TsViews.package),
)


def environment(env: jinja2.Environment) -> jinja2.Environment:
    """The generator's template environment with the TypeScript filters added."""
    ts = env.overlay()
    ts.filters["js"] = _js
    ts.filters["pascal"] = pascal
    return ts


def render_to(env: jinja2.Environment, views: Views, out: Path, python_vectors: Path) -> None:
    """Write the TypeScript package under `out` (empty or absent); `python_vectors` is the
    freshly rendered Python package's vectors folder, whose JSON files are shared."""
    ts_env = environment(env)
    ts_views = TsViews(views)
    for output in (*FILES, *PLAIN_FILES):
        path = out / output.path
        path.parent.mkdir(parents=True, exist_ok=True)
        template = ts_env.get_template(f"typescript/{output.template}")
        text = template.render(header=views.header(output.sources), view=output.view(ts_views))
        path.write_text(text, encoding="utf-8")
    support = out / "src" / "_support"
    support.mkdir(parents=True, exist_ok=True)
    for source in sorted(SUPPORT.glob("*.ts")):
        note = f"// Copied from generator/templates/typescript/_support/{source.name} by `make generate`; do not edit.\n"
        (support / source.name).write_text(
            note + source.read_text(encoding="utf-8"), encoding="utf-8"
        )
    (support / PY_SPACE_MODULE).write_text(
        "// Written by generator/typescript.py from Python's str.isspace(); do not edit.\n"
        "/** Python's white space as the inside of a regex character class. */\n"
        f"export const PY_SPACE_CLASS = {json.dumps(_PY_SPACE)};\n",
        encoding="utf-8",
    )
    vectors = out / "vectors"
    vectors.mkdir(parents=True, exist_ok=True)
    for source in sorted(python_vectors.glob("*.json")):
        shutil.copyfile(source, vectors / source.name)
    shutil.copyfile(LICENSE, out / "LICENSE")


def tree(root: Path) -> dict[str, bytes]:
    """The generated files under `root` (build outputs left out)."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and p.relative_to(root).parts[0] not in NOT_GENERATED
        and not p.name.endswith(".tgz")
    }


def replace_generated(src: Path, dest: Path) -> None:
    """Put the fresh render in place, keeping build outputs (dist/, node_modules/)."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in tree(dest):
        (dest / name).unlink()
    for name in tree(src):
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / name, dest / name)
    for folder in sorted((p for p in dest.rglob("*") if p.is_dir()), reverse=True):
        if folder.relative_to(dest).parts[0] not in NOT_GENERATED and not any(folder.iterdir()):
            folder.rmdir()
