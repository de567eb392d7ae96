"""The generated meta-tool operations (gatespec_surface.operations): typed argument classes, the
protocol a runtime implements and the dispatch to it. A spec rename must break generation or
type checking, never a call at run time."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from gatespec_surface import operations
from gatespec_surface.descriptors import PROFILES
from gatespec_surface.schemas import META_TOOL_INPUT_SCHEMAS
from generator.errors import SpecError
from generator.ir import load_spec
from generator.views import Views
from tests.generator.specs import edited_spec

ROOT = Path(__file__).resolve().parents[2]


class Recorder:
    """Implements every meta-tool by recording what it was called with."""

    def __getattr__(self, name: str) -> Any:
        async def op(caller: Any, args: Any) -> tuple[str, Any, Any]:
            return name, caller, args

        return op


def test_every_meta_tool_of_every_profile_dispatches_to_its_own_method() -> None:
    tools = {t for p in PROFILES.values() for t in p.meta_tools}
    assert tools == set(operations.META_TOOL_ARGUMENTS) == set(META_TOOL_INPUT_SCHEMAS)
    for tool in sorted(tools):
        schema = META_TOOL_INPUT_SCHEMAS[tool]
        args = {name: [] if prop.get("type") == "array" else "x"
                for name, prop in schema["properties"].items()}  # fmt: skip
        name, caller, typed = anyio.run(
            lambda t=tool, a=args: operations.call_meta_tool(Recorder(), t, "me", a)
        )
        assert (name, caller, type(typed)) == (tool, "me", operations.META_TOOL_ARGUMENTS[tool])
        # one field per argument of the input schema, named after it
        assert set(typed.__slots__) == set(schema["properties"])
    with pytest.raises(KeyError):
        operations.call_meta_tool(Recorder(), "no_such_tool", "me", {})


def test_defaults_and_optional_arguments() -> None:
    assert (
        operations.SearchArgs.of({}).limit
        == META_TOOL_INPUT_SCHEMAS["search"]["properties"]["limit"]["default"]
    )
    assert operations.SearchArgs.of({}).query is None
    assert operations.ToolViewArgs.of({"handle": "h"}).selector == "all"


def test_an_argument_that_is_no_identifier_is_refused(tmp_path: Path) -> None:
    def rename(d: dict[str, Any]) -> None:
        props = d["meta_tools"]["tool_view"]["input_schema"]["properties"]
        props["class"] = props.pop("selector")

    spec = load_spec(edited_spec(tmp_path, "profiles.yaml", rename))
    from generator.emit import Generator

    views: Views = Generator(spec, ROOT).views
    with pytest.raises(SpecError, match="'class' is not a Python identifier"):
        views.operations()


def _regenerate(tmp_path: Path, edit: Any) -> subprocess.CompletedProcess[str]:
    spec = edited_spec(tmp_path, "profiles.yaml", edit)
    argv = [sys.executable, "-m", "generator", "--spec", str(spec), "--out"]
    argv += [str(tmp_path / "generated"), "--root", str(ROOT)]
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)


@pytest.mark.slow  # a cold mypy run (~10 s): `make test-slow`
def test_renaming_an_argument_breaks_type_checking(tmp_path: Path) -> None:
    """search's namespace renamed in profiles.yaml: generation succeeds, and mypy finds every
    place the runtime still reads the old name."""

    def rename(d: dict[str, Any]) -> None:
        props = d["meta_tools"]["search"]["input_schema"]["properties"]
        d["meta_tools"]["search"]["input_schema"]["properties"] = {
            ("within" if k == "namespace" else k): v for k, v in props.items()
        }

    assert _regenerate(tmp_path, rename).returncode == 0
    env = {**os.environ, "MYPYPATH": str(tmp_path / "generated")}
    argv = [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "mypy")]
    checked = subprocess.run(
        [*argv, "src/gatespec/profiles/search.py"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 1, checked.stdout
    assert '"SearchArgs" has no attribute "namespace"' in checked.stdout


def test_renaming_a_meta_tool_breaks_generation(tmp_path: Path) -> None:
    def rename(d: dict[str, Any]) -> None:
        d["meta_tools"]["describe"] = d["meta_tools"].pop("schema")
        tools = d["profiles"]["search"]["meta_tools"]
        d["profiles"]["search"]["meta_tools"] = ["describe" if t == "schema" else t for t in tools]

    done = _regenerate(tmp_path, rename)
    assert done.returncode != 0 and "S003-SEARCH-META-TOOLS" in done.stdout + done.stderr
