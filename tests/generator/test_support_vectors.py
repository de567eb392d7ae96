"""Every expected answer of the spec (vectors.yaml, grammars.yaml) from generator.support bound
to the real spec, through the same dispatcher the generated package ships."""

from __future__ import annotations

import pytest

from generator.grammar import GrammarCompiler
from generator.support.errors import SurfaceError
from generator.support.ids import hash8
from generator.support.vectors import Surface, functions, run_case
from generator.vectors import build_cases
from tests.generator.bound import (
    AGGREGATE,
    ANNOTATIONS,
    CARD_RULES,
    GRAMMARS,
    OPERATIONS,
    PATHS,
    RENDERER,
    RESOURCE_URIS,
    SELECTORS,
    SERVER_KEYS,
    SPEC,
    TOOL_IDS,
    WIRE,
    Error,
    ToolIdParts,
)

FUNCTIONS = functions(
    Surface(
        matchers={name: g.matcher(Error.of) for name, g in GRAMMARS.items()},
        parse_tool_id=TOOL_IDS.parse,
        format_tool_id=TOOL_IDS.format,
        tool_id_parts=ToolIdParts,
        hash8=hash8,
        make_tool_id=TOOL_IDS.make,
        parse_path=PATHS.parse,
        encode_wire_name=WIRE.encode,
        decode_wire_name=WIRE.decode,
        parse_aggregate_name=AGGREGATE.parse,
        format_aggregate_name=AGGREGATE.format,
        parse_resource_uri=RESOURCE_URIS.parse,
        format_resource_uri=RESOURCE_URIS.format,
        parse_search_operation=OPERATIONS.parse,
        parse_view_selector=SELECTORS.parse,
        server_key=SERVER_KEYS.from_config_key,
        annotation_fields=ANNOTATIONS.fields,
        render_card=RENDERER.render_card,
        validate_card=CARD_RULES.validate,
    )
)
_compiler = GrammarCompiler(SPEC.grammars)
CASES = build_cases(SPEC, {n: _compiler.analyse(g) for n, g in SPEC.grammars.items()})


@pytest.mark.parametrize("case", CASES, ids=[f"{c['file']}:{c['name']}" for c in CASES])
def test_the_support_library_gives_the_spec_answer(case: dict) -> None:
    assert run_case(FUNCTIONS, case) == case["expect"]


def test_every_function_the_spec_uses_is_dispatched() -> None:
    assert {c["function"] for c in CASES} == set(FUNCTIONS)


def test_only_surface_errors_become_answers() -> None:
    table = {
        "boom": lambda inp: 1 / 0,
        "typed": lambda inp: (_ for _ in ()).throw(Error("TIMEOUT")),
    }
    assert run_case(table, {"function": "typed", "input": {}}) == {"error": "TIMEOUT"}
    with pytest.raises(ZeroDivisionError):
        run_case(table, {"function": "boom", "input": {}})
    assert issubclass(Error, SurfaceError)
