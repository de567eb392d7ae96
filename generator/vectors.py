"""The inputs of the language-neutral test vectors. Expected answers are not computed here:
emit.py asks the freshly rendered package, then cross-checks hash8 against the seed's
reference computation."""

from __future__ import annotations

from typing import Any

from .grammar import Analysis
from .ir import Spec

UNBOUNDED_EXTRA = 12


def _build(nodes: list[Any], longest: bool) -> str:
    """A deterministic instance: the shortest (first alternative, minimum counts) or the
    longest (every count at its maximum), cycling through each class's characters."""
    out: list[str] = []
    for node in nodes:
        kind = node[0]
        if kind == "lit":
            out.append(node[1])
        elif kind == "set":
            alphabet, lo, hi = node[1], node[2], node[3]
            n = (lo + UNBOUNDED_EXTRA if hi is None else hi) if longest else lo
            out.append("".join(alphabet[i % len(alphabet)] for i in range(n)))
        elif kind == "seq":
            out.append(_build(node[1], longest))
        elif kind == "rep":
            lo, hi = node[2], node[3]
            n = (lo + 2 if hi is None else hi) if longest else lo
            out.extend(_build(node[1], longest) for _ in range(n))
        elif kind == "alt":
            options = node[1]
            built = [_build(o, longest) for o in options]
            out.append(max(built, key=len) if longest else min(built, key=len))
    return "".join(out)


def _case(file: str, name: str, function: str, inp: dict[str, Any]) -> dict[str, Any]:
    return {"file": file, "name": name, "function": function, "input": inp}


