"""One version of the spec as `generator diff` compares it.

A version is read from its YAML with the IR's own pieces (the grammar-node parser, the grammar
compiler) but without the IR's whole-spec validation, so that an older layout the current
generator no longer loads (spec 0.1.0 kept every rule in budgets.yaml and had no seed facts) can
still be compared. Whether the current generator loads it is recorded in `problems`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import ir
from ..errors import SpecError, SpecErrors
from ..grammar import GrammarCompiler
from ..spec_refs import SURFACE, spec_files

# Files whose top-level sections are rules (spec 0.1.0 held all of them in budgets.yaml); a
# rule is addressed by section and key wherever it lives, as x-bound does.
RULE_FILES = tuple(ir.RULE_FILES)


@dataclass
class Snapshot:
    label: str
    version: str
    raw: dict[str, Any]  # file name -> its YAML
    file_hashes: dict[str, str]
    grammars: dict[str, ir.Grammar]
    problems: list[str] = field(default_factory=list)  # why the current generator refuses it

    # ------------------------------------------------------------ sections

    def _section(self, file: str, key: str) -> Any:
        data = self.raw.get(file)
        value = data.get(key) if isinstance(data, dict) else None
        return value if value is not None else {}

    @property
    def codes(self) -> dict[str, Any]:
        return dict(self._section("errors.yaml", "codes"))

    @property
    def models(self) -> dict[str, dict[str, Any]]:
        """Model name -> its JSON Schema as written."""
        return {n: m.get("schema", {}) for n, m in self._section("models.yaml", "models").items()}

    @property
    def meta_tools(self) -> dict[str, dict[str, Any]]:
        return dict(self._section("profiles.yaml", "meta_tools"))

    @property
    def profiles(self) -> dict[str, dict[str, Any]]:
        return dict(self._section("profiles.yaml", "profiles"))

    @property
    def amendments(self) -> dict[str, dict[str, Any]]:
        return dict(self._section("amendments.yaml", "amendments"))

    @property
    def requirements(self) -> dict[str, dict[str, Any]]:
        reqs = self._section("requirements.yaml", "requirements")
        return {r["id"]: r for r in reqs if isinstance(r, dict) and "id" in r}

    @property
    def vectors(self) -> dict[str, list[dict[str, Any]]]:
        return dict(self._section("vectors.yaml", "cases"))

    @property
    def rules(self) -> dict[str, Any]:
        """Rule section name -> its data, over every rule file present."""
        out: dict[str, Any] = {}
        for file in RULE_FILES:
            data = self.raw.get(file)
            if isinstance(data, dict):
                out.update(data)
        return out

    def rule(self, ref: str) -> Any:
        """The value of a rule reference such as "browse.max_top_k" (None when absent)."""
        node: Any = self.rules
        for part in ref.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        return node

    def compiler(self) -> GrammarCompiler:
        return GrammarCompiler(self.grammars)


def _grammars(raw: Any, problems: list[str]) -> dict[str, ir.Grammar]:
    out: dict[str, ir.Grammar] = {}
    table = raw.get("grammars") if isinstance(raw, dict) else None
    for name, data in (table or {}).items():
        try:
            nodes = ir.parse_nodes(data.get("syntax"), "grammars.yaml", f"grammars.{name}.syntax")
        except SpecError as exc:
            problems.append(str(exc))
            continue
        # The compiler reads nodes only; the rest of the entry is kept unvalidated.
        known = {k: v for k, v in data.items() if k in ir.GrammarSpec.model_fields}
        out[name] = ir.Grammar(name, ir.GrammarSpec.model_construct(**known), nodes)
    # A reference to a grammar this version lacks would stop the compiler: drop the referrer.
    for name, g in list(out.items()):
        missing = [r for r in ir.grammar_refs(g.nodes) if r not in out]
        if missing:
            problems.append(f"grammars.yaml: grammars.{name}: unknown grammar {missing[0]!r}")
            del out[name]
    return out


def read_snapshot(folder: Path, label: str) -> Snapshot:
    """The spec in `folder`. Raises SpecError when even surface.yaml cannot be read."""
    names = spec_files((folder / SURFACE).read_bytes(), str(folder))
    raw: dict[str, Any] = {}
    hashes: dict[str, str] = {}
    for name in names:
        path = folder / name
        if path.exists():
            hashes[name] = hashlib.sha256(path.read_bytes()).hexdigest()
            raw[name] = ir.load_yaml(path)
    surface = raw.get(SURFACE) or {}
    problems: list[str] = []
    try:
        ir.load_spec(folder)
    except SpecErrors as exc:
        problems += [str(e) for e in exc.errors]
    except SpecError as exc:
        problems.append(str(exc))
    grammars = _grammars(raw.get("grammars.yaml"), problems)
    version = str(surface.get("spec_version", "?")) if isinstance(surface, dict) else "?"
    return Snapshot(label, version, raw, hashes, grammars, problems)
