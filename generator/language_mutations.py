"""Each spec mutation judged in both languages: what the seed-breaking edit does to the code
each target renders, not only whether generation refuses it.

For a mutation, the mutated spec is rendered with its checks off (no static checks, no
answer check), into the Python package and the TypeScript package. Each package then answers
two sets of vector cases: the unmutated spec's (the seeds' answers: a changed bound, class or
table shows here) and the mutated spec's (a wrong expected answer shows here). A case either
package answers differently from its expectation is a failure in that language. A mutation that
changes no code and no expectation (a requirement's checks, a fact's quote) fails in neither:
only the language-neutral static checks catch it, and the report says so.

    python -m generator mutations        # the score, then this table
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import mutations
from .emit import Generator, _import_fresh
from .errors import SpecError, SpecErrors
from .ir import load_spec
from .vectors import build_cases

TS_ANSWERS = Path(__file__).parent / "ts_answers.mjs"
NODE_MODULES = Path(__file__).resolve().parent.parent / "node_modules"


@dataclass(frozen=True)
class Judged:
    mutation: mutations.Mutation
    python: frozenset[str]  # names of the cases the Python package fails
    typescript: frozenset[str]
    note: str = ""  # why nothing was judged (the mutated spec could not be rendered)

    @property
    def same(self) -> bool:
        return self.python == self.typescript


def _key(value: Any) -> str:
    """JSON text with integral floats as integers (1 == 1.0, as languages print numbers)."""

    def norm(v: Any) -> Any:
        if isinstance(v, float) and v.is_integer():
            return int(v)
        if isinstance(v, list):
            return [norm(x) for x in v]
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        return v

    return json.dumps(norm(value), sort_keys=True)


def _failures(cases: list[dict[str, Any]], answers: list[Any]) -> frozenset[str]:
    return frozenset(
        f"{c['file']}:{c['name']}"
        for c, a in zip(cases, answers, strict=True)
        if _key(a) != _key(c["expect"])
    )


def _python_answers(out: Path, cases: list[dict[str, Any]]) -> list[Any]:
    module = _import_fresh(out)
    answers = []
    for c in cases:
        try:
            answers.append(module.run_case({"function": c["function"], "input": c["input"]}))
        except Exception as exc:  # a bug the mutation provoked is a failure, not a crash
            answers.append({"exception": repr(exc)})
    return answers


def _typescript_answers(package: Path, cases: list[dict[str, Any]], node: str) -> list[Any]:
    (package / "node_modules").symlink_to(NODE_MODULES, target_is_directory=True)
    proc = subprocess.run(
        [node, str(TS_ANSWERS), str(package)],
        input=json.dumps([{"function": c["function"], "input": c["input"]} for c in cases]),
        capture_output=True,
        text=True,
        check=True,
    )
    answers: list[Any] = json.loads(proc.stdout)
    return answers


def judge(
    mutation: mutations.Mutation, spec_dir: Path, root: Path, seed_cases: list[dict[str, Any]]
) -> Judged:
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is needed to judge the TypeScript package")
    with mutations._spec_copy(spec_dir) as copy, tempfile.TemporaryDirectory() as tmp:
        mutations._mutate(copy, mutation)
        try:
            gen = Generator(load_spec(copy), root)
            python, ts = Path(tmp) / "python", Path(tmp) / "typescript"
            gen.render_to(python, format_code=False, check_answers=False)
            gen.render_typescript_to(ts, python)
            mutated_cases = build_cases(gen.spec, gen.analyses)
        except (SpecError, SpecErrors) as exc:
            first = str(exc).splitlines()[0][:100]
            return Judged(mutation, frozenset(), frozenset(), f"not renderable: {first}")
        cases = [*seed_cases, *mutated_cases]
        return Judged(
            mutation,
            _failures(cases, _python_answers(python, cases)),
            _failures(cases, _typescript_answers(ts, cases, node)),
        )


def report(spec_dir: Path, root: Path, say: Callable[[str], None] = print) -> list[Judged]:
    """The table: for each mutation, the vector cases each language fails."""
    spec = load_spec(spec_dir)
    gen = Generator(spec, root)
    seed_cases = build_cases(spec, gen.analyses)
    os.environ.setdefault("NODE_NO_WARNINGS", "1")
    judged = [judge(m, spec_dir, root, seed_cases) for m in mutations.MUTATIONS]
    say("\nEach mutation's rendered code in both languages (vector cases failed):")
    say(f"{'mutation':26} {'python':>7} {'typescript':>11}  same cases")
    for j in judged:
        same = "yes" if j.same else "NO"
        say(f"{j.mutation.id:26} {len(j.python):7} {len(j.typescript):11}  {same} {j.note}")
    changed = [j for j in judged if j.python or j.typescript]
    both = [j for j in changed if j.python and j.typescript]
    say(
        f"\n{len(changed)} of {len(judged)} mutations change an answer: {len(both)} fail vectors "
        f"in both languages, {sum(j.same for j in changed)} with the very same cases; the other "
        f"{len(judged) - len(changed)} change no answer (caught by the static checks alone)"
    )
    return judged
