"""The language-neutral test vectors: every expected answer comes from spec/ — the hand-written
cases of vectors.yaml and the grammar examples of grammars.yaml — never from the generated code.
emit.py answers each case with the freshly rendered package and fails generation on any
disagreement (`disagreements`)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .errors import SpecError
from .grammar import Analysis
from .ir import Example, Spec
from .support import trees

GRAMMARS_FILE = "grammars.json"


def _grammar_cases(spec: Spec, analyses: dict[str, Analysis]) -> list[dict[str, Any]]:
    """grammars.yaml's examples (the spec's verdicts) plus each grammar's shortest and longest
    string, which the syntax admits by construction (the longest is over the cap, and so
    rejected, when max_length binds tighter than the syntax)."""
    cases: list[dict[str, Any]] = []
    for gname, g in spec.grammars.items():
        tree = analyses[gname].tree
        cap = g.spec.max_length
        longest = trees.longest(tree)
        # The longest string is the syntax's: it rests on every amendment that changed the
        # grammar's seed syntax, and on the one behind its cap when the cap binds.
        syntax_ams = _amending(spec, [f"regex:{gname}"])
        cap_ams = _amending(spec, [f"grammars.yaml#grammars.{gname}.max_length", f"maxlen:{gname}"])
        rows: list[tuple[str, str | Example, bool]] = [("valid", e, True) for e in g.spec.valid]
        rows += [("invalid", e, False) for e in g.spec.invalid]
        rows += [
            ("shortest", trees.shortest(tree), True),
            ("longest", longest, cap is None or len(longest) <= cap),
        ]
        seen: set[str] = set()
        for label, example, ok in rows:
            value = example if isinstance(example, str) else example.value
            own = [] if isinstance(example, str) else example.amended_by
            if label == "longest":
                own = [*syntax_ams, *([] if ok else cap_ams)]
            if value in seen:
                continue
            seen.add(value)
            what = {
                "valid": f"grammars.yaml lists {value!r} as a valid {gname}",
                "invalid": f"grammars.yaml lists {value!r} as not a {gname}",
                "shortest": f"the shortest {gname} the grammar admits",
                "longest": f"the longest {gname} the syntax admits"
                + ("" if ok else f", over the {cap}-character cap"),
            }[label]
            cases.append(
                {
                    "file": GRAMMARS_FILE,
                    "name": f"{gname}/{label}/{value!r}",
                    "function": "grammar_match",
                    "requirements": list(g.spec.requirements),
                    "description": what,
                    "amended_by": sorted({*g.spec.examples_amended_by, *own}),
                    "input": {"grammar": gname, "value": value},
                    "expect": {"ok": True} if ok else {"error": g.spec.error},
                }
            )
    return cases


def _amending(spec: Spec, places: list[str]) -> list[str]:
    """The amendments that change a seed fact pinned at any of `places`."""
    facts = {fid for fid, f in spec.seed_facts.items() if set(f.at) & set(places)}
    return sorted(a for a, am in spec.amendments.items() if facts & set(am.changes))


def build_cases(spec: Spec, analyses: dict[str, Analysis]) -> list[dict[str, Any]]:
    """Every vector case, with its file, expected answer, requirements and description."""
    cases = _grammar_cases(spec, analyses)
    for file, rows in spec.vectors.items():
        for row in rows:
            case = {"file": file, **row.model_dump(exclude_none=True)}
            if not case.get("amended_by"):
                case.pop("amended_by", None)
            cases.append(case)
    return cases


def seed_reference_hash8(upstream_name: str, input_schema: dict[str, Any]) -> str:
    """§1.3's reference code as the seed prints it, kept apart from the generated hash8."""
    props = sorted((input_schema.get("properties") or {}).keys())
    required = sorted(input_schema.get("required") or [])
    shape = json.dumps(
        {"properties": props, "required": required}, sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256((upstream_name + "\n" + shape).encode("utf-8")).hexdigest()[:8]


def _where(case: dict[str, Any], index: int) -> tuple[str, str]:
    if case["file"] == GRAMMARS_FILE:
        return "grammars.yaml", f"grammars.{case['input']['grammar']} ({case['name']})"
    return "vectors.yaml", f"cases.{case['file']}[{index}] ({case['name']})"


def disagreements(cases: list[dict[str, Any]], answer: Any) -> list[SpecError]:
    """Each case whose expected answer the generated code does not give, and each hash8 the
    seed's own reference code would not give."""
    errors: list[SpecError] = []
    index: dict[str, int] = {}
    for case in cases:
        i = index[case["file"]] = index.get(case["file"], -1) + 1
        file, where = _where(case, i)
        actual = answer({"function": case["function"], "input": case["input"]})
        if actual != case["expect"] or _json(actual) != _json(case["expect"]):
            errors.append(
                SpecError(
                    file,
                    where,
                    f"expected {_json(case['expect'])}, the generated code answers {_json(actual)}",
                )
            )
        if case["function"] == "hash8" and "ok" in case["expect"]:
            inp = case["input"]
            ref = seed_reference_hash8(inp["upstream_name"], inp["input_schema"])
            if ref != case["expect"]["ok"]:
                errors.append(
                    SpecError(
                        file,
                        where,
                        f"expected hash8 {case['expect']['ok']}, §1.3's code gives {ref}",
                    )
                )
    return errors


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def meta_schema(spec: Spec) -> dict[str, Any]:
    """JSON Schema of a vector file."""
    answer = {
        "oneOf": [
            {
                "type": "object",
                "required": ["ok"],
                "additionalProperties": False,
                "properties": {"ok": {}},
            },
            {
                "type": "object",
                "required": ["error"],
                "additionalProperties": False,
                "properties": {"error": {"enum": list(spec.error_codes)}},
            },
        ]
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "gatespec test-vector file",
        "description": (
            "Each case names a function of the surface, its input and the expected answer: "
            '{"ok": value} on success or {"error": CODE} with an error code of the spec. '
            "requirements and description say what the case evidences; amended_by lists the "
            "amendments its expected answer depends on, and seed_expect, when present, is the "
            "answer the seed's own wording gives instead; seed_expect_any lists every answer "
            "the seeds permit where they disagree (any of them is a seed's)."
        ),
        "type": "object",
        "required": ["spec_version", "spec_hash", "cases"],
        "properties": {
            "$comment": {"type": "string"},
            "$schema": {"type": "string"},
            "spec_version": {"type": "string"},
            "spec_hash": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
            "cases": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": [
                        "name",
                        "function",
                        "requirements",
                        "description",
                        "input",
                        "expect",
                    ],
                    "properties": {
                        "name": {"type": "string"},
                        "function": {"type": "string"},
                        "requirements": {
                            "type": "array",
                            "minItems": 1,
                            "items": {"type": "string"},
                        },
                        "description": {"type": "string"},
                        "amended_by": {"type": "array", "items": {"type": "string"}},
                        "input": {"type": "object"},
                        "expect": answer,
                        "seed_expect": answer,
                        "seed_expect_any": {"type": "array", "minItems": 2, "items": answer},
                    },
                },
            },
        },
    }
