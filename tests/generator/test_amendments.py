"""A spec amendment is a YAML edit plus regeneration: each edit here, made to a temporary copy of
spec/, must reach the parsers, the strategies, the vectors and the MCP descriptors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from generator.typescript import FOLDER as TS_FOLDER
from generator.typescript import tree as ts_tree

ROOT = Path(__file__).resolve().parents[2]


def _regenerate(tmp_path: Path, edit) -> Path:
    spec = tmp_path / "spec"
    shutil.copytree(ROOT / "spec", spec)
    edit(spec)
    out = tmp_path / "generated"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "generator",
            "--spec",
            str(spec),
            "--out",
            str(out),
            "--root",
            str(ROOT),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def _probe(out: Path, code: str) -> object:
    """Run `code` against the regenerated package (not the installed one); it prints JSON."""
    env = {**os.environ, "PYTHONPATH": str(out)}
    script = "import json, sys\n" + textwrap.dedent(code)
    proc = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, cwd=out
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _edit_yaml(path: Path, change) -> None:
    """Edit a spec file through a YAML round trip (comments are not needed in the copy)."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


def _shrink_namespace(spec: Path) -> None:
    def change(d: dict) -> None:
        d["grammars"]["namespace"]["syntax"][1]["max"] = 15  # namespace now ≤ 16 chars
        d["grammars"]["tool_id"]["max_length"] = 235 - 48  # keeps the cap reachable
        d["grammars"]["namespace"]["valid"] = ["github", "a"]

    _edit_yaml(spec / "grammars.yaml", change)


