"""`generator diff` on a catalogue of spec edits (spec_edits.py): each edit is applied to a copy
of spec/ and must be reported as exactly the changes written down for it, with their
classification; and the diff's own pieces (grammar languages, git refs, the text and JSON forms,
the rule table in the docs)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.evolution.diff import diff
from generator.evolution.diff_rules import RULES, rules_markdown
from generator.evolution.snapshot import Snapshot, read_snapshot
from tests.generator.spec_edits import EDITS, SpecEdit

ROOT = Path(__file__).resolve().parents[2]
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


@pytest.fixture(scope="module")
def base() -> Snapshot:
    return read_snapshot(ROOT / "spec", "spec")


def _edited(tmp_path: Path, spec_edit: SpecEdit) -> Path:
    spec = tmp_path / "spec"
    shutil.copytree(ROOT / "spec", spec)
    for file, change in spec_edit.edits:
        data = yaml.load((spec / file).read_text(encoding="utf-8"), Loader=_LOADER)
        change(data)
        text = yaml.dump(data, Dumper=_DUMPER, sort_keys=False, allow_unicode=True)
        (spec / file).write_text(text, encoding="utf-8")
    return spec


def _found(changes: Any) -> list[tuple[str, tuple[str, ...]]]:
    return sorted((c.where, tuple(sorted(c.kinds))) for c in changes)


BREAKS = {
    "both": (True, True),
    "clients": (True, False),
    "implementations": (False, True),
    "none": (False, False),
}


def test_the_catalogue_covers_both_parties_and_compatible_edits() -> None:
    ids = [e.id for e in EDITS]
    assert len(ids) == len(set(ids)) and len(ids) >= 40
    assert {e.breaks for e in EDITS} == set(BREAKS)
    kinds = {k for e in EDITS for _, ks in e.expect for k in ks}
    assert {"input.narrowed", "input.widened", "output.narrowed", "output.widened"} <= kinds
    assert all(k in RULES for k in kinds)


@pytest.mark.parametrize("spec_edit", EDITS, ids=lambda e: e.id)
def test_edit_is_classified_as_written(spec_edit: SpecEdit, base: Snapshot, tmp_path: Path) -> None:
    edited = read_snapshot(_edited(tmp_path, spec_edit), "edited")
    report = diff(base, edited)
    expected = sorted((w, tuple(sorted(k))) for w, k in spec_edit.expect)
    assert _found(report.changes) == expected, report.text()
    verdict = (report.breaking_clients, report.breaking_implementations)
    assert verdict == BREAKS[spec_edit.breaks], report.text()


def test_the_same_spec_has_no_changes(base: Snapshot) -> None:
    report = diff(base, read_snapshot(ROOT / "spec", "again"))
    assert report.changes == [] and not report.breaking


def test_a_grammar_change_names_its_method_and_a_witness(base: Snapshot, tmp_path: Path) -> None:
    by_id = {e.id: e for e in EDITS}
    cases = {
        "path-cap-lowered": ("exact", "201..256"),
        "tag-upper-case": ("exact + witness", "(sampled)"),
        "hash8-rewritten": ("sampled", "sampled strings"),
    }
    for edit_id, (method, evidence) in cases.items():
        report = diff(base, read_snapshot(_edited(tmp_path / edit_id, by_id[edit_id]), "x"))
        first = report.changes[0]
        assert first.method == method and evidence in first.summary, first


def test_a_lost_negated_class_member_is_found(base: Snapshot, tmp_path: Path) -> None:
    """The JSON-pointer class loses DEL (U+007F), a character no printable sample draws: the
    focused samples still find the one string that shows it."""

    def drop_del(data: dict[str, Any]) -> None:
        alt = data["grammars"]["view_selector"]["syntax"][0]["alt"][3]
        inner = alt[1]["group"][0]["rep"][1]["rep"][0]["alt"][0][0]
        inner["set"] += "\\x7f"

    edited = SpecEdit("del", "", (("grammars.yaml", drop_del),), "both", ())
    report = diff(base, read_snapshot(_edited(tmp_path, edited), "x"))
    assert [(c.where, c.kinds) for c in report.changes] == [
        ("grammars.view_selector", ("input.narrowed", "output.narrowed"))
    ]
    assert "'json:/\\x7f'" in report.changes[0].summary


def test_a_git_ref_against_the_working_tree() -> None:
    """spec/ as of the commit that introduced it reads leniently (an older layout) and diffs
    against the working tree: the call result and tool_execute's new code are among the
    changes, and its own vectors layout is said."""
    first = subprocess.run(
        ["git", "-C", str(ROOT), "log", "--diff-filter=A", "--format=%H", "--", "spec/surface.yaml"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    if not first:
        pytest.skip("no git history of spec/ (a shallow clone)")
    proc = subprocess.run(
        [sys.executable, "-m", "generator", "diff", first[-1], "spec", "--format", "json"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    doc = json.loads(proc.stdout)
    assert doc["old"]["spec_version"] == "0.1.0" and not doc["old"]["loads"]
    assert doc["breaking"] == {"clients": True, "implementations": True}
    changes = {(c["where"], tuple(c["kinds"])) for c in doc["changes"]}
    assert ("meta_tools.call.output", ("output.model_replaced",)) in changes
    assert ("meta_tools.tool_execute.errors", ("error.returned_added",)) in changes
    assert ("profiles.transparent.meta_tools", ("profile.meta_tool_added",)) in changes


def test_text_form_groups_by_party(base: Snapshot, tmp_path: Path) -> None:
    by_id = {e.id: e for e in EDITS}
    report = diff(base, read_snapshot(_edited(tmp_path, by_id["argument-renamed"]), "x"))
    text = report.text()
    assert "Breaking for clients and implementations (1)" in text
    assert "meta_tools.tool_execute.input.args: renamed arguments" in text


def test_an_unknown_ref_is_one_clear_line() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "generator", "diff", "no-such-ref-xyz"],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: git rev-parse") and "Traceback" not in proc.stderr


def test_the_docs_print_the_classification_table() -> None:
    doc = (ROOT / "docs" / "spec-evolution.md").read_text(encoding="utf-8")
    assert rules_markdown() in doc
