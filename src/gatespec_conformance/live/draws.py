"""Inputs layer 2 draws before the run: seeded like layer 1 (one pinned hypothesis run per
family, see cases.draw_all), so `--seed` and `--max-examples` reproduce them and
`--list` can show them.

Meta-tool arguments come from the generated strategies (`strategies.invalid("path")`,
`invalid_args("tool_browse")`, ...) and the shipped vectors. Arguments for a fixture tool are
drawn against its known input schema: valid instances, and instances broken one way each
(missing required property, wrong type, out of range, unknown property, not an object),
every one confirmed invalid by a reference JSON Schema validator.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources
from typing import Any

from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from gatespec_conformance.functions.cases import balanced, draw_all, family_seed, unique_inputs
from gatespec_conformance.live.checks import Drawn
from gatespec_surface import strategies as s
from gatespec_surface import vectors as v

__all__ = [
    "draw_cases",
    "invalid_instance",
    "meta_args",
    "valid_instance",
    "vector_errors",
]

Labelled = st.SearchStrategy[tuple[str, dict[str, Any]]]


def draw_cases(key: str, strategy: Callable[[], Labelled], seed: int, n: int) -> list[Drawn]:
    """Up to n unique drawn inputs, balanced across labels, named ``[label/]NNNN``."""
    if n <= 0:
        return []
    drawn = draw_all(strategy(), n * 3, family_seed(seed, f"server/{key}"))
    out = []
    for i, (label, inp) in enumerate(balanced(unique_inputs(drawn), n), start=1):
        out.append(Drawn(f"{label + '/' if label else ''}{i:04d}", inp, label))
    return out


def vector_errors(function: str, code: str, grammar: str | None = None) -> list[Drawn]:
    """Every shipped vector case of `function` expecting `code` (grammar_match: only those of
    `grammar`), named ``vectors/<file>/<case name>``; input {"value": ...}."""
    out: list[Drawn] = []
    seen: set[str] = set()
    root = resources.files(v)
    for filename in v.VECTOR_FILES:
        stem = filename.removesuffix(".json")
        doc = json.loads(root.joinpath(filename).read_text(encoding="utf-8"))
        for case in doc["cases"]:
            if case["function"] != function or case["expect"].get("error") != code:
                continue
            if grammar is not None and case["input"].get("grammar") != grammar:
                continue
            name = f"vectors/{stem}/{case['name']}"
            if name in seen:
                continue
            seen.add(name)
            out.append(Drawn(name, {"value": case["input"]["value"]}))
    return out


def meta_args(tool: str) -> Callable[[], Labelled]:
    """invalid_args(tool) from the generated strategies, labelled by how it is broken."""
    return lambda: s.invalid_args(tool)


def grammar_values(grammar: str, valid: bool) -> Callable[[], Labelled]:
    def strategy() -> Labelled:
        values = s.valid(grammar) if valid else s.invalid(grammar)
        return values.map(lambda value: ("", {"value": value}))

    return strategy


# ------------------------------------------------------------------ a fixture tool's args

_OTHER_JSON = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=8),
    st.lists(st.integers(0, 9), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(0, 9), max_size=2),
)


def _value(prop: dict[str, Any]) -> st.SearchStrategy[Any]:
    kind = prop.get("type")
    if kind == "string":
        low = int(prop.get("minLength", 0))
        high = min(int(prop.get("maxLength", low + 40)), low + 40)
        return st.text(min_size=low, max_size=high)
    if kind == "integer":
        return st.integers(prop.get("minimum", -1000), prop.get("maximum", 1000))
    if kind == "number":
        return st.floats(prop.get("minimum", -1e6), prop.get("maximum", 1e6), allow_nan=False)
    if kind == "boolean":
        return st.booleans()
    return st.none()


@st.composite
def _instance(draw: st.DrawFn, schema: dict[str, Any]) -> dict[str, Any]:
    props: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    out: dict[str, Any] = {}
    for name, prop in props.items():
        if name in required or draw(st.booleans()):
            out[name] = draw(_value(prop))
    return out


def valid_instance(schema: dict[str, Any]) -> Callable[[], Labelled]:
    check = Draft202012Validator(schema)
    return lambda: _instance(schema).filter(check.is_valid).map(lambda a: ("", {"args": a}))


def _out_of_range(prop: dict[str, Any]) -> list[Any]:
    out: list[Any] = []
    if "minimum" in prop:
        out.append(prop["minimum"] - 1)
    if "maximum" in prop:
        out.append(prop["maximum"] + 1)
    if "minLength" in prop and prop["minLength"] > 0:
        out.append("")
    if "maxLength" in prop:
        out.append("x" * (prop["maxLength"] + 1))
    return out


@st.composite
def _broken(draw: st.DrawFn, schema: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    props: dict[str, Any] = schema.get("properties", {})
    ranged = {n: r for n, p in props.items() if (r := _out_of_range(p))}
    options = ["wrong_type", "not_an_object"]
    if schema.get("required"):
        options.append("missing_required")
    if ranged:
        options.append("out_of_range")
    if schema.get("additionalProperties") is False:
        options.append("unknown_property")
    how = draw(st.sampled_from(options))
    args: Any = draw(_instance(schema))
    if how == "missing_required":
        args.pop(draw(st.sampled_from(sorted(schema["required"]))), None)
    elif how == "wrong_type":
        args[draw(st.sampled_from(sorted(props)))] = draw(_OTHER_JSON)
    elif how == "out_of_range":
        name = draw(st.sampled_from(sorted(ranged)))
        args[name] = draw(st.sampled_from(ranged[name]))
    elif how == "unknown_property":
        args[draw(st.text(min_size=1, max_size=8).filter(lambda k: k not in props))] = 1
    else:
        args = draw(st.one_of(st.lists(st.integers(0, 3), max_size=2), st.text(max_size=5)))
    return how, {"args": args}


def invalid_instance(schema: dict[str, Any]) -> Callable[[], Labelled]:
    check = Draft202012Validator(schema)
    return lambda: _broken(schema).filter(lambda c: not check.is_valid(c[1]["args"]))
