"""Hand-written code never restates what the spec holds: a distinctive bound (a number of 100 or
more from the spec's bound files), a grammar's pattern or its syntax, or an error code's name as
a string. Each must be imported from the generated package. A literal that merely happens to
equal a spec number is listed in ALLOWED with what it really is.

The hand-written TypeScript of the TypeScript surface (its support files and the text of its
templates) is read the same way, its literals found by the TypeScript compiler's parser."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

from generator.emit import Generator
from generator.facts import FactChecker
from generator.ir import Alt, CharSet, Group, Node, Opt, Rep, load_spec
from generator.key_paths import resolve_path

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("src/gatespec", "src/gatespec_conformance", "generator/support")
TS_SCANNED = "generator/templates/typescript"
TS_LITERALS = ROOT / "tests" / "typescript" / "literals.mjs"
DISTINCTIVE = 100  # smaller numbers (1, 5, 10, 64 ...) are too common to judge by value

# (file, value) -> what the literal is. Keep this short: fix code before adding an entry.
ALLOWED: dict[tuple[str, object], str] = {
    ("src/gatespec/artifacts.py", 4096): "store policy: artifacts kept, evicted handles remembered",
    ("src/gatespec/artifacts.py", 200): "how much of a JSON parser's complaint is quoted",
    ("src/gatespec/seen_cards.py", 256): "sessions a store remembers (a process limit)",
    ("src/gatespec/state/config.py", 256): "MiB of artifacts a shared store keeps by default",
    ("src/gatespec/firewall.py", 120): "characters of upstream provenance text kept",
    ("src/gatespec/server/stdio.py", 256): "KiB read from stdin at a time",
    ("src/gatespec/ranking/documents.py", 2000): "schema text fed to the ranker per tool",
    ("src/gatespec/ranking/vector_cache.py", 500): "SQLite keys per SELECT",
    ("src/gatespec/ranking/encoder.py", 256): "the embedding model's input tokens per tool",
    ("src/gatespec/ranking/encoder.py", 512): "padded tokens per encoder run (memory, not a bound)",
    ("src/gatespec/ranking/train/model.py", 512): "all-MiniLM-L6-v2's position table (its config)",
    ("src/gatespec_conformance/formats.py", 65536): "0x10000, the first code point past the BMP",
    ("src/gatespec_conformance/functions/process.py", 200): "bytes of an adapter's bad line quoted",
    ("src/gatespec_conformance/report.py", 120): "characters of a value shown in a report line",
    ("src/gatespec_conformance/live/client.py", 2000): "characters of an IUT's stderr kept",
    ("src/gatespec_conformance/live/payloads.py", 200): "characters of an IUT's answer quoted",
    ("src/gatespec_conformance/live/facts.py", 2000): "tree nodes the kit walks at most",
    ("src/gatespec_conformance/fixtures/catalog.py", 200): "the fixture echo tool's own schema",
    ("src/gatespec_conformance/__init__.py", 500): "the largest fixture catalog size a run tries",
    ("generator/support/strategies.py", 200): "the size of drawn prose in strategies",
    ("src/gatespec_conformance/live/readings.py", 500): "characters of what an IUT sent, quoted",
    ("src/gatespec/upstream/transports.py", 200): "characters of a parse error quoted in a log",
}


def _classes(nodes: tuple[Node, ...]) -> Iterator[str]:
    for n in nodes:
        if isinstance(n, CharSet):
            yield n.body
        elif isinstance(n, (Opt, Rep, Group)):
            yield from _classes(n.nodes)
        elif isinstance(n, Alt):
            for option in n.options:
                yield from _classes(option)


def _spec_values() -> tuple[set[object], dict[str, str]]:
    spec = load_spec(ROOT / "spec")
    gen = Generator(spec, ROOT)
    checker = FactChecker(spec, spec.raw, gen.compiler, gen.analyses, gen.caps)
    numbers: set[object] = set()
    for loc in checker.numbers():
        file, _, path = loc.partition("#")
        for _, value in resolve_path(spec.raw[file], path):
            if isinstance(value, (int, float)) and value >= DISTINCTIVE:
                numbers.add(value)
    texts: dict[str, str] = {code: "an error code" for code in spec.error_codes}
    for name, grammar in spec.grammars.items():
        analysis = gen.analyses[name]
        syntax = gen.compiler.regex(grammar.nodes, captures=False)
        for text in (analysis.regex, analysis.portable, syntax):
            texts[text] = f"grammar {name}"
        for body in _classes(grammar.nodes):
            if len(body) >= 5:
                texts[f"[{body}]"] = f"a class of grammar {name}"
    return numbers, texts


def _python_literals() -> Iterator[tuple[str, int, object]]:
    for root in SCANNED:
        for path in sorted((ROOT / root).rglob("*.py")):
            rel = str(path.relative_to(ROOT))
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and not isinstance(node.value, bool):
                    yield rel, node.lineno, node.value


def _read_typescript(files: list[Path]) -> list[tuple[str, int, object]]:
    """(file, line, value) of every literal in `files`, read by the TypeScript parser."""
    node = shutil.which("node")
    assert node is not None, "node is needed to read the TypeScript sources"
    argv = [node, str(TS_LITERALS), *map(str, files)]
    proc = subprocess.run(argv, capture_output=True, text=True, check=True)
    return [(file, line, value) for file, line, _, value in json.loads(proc.stdout)]


def _typescript_literals() -> Iterator[tuple[str, int, object]]:
    """The literals of the hand-written TypeScript (support files, template text)."""
    files = sorted(p for p in (ROOT / TS_SCANNED).rglob("*") if p.suffix in (".ts", ".j2"))
    for file, line, value in _read_typescript(files):
        yield str(Path(file).relative_to(ROOT)), line, value


def _restatements() -> list[tuple[str, int, object, str]]:
    """(file, line, value, what it restates) for every literal that equals a spec value."""
    numbers, texts = _spec_values()
    syntaxes = {t: w for t, w in texts.items() if len(t) >= 12 and w.startswith("grammar")}
    found: list[tuple[str, int, object, str]] = []
    for rel, line, value in [*_python_literals(), *_typescript_literals()]:
        if isinstance(value, (int, float)) and value in numbers:
            found.append((rel, line, value, "a spec bound"))
        elif isinstance(value, str) and value in texts:
            found.append((rel, line, value, texts[value]))
        elif isinstance(value, str):
            for syntax, what in syntaxes.items():
                if syntax in value:
                    found.append((rel, line, syntax, what))
    return found


def test_the_typescript_reader_sees_literals(tmp_path: Path) -> None:
    """The reader finds a bound and a pattern restated in TypeScript, in a support file and in
    a template's text (so a clean run means something)."""
    numbers, texts = _spec_values()
    bound = max(n for n in numbers if isinstance(n, int))
    pattern = next(t for t, w in texts.items() if w.startswith("grammar") and len(t) >= 12)
    support, template = tmp_path / "sample.ts", tmp_path / "sample.ts.j2"
    support.write_text(f"export const CAP = {bound};\n")
    template.write_text(f"export const N = {{{{ x | js }}}};\nconst P = /{pattern}/u;\n")
    found = _read_typescript([support, template])
    assert [(Path(f).name, v) for f, _, v in found] == [
        ("sample.ts", bound),
        ("sample.ts.j2", pattern),
    ]


def test_no_spec_value_is_restated_by_hand() -> None:
    offences = [
        f"{file}:{line}: {value!r} restates {what}"
        for file, line, value, what in _restatements()
        if (file, value) not in ALLOWED
    ]
    assert offences == []


def test_every_allowance_is_still_needed() -> None:
    """An entry that no longer matches a restatement must go (the list stays short and true)."""
    seen = {(file, value) for file, _, value, _ in _restatements()}
    assert [key for key in ALLOWED if key not in seen] == []