def build_cases(spec: Spec, analyses: dict[str, Analysis]) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    v = spec.vectors
    for gname, g in spec.grammars.items():
        values: list[tuple[str, str]] = [("valid", s) for s in g.spec.valid]
        values += [("invalid", s) for s in g.spec.invalid]
        tree = analyses[gname].tree
        values += [("shortest", _build(tree, False)), ("longest", _build(tree, True))]
        seen: set[str] = set()
        for label, value in values:
            if value in seen:
                continue
            seen.add(value)
            cases.append(
                _case(
                    "grammars.json",
                    f"{gname}/{label}/{value!r}",
                    "grammar_match",
                    {"grammar": gname, "value": value},
                )
            )

    for i, row in enumerate(v["tool_id_examples"]["rows"]):
        inp = {
            "namespace": row["server_key"],
            "upstream_name": row["upstream_name"],
            "input_schema": row["input_schema"],
            "version": row["version"],
        }
        cases.append(
            _case("tool_ids.json", f"make/{i}/{row['upstream_name']}", "make_tool_id", inp)
        )
        if row.get("seed_tool_id"):
            seed_id = row["seed_tool_id"]
            cases.append(
                _case("tool_ids.json", f"parse/seed/{seed_id}", "parse_tool_id", {"value": seed_id})
            )
            cases.append(
                _case(
                    "wire_names.json", f"encode/{seed_id}", "encode_wire_name", {"tool_id": seed_id}
                )
            )
    for value in spec.grammars["tool_id"].spec.invalid:
        cases.append(
            _case("tool_ids.json", f"parse/invalid/{value!r}", "parse_tool_id", {"value": value})
        )
    cases.append(
        _case(
            "tool_ids.json",
            "format/parts",
            "format_tool_id",
            {
                "parts": {
                    "namespace": "github",
                    "name": "create_issue",
                    "version": "1.4.0",
                    "hash8": None,
                }
            },
        )
    )
    cases.append(
        _case(
            "tool_ids.json",
            "format/bad-namespace",
            "format_tool_id",
            {"parts": {"namespace": "GitHub", "name": "x"}},
        )
    )
    longest_id = _build(analyses["tool_id"].tree, True)
    cases.append(_case("tool_ids.json", "parse/longest", "parse_tool_id", {"value": longest_id}))
    cases.append(
        _case("wire_names.json", "encode/longest", "encode_wire_name", {"tool_id": longest_id})
    )

    for i, row in enumerate(v["hash8_examples"]["rows"]):
        cases.append(
            _case(
                "hash8.json",
                f"hash8/{i}/{row['upstream_name']}",
                "hash8",
                {"upstream_name": row["upstream_name"], "input_schema": row["input_schema"]},
            )
        )

    for row in v["path_examples"]["rows"]:
        cases.append(
            _case("paths.json", f"parse/{row['path']}", "parse_path", {"value": row["path"]})
        )
    for value in spec.grammars["path"].spec.invalid:
        cases.append(
            _case("paths.json", f"parse/invalid/{value!r}", "parse_path", {"value": value})
        )

    for name in [
        "github-ncreate_issue-v1-d4-d0",
        "a-nb",
        "a-qb",
        "tool_browse",
        "a--b-nc",
        "x-x0123abcd",
    ]:
        cases.append(_case("wire_names.json", f"decode/{name}", "decode_wire_name", {"name": name}))

    for row in v["aggregate_examples"]["rows"]:
        cases.append(
            _case(
                "aggregate_names.json",
                f"parse/{row['name']}",
                "parse_aggregate_name",
                {"value": row["name"]},
            )
        )
    for row in v["aggregate_examples"]["rejected"]:
        cases.append(
            _case(
                "aggregate_names.json",
                f"reject/{row['name']}",
                "parse_aggregate_name",
                {"value": row["name"]},
            )
        )

    for value in spec.grammars["view_selector"].spec.valid + ["lines:9-3", "lines:0-2"]:
        cases.append(
            _case("selectors.json", f"parse/{value!r}", "parse_view_selector", {"value": value})
        )
    for value in spec.grammars["search_operation"].spec.valid:
        cases.append(
            _case("operations.json", f"parse/{value}", "parse_search_operation", {"value": value})
        )

    for row in v["server_key_examples"]["rows"]:
        cases.append(
            _case(
                "server_keys.json",
                f"key/{row['config_key']!r}",
                "server_key",
                {"config_key": row["config_key"]},
            )
        )
    cases.append(_case("server_keys.json", "key/'___'", "server_key", {"config_key": "___"}))

    for i, row in enumerate(v["annotation_examples"]["rows"]):
        cases.append(
            _case(
                "annotations.json",
                f"map/{i}",
                "annotation_fields",
                {"annotations": row["annotations"]},
            )
        )

    base_card = {
        "id": "github:create_issue@1.4.0",
        "name": "create_issue",
        "description": "Create a new issue in a GitHub repository.",
        "tags": ["issues", "write"],
        "kind": "tool",
        "namespace": "github",
        "has_schema": True,
        "score": 0.82,
        "cost_hint": 0,
        "side_effects": True,
    }
    card_variants = {
        "plain": base_card,
        "read-only": {**base_card, "side_effects": False, "tags": ["read-only"]},
        "costly": {**base_card, "cost_hint": 2.5},
        "renamed": {**base_card, "name": "Create issue"},
        "no-schema": {**base_card, "has_schema": False},
        "internal-path": {
            **base_card,
            "id": "/github/issues",
            "kind": "internal",
            "namespace": "",
            "name": "issues",
            "tags": [],
        },
        "marker": {
            **base_card,
            "id": "__cache_breakpoint__",
            "kind": "internal",
            "namespace": "",
            "name": "cache breakpoint",
            "tags": [],
        },
    }
    for label, card in card_variants.items():
        cases.append(_case("cards.json", f"render/{label}", "render_card", {"card": card}))
        cases.append(_case("cards.json", f"validate/{label}", "validate_card", {"card": card}))
    broken = {
        "banned-field": {**base_card, "inputSchema": {"type": "object"}},
        "stringified": {**base_card, "description": 'inputSchema: {"type": "object"}'},
        "six-tags": {**base_card, "tags": ["a", "b", "c", "d", "e", "f"]},
        "unsorted-tags": {**base_card, "tags": ["write", "issues"]},
        "duplicate-tags": {**base_card, "tags": ["issues", "issues"]},
        "multi-line": {**base_card, "description": "one\ntwo"},
        "long-name": {**base_card, "name": "n" * 65},
        "wrong-namespace": {**base_card, "namespace": "gitlab"},
    }
    for label, card in broken.items():
        cases.append(_case("cards.json", f"validate/{label}", "validate_card", {"card": card}))
    return cases


def meta_schema(spec: Spec) -> dict[str, Any]:
    """JSON Schema of a vector file."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "gatespec test-vector file",
        "description": (
            "Each case names a function of the surface, its input and the expected answer: "
            '{"ok": value} on success or {"error": CODE} with an error code of the spec.'
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
                    "required": ["name", "function", "input", "expect"],
                    "properties": {
                        "name": {"type": "string"},
                        "function": {"type": "string"},
                        "input": {"type": "object"},
                        "expect": {
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
                        },
                    },
                },
            },
        },
    }