def test_departing_from_a_seed_without_an_amendment_fails_generation(tmp_path: Path) -> None:
    spec = tmp_path / "spec"
    shutil.copytree(ROOT / "spec", spec)
    _shrink_namespace(spec)
    proc = subprocess.run(
        [sys.executable, "-m", "generator", "check", "--spec", str(spec), "--root", str(ROOT)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert "grammars.yaml: grammars.namespace.syntax: seed 000 §1.1 states" in proc.stderr
    assert "name an amendment that changes S000-GRAMMAR-NAMESPACE" in proc.stderr


def _amend_namespace_cap(spec: Path) -> None:
    _shrink_namespace(spec)
    short_ns = "[a-z][a-z0-9_-]{0,15}"
    amendment = {
        "title": "Namespaces of at most 16 characters",
        # S000-PATH-GRAMMAR sits in §3.2: an amendment names every section it changes
        "amends": [{"seed": "000", "section": "1.1"}, {"seed": "000", "section": "3.2"}],
        "kind": "change",
        "changes": {
            "S000-GRAMMAR-NAMESPACE": short_ns,
            "S000-GRAMMAR-TOOL-ID": f"(?:{short_ns}):(?:[A-Za-z_][A-Za-z0-9_.-]{{0,127}})"
            "(?:@(?:[A-Za-z0-9._-]{1,32}))?(?:#(?:[0-9a-f]{8}))?",
            "S000-TOOLID-MAX-LENGTH": 187,
            "S000-PATH-GRAMMAR": rf"\/(?:(?:(?:{short_ns})(?:\/(?:[a-z0-9][a-z0-9_-]{{0,63}}))"
            r"{0,6}(?:\/\*)?|\*))?",
        },
        "decision": "A namespace is at most 16 characters.",
        "rationale": "A test of how an amendment reaches every output.",
    }
    _edit_yaml(spec / "amendments.yaml", lambda d: d["amendments"].update(AM_SHORT=amendment))


@pytest.fixture(scope="module")
def amended(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package regenerated from one copy of spec/ carrying the three amendments below: each
    test probes its own amendment's outputs (the edits touch disjoint parts of the spec), and
    the generator runs once instead of once per amendment."""

    def edit(spec: Path) -> None:
        _amend_namespace_cap(spec)
        _amend_error_codes(spec)
        _amend_card_fields(spec)

    return _regenerate(tmp_path_factory.mktemp("amended"), edit)


def test_shrinking_the_namespace_cap_reaches_every_output(amended: Path) -> None:
    result = _probe(
        amended,
        """
        from hypothesis import given, settings, strategies as st
        from gatespec_surface import parsers, grammars, strategies, schemas
        from gatespec_surface.errors import CatalogError
        from gatespec_surface.vectors import load_cases
        import os
        assert grammars.__file__.startswith(os.getcwd()), grammars.__file__  # the regenerated copy
        ok = parsers.parse_tool_id("a" * 16 + ":x").namespace
        try:
            parsers.parse_tool_id("a" * 17 + ":x")
            rejected = None
        except CatalogError as exc:
            rejected = exc.code.value
        lengths = []
        @settings(max_examples=200, database=None)
        @given(strategies.valid("namespace"))
        def draw(v):
            lengths.append(len(v))
        draw()
        longest = [c["input"]["value"] for c in load_cases() if c["name"].startswith("namespace/longest")]
        pattern = schemas.META_TOOL_INPUT_SCHEMAS["tool_execute"]["properties"]["tool_id"]["anyOf"][0]["pattern"]
        print(json.dumps({"ok": ok, "rejected": rejected, "max_drawn": max(lengths),
                          "longest_vector": len(longest[0]), "pattern": pattern,
                          "tool_id_max": grammars.TOOL_ID_MAX_LENGTH}))
        """,
    )
    assert result["ok"] == "a" * 16
    assert result["rejected"] == "CATALOG_ERROR"
    assert result["max_drawn"] == 16  # the strategies reach the new cap, never beyond
    assert result["longest_vector"] == 16
    assert "{0,15}" in result["pattern"] and "{0,63}" not in result["pattern"].split(":")[0]
    assert result["tool_id_max"] == 187


def _amend_error_codes(spec: Path) -> None:
    _edit_yaml(
        spec / "errors.yaml",
        lambda d: d["codes"].update(
            RATE_LIMITED={
                "summary": "The upstream asked us to slow down.",
                "source": {"seed": "001", "section": "Execution Policies"},
            }
        ),
    )
    _edit_yaml(
        spec / "profiles.yaml",
        lambda d: d["meta_tools"]["tool_execute"]["errors"].append("RATE_LIMITED"),
    )

    # seed 002 lists six codes: the (latest) amendment that widens them has to say so
    def widen(d: dict) -> None:
        last = [a for a in d["amendments"].values() if "S002-ERROR-CODE-UNION" in a.get("changes", {})][-1]  # fmt: skip
        last["changes"]["S002-ERROR-CODE-UNION"].append("RATE_LIMITED")

    _edit_yaml(spec / "amendments.yaml", widen)


def test_a_new_error_code_reaches_enum_payload_descriptors_and_vectors(amended: Path) -> None:
    result = _probe(
        amended,
        """
        from gatespec_surface.errors import ErrorCode, GatewayError
        from gatespec_surface.descriptors import META_TOOL_ERRORS
        from gatespec_surface.models import ErrorPayload
        from gatespec_surface.schemas import MODEL_SCHEMAS
        payload = GatewayError("RATE_LIMITED", "slow down").to_payload()
        ErrorPayload.model_validate(payload)
        meta = json.load(open("gatespec_surface/vectors/meta-schema.json"))
        enum = meta["properties"]["cases"]["items"]["properties"]["expect"]["oneOf"][1]["properties"]["error"]["enum"]
        print(json.dumps({"enum": ErrorCode.RATE_LIMITED.value,
                          "execute": [c.value for c in META_TOOL_ERRORS["tool_execute"]],
                          "schema": MODEL_SCHEMAS["ErrorPayload"]["properties"]["error"]["enum"],
                          "vectors": enum}))
        """,
    )
    assert result["enum"] == "RATE_LIMITED"
    assert "RATE_LIMITED" in result["execute"]
    assert "RATE_LIMITED" in result["schema"]
    assert "RATE_LIMITED" in result["vectors"]


def _amend_card_fields(spec: Path) -> None:
    def add_title(d: dict) -> None:
        d["models"]["ChoiceCard"]["schema"]["properties"]["title"] = {
            "type": "string",
            "maxLength": 40,
        }
        # the model rests on the amendment (an amendment nothing names fails generation)
        d["models"]["ChoiceCard"]["amendments"] = ["AM_TITLE"]

    _edit_yaml(spec / "models.yaml", add_title)
    # §2.1: "No other field may be added to the rendered card without a spec amendment."
    fields = "id name description tags kind namespace has_schema score cost_hint side_effects"
    amendment = {
        "title": "Cards carry a title",
        "amends": {"seed": "000", "section": "2.1"},
        "kind": "change",
        "changes": {"S000-CARD-FIELDS": [*fields.split(), "title"]},
        "decision": "A card may carry a title of at most 40 characters.",
        "rationale": "A test of how a new field reaches every output.",
    }
    _edit_yaml(spec / "amendments.yaml", lambda d: d["amendments"].update(AM_TITLE=amendment))
    _edit_yaml(
        spec / "extensions.yaml",
        lambda d: d["extensions"]["models.yaml"].update(
            {"models.ChoiceCard.schema.properties.title.maxLength": "A short title."}
        ),
    )


def test_a_new_card_field_reaches_models_validators_and_output_schemas(amended: Path) -> None:
    result = _probe(
        amended,
        """
        from gatespec_surface.validators import choice_card_violations
        from gatespec_surface.descriptors import output_schema
        card = {"id": "github:create_issue@1", "name": "create_issue", "description": "d", "tags": [],
                "kind": "tool", "namespace": "github", "has_schema": True}
        out = output_schema("tool_browse")
        print(json.dumps({"with_title": choice_card_violations({**card, "title": "Create"}),
                          "long_title": choice_card_violations({**card, "title": "x" * 41}),
                          "output_has_title": "title" in out["$defs"]["ChoiceCard"]["properties"]}))
        """,
    )
    assert result["with_title"] == []
    assert result["long_title"]  # the bound travelled too
    assert result["output_has_title"]


def test_check_mode_reports_drift_with_a_diff(fresh_generation: Path, tmp_path: Path) -> None:
    shutil.copytree(fresh_generation, tmp_path, dirs_exist_ok=True)  # with its generated-ts/
    out = tmp_path / "generated"
    target = out / "gatespec_surface" / "budgets.py"
    target.write_text(
        target.read_text().replace(
            "CARD_HARD_CAP_TOKENS: Final = 80", "CARD_HARD_CAP_TOKENS: Final = 81"
        )
    )
    proc = subprocess.run(
        [sys.executable, "-m", "generator", "--check", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert "-CARD_HARD_CAP_TOKENS: Final = 81" in proc.stdout
    assert "+CARD_HARD_CAP_TOKENS: Final = 80" in proc.stdout


def _files(root: Path) -> dict[Path, bytes]:
    return {
        p.relative_to(root): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.mark.parametrize("seed", ["0", "4242"])
def test_output_is_identical_across_hash_seeds(
    fresh_generation: Path, tmp_path: Path, seed: str
) -> None:
    if seed == "0":
        out = fresh_generation / "generated"  # rendered under PYTHONHASHSEED=0
    else:
        out = tmp_path / "generated"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run(
            [sys.executable, "-m", "generator", "--out", str(out)],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
        )
    assert _files(out) == _files(ROOT / "generated")
    assert ts_tree(out.parent / TS_FOLDER) == ts_tree(ROOT / TS_FOLDER)  # the TypeScript too
