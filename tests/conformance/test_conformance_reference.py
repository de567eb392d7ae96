"""gatespec's own adapter passes everything; cases are reproducible; vectors export."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from gatespec_conformance import cli
from gatespec_conformance.functions.protocol import all_functions
from gatespec_conformance.functions.run import build_cases, run_cases, vector_cases
from gatespec_conformance.report import Outcome
from gatespec_surface import SPEC_HASH, SPEC_VERSION
from gatespec_surface.vectors import FUNCTIONS, VECTOR_FILES, load_cases

REFERENCE = [sys.executable, "-m", "gatespec.adapter"]
MINIMAL = Path(__file__).resolve().parents[2] / "docs" / "examples" / "adapter_minimal.py"


@pytest.fixture(scope="module")
def cases():
    notes: list[str] = []
    found = build_cases(seed=0, max_examples=3, notes=notes)
    assert notes == []  # the kit's oracle answers every drawn input
    return found


def test_reference_adapter_passes_every_case(cases) -> None:
    results, info = run_cases(REFERENCE, cases)
    failed = [r for r in results if r.outcome is not Outcome.PASS]
    assert [(r.name, r.reason) for r in failed] == []
    assert len(results) == len(cases)
    assert info.implementation.startswith("gatespec ") and info.spec_version == SPEC_VERSION
    assert info.restarts == 0


def test_every_vector_case_is_sent_with_a_unique_name(cases) -> None:
    vectors = vector_cases()
    assert len(vectors) == len(load_cases())
    names = [c.name for c in cases]
    assert len(set(names)) == len(names)
    assert {c.name for c in vectors} <= set(names)
    assert all(n.startswith("functions/") for n in names)


def test_drawn_families_cover_every_function(cases) -> None:
    drawn = {c.function for c in cases if "/vectors/" not in c.name}
    assert drawn == set(all_functions())


def test_requirements_come_from_the_generated_table(cases) -> None:
    by_name = {c.name: c for c in cases}
    tool_id_valid = next(c for n, c in by_name.items() if "grammar_match/tool_id/valid/" in n)
    assert "TOOLID-GRAMMAR" in tool_id_valid.requirement_ids
    hash_vector = next(c for n, c in by_name.items() if n.startswith("functions/hash8/vectors/"))
    assert {"HASH-INPUT", "HASH-CANONICAL-SHAPE"} <= set(hash_vector.requirement_ids)
    assert all(r.level in {"MUST", "MUST NOT", "SHOULD", "MAY"} for r in hash_vector.requirements)


def test_same_seed_same_cases_in_other_processes() -> None:
    script = (
        "import json, sys\n"
        "from gatespec_conformance.functions.run import build_cases\n"
        "json.dump([[c.name, c.input, c.expect] for c in build_cases(7, 3)], sys.stdout)\n"
    )

    def cases_with(hashseed: str) -> str:
        env = {**os.environ, "PYTHONHASHSEED": hashseed}
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
        )
        return done.stdout

    first = cases_with("1")
    assert first == cases_with("2")
    here = [[c.name, c.input, c.expect] for c in build_cases(7, 3)]
    assert json.loads(first) == json.loads(json.dumps(here))
    other = [[c.name, c.input, c.expect] for c in build_cases(8, 3)]
    assert other != here


def test_max_examples_zero_sends_only_vectors() -> None:
    assert [c.name for c in build_cases(0, 0)] == [c.name for c in vector_cases()]


def test_cli_default_run_checks_the_reference(capsys, tmp_path) -> None:
    out = tmp_path / "report.json"
    status = cli.main(
        [
            "functions",
            "--max-examples",
            "1",
            "-q",
            "--format",
            "json",
            "-o",
            str(out),
        ]
    )
    report = json.loads(out.read_text())
    assert status == 0 and report["ok"] is True
    assert (
        report["summary"]["fail"] == 0 and report["summary"]["pass"] == report["summary"]["total"]
    )
    assert report["info"]["implementation"].startswith("gatespec")


def test_minimal_example_adapter_passes_what_it_supports() -> None:
    cases = build_cases(0, 3)
    results, info = run_cases([sys.executable, str(MINIMAL)], cases)
    by = {r.name: r for r in results}
    assert info.implementation == "adapter_minimal 0.1"
    assert [r.name for r in results if r.outcome is Outcome.FAIL] == []
    passed = {c.function for c in cases if by[c.name].outcome is Outcome.PASS}
    assert passed == {"grammar_match", "hash8"}
    skipped = [r for r in results if r.outcome is Outcome.SKIP]
    assert skipped and all(r.reason.startswith("unsupported by the adapter") for r in skipped)


def test_vectors_export(tmp_path) -> None:
    assert cli.main(["vectors", "export", str(tmp_path)]) == 0
    index = json.loads((tmp_path / "index.json").read_text())
    assert index["spec_version"] == SPEC_VERSION and index["spec_hash"] == SPEC_HASH
    names = {f["name"] for f in index["files"]}
    assert names == {*VECTOR_FILES, "meta-schema.json", "schemas.json"}
    assert [f["name"] for f in index["functions"]] == [
        *FUNCTIONS,
        "truncate_description",
        "count_tokens",
    ]
    meta = json.loads((tmp_path / "meta-schema.json").read_text())
    for name in VECTOR_FILES:
        jsonschema.validate(json.loads((tmp_path / name).read_text()), meta)
    fns = {f["name"]: f for f in index["functions"]}
    assert fns["grammar_match"]["input"] == {"grammar": "string", "value": "string"}
    assert (
        fns["grammar_match"]["ok"] == "boolean"
        and "CATALOG_ERROR" in fns["grammar_match"]["errors"]
    )
    assert fns["count_tokens"] == {
        "name": "count_tokens",
        "source": "kit",
        "vector_cases": 0,
        "input": {"text": "string"},
        "ok": "integer",
        "errors": [],
    }
    assert fns["truncate_description"]["input"] == {"budget_tokens": "integer", "text": "string"}
    assert sum(f["vector_cases"] for f in index["functions"]) == len(load_cases())


def test_gatespec_forwards_its_old_commands_to_the_kit(tmp_path, capfd) -> None:
    from gatespec import cli as runtime_cli

    assert runtime_cli.main(["vectors", "export", str(tmp_path)]) == 0
    assert (tmp_path / "index.json").exists()
    argv = ["conformance", "functions", "--max-examples", "0", "--list", "--select", "PATH-*"]
    assert runtime_cli.main(["-v", *argv]) == 0
    out = capfd.readouterr().out  # the kit's own process wrote it
    assert out and all("PATH-" in line for line in out.splitlines())
    # the kit's usage error is the command's: exit 2, its message on stderr
    assert runtime_cli.main(["conformance", "functions", "--no-such-flag"]) == 2
    assert "--no-such-flag" in capfd.readouterr().err


def test_gatespec_says_so_when_the_kit_is_missing(monkeypatch, capfd) -> None:
    import sys

    from gatespec import cli as runtime_cli

    monkeypatch.setitem(sys.modules, "gatespec_conformance", None)  # not findable
    assert runtime_cli.main(["conformance", "functions"]) == 2
    assert "conformance kit is not installed" in capfd.readouterr().err
