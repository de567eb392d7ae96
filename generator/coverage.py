"""Check ids: what a requirement's `checks` may name, and the pytest node that performs each.

Emitted tests (generated/tests) check the generated data against the spec: grammar languages,
descriptors, vectors. Hand-written tests of the support library (tests/generator), bound to
the spec, check the algorithms: round trips, hash8, the card rules and rendering.
"""

from __future__ import annotations

from .grammar import Analysis
from .ir import Spec

# check id -> the test node that performs it, below each folder (grammar and vector checks,
# one per grammar and vector file, are added in check_nodes)
EMITTED_TESTS = "generated/tests"
SUPPORT_TESTS = "tests/generator"
SUPPORT_CHECKS: dict[str, str] = {
    "grammar.tool_id.roundtrip": "test_support_ids.py::test_tool_id_roundtrip",
    "hash8.emitted": "test_support_ids.py::test_make_tool_id",
    "hash8.shape_only": "test_support_ids.py::test_hash8_ignores_prose",
    "grammar.path.parse": "test_support_names.py::test_path_parse",
    "wire_name.roundtrip": "test_support_names.py::test_wire_name_roundtrip",
    "grammar.aggregate_name.roundtrip": "test_support_names.py::test_aggregate_roundtrip",
    "grammar.resource_uri.roundtrip": "test_support_names.py::test_resource_uri_roundtrip",
    "grammar.search_operation.roundtrip": "test_support_names.py::test_search_operation_roundtrip",
    "grammar.view_selector.parse": "test_support_names.py::test_view_selector_parse",
    "server_key.normalise": "test_support_names.py::test_server_key_normalise",
    "model.ChoiceCard.valid": "test_support_cards.py::test_card_valid",
    "model.ChoiceCard.invalid": "test_support_cards.py::test_card_invalid",
    "model.ChoiceCard.banned": "test_support_cards.py::test_card_banned_any_form",
    "model.ChoiceCard.render": "test_support_cards.py::test_card_render",
    "annotations.untrusted": "test_support_cards.py::test_annotation_mapping_untrusted",
}
EMITTED_CHECKS: dict[str, str] = {
    "descriptor.profiles": "test_descriptors.py::test_profiles",
    "descriptor.shape": "test_descriptors.py::test_descriptor_shape",
    "descriptor.accepts": "test_descriptors.py::test_schema_accepts_valid",
    "descriptor.rejects": "test_descriptors.py::test_schema_rejects_invalid",
    "descriptor.tool_browse.exactly_one": "test_descriptors.py::test_browse_exactly_one",
    "model.schemas": "test_descriptors.py::test_model_schemas",
}


def check_nodes(
    spec: Spec, analyses: dict[str, Analysis], vector_files: list[str]
) -> dict[str, str]:
    t = EMITTED_TESTS
    out: dict[str, str] = {}
    for name in spec.grammars:
        out[f"grammar.{name}.examples"] = f"{t}/test_grammars.py::test_examples[{name}]"
        out[f"grammar.{name}.valid"] = f"{t}/test_grammars.py::test_valid[{name}]"
        out[f"grammar.{name}.invalid"] = f"{t}/test_grammars.py::test_invalid[{name}]"
        out[f"grammar.{name}.json_schema"] = (
            f"{t}/test_grammars.py::test_json_schema_agrees[{name}]"
        )
        a = analyses[name]
        cap = spec.grammars[name].spec.max_length
        if cap is not None and (a.max_len is None or a.max_len > cap):
            out[f"grammar.{name}.cap"] = f"{t}/test_grammars.py::test_over_cap[{name}]"
    out.update({k: f"{t}/{v}" for k, v in EMITTED_CHECKS.items()})
    for file in vector_files:
        out[f"vectors.{file.removesuffix('.json')}"] = f"{t}/test_vectors.py::test_vector"
    out.update({k: f"{SUPPORT_TESTS}/{v}" for k, v in SUPPORT_CHECKS.items()})
    return out
