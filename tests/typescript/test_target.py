"""The TypeScript target (generator/typescript.py, issue 25): regex respelling with Python's
meaning, the model types, and the drift check and byte-identical output covering
generated-ts/. The vectors themselves run under `node --test` (make ts-test)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator.errors import SpecError
from generator.ts_types import model_types
from generator.typescript import FOLDER, ecmascript_regex, tree

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")


def _node_matches(pattern: str, flags: str, texts: list[str]) -> list[bool]:
    """Whether ECMAScript's RegExp(pattern, flags) finds a match in each text (real Node)."""
    assert NODE is not None
    script = (
        "const [p, f, t] = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "process.stdout.write(JSON.stringify(t.map((s) => new RegExp(p, f).test(s))));"
    )
    proc = subprocess.run(
        [NODE, "-e", script],
        input=json.dumps([pattern, flags, texts]),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout)


@pytest.mark.parametrize(
    ("python", "ecmascript"),
    [
        ("(?P<ns>[a-z]+):x", "(?<ns>[a-z]+):x"),
        ("[\"']?x", "[\"']?x"),  # unicode mode refuses the identity escapes \" and \'
        ("\\/(?:a|\\*)", "\\/(?:a|\\*)"),
        ("[^\\x00-\\x1f]", "[^\\x00-\\x1f]"),
        ("a\\-b", "a-b"),  # outside a class "\-" is a plain "-"
        ("[a\\-z]", "[a\\-z]"),  # inside one unicode mode keeps it
    ],
)
def test_respelling(python: str, ecmascript: str) -> None:
    assert ecmascript_regex(python, "test") == ecmascript


@pytest.mark.parametrize("python", ["\\w+", "\\bx", "(?i)x", "(?P=a)", "[]a]"])
def test_constructs_of_another_meaning_are_refused(python: str) -> None:
    with pytest.raises(SpecError):
        ecmascript_regex(python, "test")


@pytest.mark.skipif(NODE is None, reason="node is not on PATH")
def test_white_space_means_what_python_means() -> None:
    # str.isspace() and ECMAScript's \s differ on U+001C-U+001F, U+0085 and U+FEFF.
    texts = ["a:", "a\x1c:", "a\x85:", "a\ufeff:", "a\u3000:", "a\t:", "ab:"]
    python = "a\\s*:"
    expected = [re.search(python, t) is not None for t in texts]
    assert expected == [True, True, True, False, True, True, False]
    assert _node_matches(ecmascript_regex(python, "test"), "u", texts) == expected


def test_model_types() -> None:
    schema = {
        "title": "Thing",
        "description": "A thing.",
        "type": "object",
        "additionalProperties": False,
        "required": ["id", "kind"],
        "properties": {
            "id": {"type": "string", "maxLength": 5},
            "kind": {"enum": ["a", "b"]},
            "score": {"type": ["number", "null"]},
            "parts": {"type": "array", "items": {"$ref": "#/$defs/Part"}},
            "extra": {"type": "object"},
        },
    }
    assert model_types({"Thing": schema}) == [
        "/** A thing. */\n"
        "export interface Thing {\n"
        "  id: string;\n"
        '  kind: "a" | "b";\n'
        "  score?: number | null;\n"
        "  parts?: Array<Part>;\n"
        "  extra?: Record<string, unknown>;\n"
        "}"
    ]


def test_a_shape_keyword_the_emitter_does_not_know_fails_generation() -> None:
    with pytest.raises(SpecError, match="patternProperties"):
        model_types({"Thing": {"type": "object", "patternProperties": {"^a": {}}}})


def test_generation_is_byte_identical_and_check_covers_the_typescript_package(
    fresh_generation: Path, tmp_path: Path
) -> None:
    shutil.copytree(fresh_generation, tmp_path, dirs_exist_ok=True)  # a fresh render, copied
    out, ts_out = tmp_path / "generated", tmp_path / FOLDER
    argv = [sys.executable, "-m", "generator", "--out", str(out), "--ts-out", str(ts_out)]
    assert tree(ts_out) == tree(ROOT / FOLDER)  # the committed package is this run's bytes
    target = ts_out / "src" / "budgets.ts"
    target.write_text(
        target.read_text().replace("CARD_HARD_CAP_TOKENS = 80;", "CARD_HARD_CAP_TOKENS = 81;")
    )
    (ts_out / "dist").mkdir()  # build output is not the generator's: never compared
    (ts_out / "dist" / "index.js").write_text("")
    proc = subprocess.run([*argv, "--check"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 1
    assert "-export const CARD_HARD_CAP_TOKENS = 81;" in proc.stdout
    assert "+export const CARD_HARD_CAP_TOKENS = 80;" in proc.stdout
    assert "dist/index.js" not in proc.stdout


@pytest.mark.skipif(NODE is None, reason="node is not on PATH")
@pytest.mark.parametrize(
    ("mutation_id", "failed"),
    [
        ("vector-star", {"paths.json:parse/double-star"}),  # a wrong expected answer
        ("hash8-upper", {"grammars.json:hash8/invalid/'3A91C7D2'"}),  # a widened class
        ("check-removed", set()),  # bookkeeping: no code, no answer changes
    ],
)
def test_a_mutation_fails_the_same_cases_in_both_languages(
    mutation_id: str, failed: set[str]
) -> None:
    from generator.emit import Generator
    from generator.ir import load_spec
    from generator.language_mutations import judge
    from generator.mutations import MUTATIONS
    from generator.vectors import build_cases

    spec = load_spec(ROOT / "spec")
    seed_cases = build_cases(spec, Generator(spec, ROOT).analyses)
    [mutation] = [m for m in MUTATIONS if m.id == mutation_id]
    judged = judge(mutation, ROOT / "spec", ROOT, seed_cases)
    assert judged.python == judged.typescript == failed


def test_python_whitespace_class_is_derived_and_written_once() -> None:
    """The generator respells grammars' \\s with Python's white space and writes the same
    class into the package for its text rules: the class matches exactly the characters
    str.isspace() accepts, and no support module spells a class of its own."""
    from generator import typescript

    one_space = re.compile(f"[{typescript._PY_SPACE}]")
    spaces = {c for c in range(sys.maxunicode + 1) if one_space.fullmatch(chr(c))}
    assert spaces == {c for c in range(sys.maxunicode + 1) if chr(c).isspace()}
    written = (ROOT / "generated-ts/src/_support" / typescript.PY_SPACE_MODULE).read_text()
    assert json.dumps(typescript._PY_SPACE) in written
    for support in (ROOT / "generator/templates/typescript/_support").glob("*.ts"):
        # U+200A ends the run of typographic spaces: only a spelled-out space class holds it
        assert "u200a" not in support.read_text(), f"{support.name} spells white space itself"
