"""One-off maintenance helper: write `checks:` / `pending:` into spec/requirements.yaml from the
table below, keeping the file's comments. Run again after editing the table."""

from __future__ import annotations

import re
import sys
from pathlib import Path

G = "grammar"
CHECKS: dict[str, list[str]] = {
    "TOOLID-GRAMMAR": [
        f"{G}.tool_id.examples",
        f"{G}.tool_id.valid",
        f"{G}.tool_id.invalid",
        f"{G}.tool_id.json_schema",
    ],
    "TOOLID-MAX-LENGTH": [f"{G}.tool_id.valid", "vectors.tool_ids"],
    "TOOLID-NAMESPACE-SOURCE": ["server_key.normalise", "vectors.server_keys"],
    "TOOLID-STABLE-ACROSS-DESCRIPTION-EDITS": ["hash8.shape_only"],
    "TOOLID-HASH8-WHEN-NO-VERSION": ["hash8.emitted", "vectors.tool_ids"],
    "TOOLID-NAME-DOT-SLASH-STRIPPED": ["vectors.tool_ids"],
    "TOOLID-NAME-UNDERSCORE-VERBATIM": ["vectors.tool_ids"],
    "TOOLID-NAMESPACE-MCP-FALLBACK": ["server_key.normalise"],
    "TOOLID-EXAMPLES": ["vectors.tool_ids"],
    "TOOLID-PARSE-REJECTS-MALFORMED": [f"{G}.tool_id.invalid", "vectors.tool_ids"],
    "TOOLID-ROUNDTRIP": [f"{G}.tool_id.roundtrip"],
    "TOOLID-NO-LEGACY-FORM": ["hash8.emitted"],
    "TOOLID-INFER-NAMESPACE-TABLE": ["server_key.normalise", "vectors.server_keys"],
    "HASH-INPUT": ["hash8.emitted", "vectors.hash8"],
    "HASH-CANONICAL-SHAPE": ["vectors.hash8", "hash8.emitted"],
    "HASH-IGNORES-TYPES-AND-DESCRIPTIONS": ["hash8.shape_only"],
    "HASH-CHANGES-WITH-SHAPE": ["hash8.shape_only", "vectors.hash8"],
    "HASH-JCS-SUBSTITUTE": ["vectors.hash8"],
    "CARD-ALLOWED-FIELDS": ["model.ChoiceCard.invalid", "model.ChoiceCard.valid"],
    "CARD-ID-IS-TOOLID": ["model.ChoiceCard.invalid", "vectors.cards"],
    "CARD-NAME-MAX-64": ["model.ChoiceCard.invalid"],
    "CARD-DESCRIPTION-SINGLE-LINE": ["model.ChoiceCard.invalid", "vectors.cards"],
    "CARD-TAGS-SORTED": ["model.ChoiceCard.invalid", "vectors.cards"],
    "CARD-TAGS-DEDUPLICATED": ["vectors.cards"],
    "CARD-TAGS-MAX-5": ["model.ChoiceCard.invalid", "vectors.cards"],
    "CARD-TAG-MAX-24-CHARS": ["model.ChoiceCard.invalid", f"{G}.tag.examples"],
    "CARD-KIND-ENUM": ["model.ChoiceCard.invalid"],
    "CARD-NAMESPACE-MATCHES-ID": ["vectors.cards", "model.ChoiceCard.valid"],
    "CARD-SCORE-JSON-ONLY": ["model.ChoiceCard.render"],
    "CARD-COST-HINT-RENDER-POSITIVE": ["model.ChoiceCard.render", "vectors.cards"],
    "CARD-SIDE-EFFECTS-RENDER-TRUE": ["model.ChoiceCard.render", "vectors.cards"],
    "CARD-NO-SCHEMAS": ["model.ChoiceCard.banned"],
    "CARD-NO-EXAMPLES": ["model.ChoiceCard.banned"],
    "CARD-NO-METADATA-MAPS": ["model.ChoiceCard.banned"],
    "CARD-NO-TRANSPORT-IDENTIFIERS": ["model.ChoiceCard.banned"],
    "BROWSE-EXACTLY-ONE-ARG": ["descriptor.tool_browse.exactly_one", "descriptor.rejects"],
    "PATH-GRAMMAR": [
        f"{G}.path.examples",
        f"{G}.path.valid",
        f"{G}.path.invalid",
        f"{G}.path.json_schema",
        f"{G}.path.cap",
    ],
    "PATH-NO-TRAILING-SLASH": [f"{G}.path.examples", "vectors.paths"],
    "PATH-NO-EMPTY-SEGMENTS": [f"{G}.path.examples", "vectors.paths"],
    "PATH-LOWERCASE-ONLY": [f"{G}.path.examples", f"{G}.path.invalid"],
    "PATH-ROOT-SEGMENT-NAMESPACE": [f"{G}.path.parse", "vectors.paths"],
    "PATH-DEEP-SEGMENT-DIGIT": [f"{G}.path_segment.examples", f"{G}.path.examples"],
    "PATH-STAR-LISTS-ALL": [f"{G}.path.parse", "vectors.paths"],
    "PATH-NAMESPACES-LOWERCASED": ["server_key.normalise"],
    "ERROR-BROWSE-SHAPE": ["model.schemas", "descriptor.shape"],
    "ERROR-PATH-INVALID": [f"{G}.path.invalid"],
    "EXPOSE-TRANSPARENT-NAME-IS-TOOLID": ["wire_name.roundtrip", "vectors.wire_names"],
    "EXPOSE-URL-ENCODE-NAMES": ["wire_name.roundtrip", f"{G}.wire_name.examples"],
    "EXPOSE-TRANSPARENT-META-TOOLS": ["descriptor.profiles"],
    "EXPOSE-GATEWAY-THREE-META-TOOLS": ["descriptor.profiles"],
    "ANNOT-READ-ONLY": ["annotations.mapping", "vectors.annotations"],
    "ANNOT-DESTRUCTIVE-TAG": ["annotations.mapping", "vectors.annotations"],
    "ANNOT-COST-HINT": ["annotations.mapping", "annotations.untrusted"],
    "SEARCH-FIXED-TOOL-SET": ["descriptor.profiles"],
    "SEARCH-RESULT-FIELDS": ["model.schemas"],
    "SEARCH-NO-SCHEMAS-IN-RESULTS": ["model.schemas"],
    "SEARCH-QUERY-FILTER": ["descriptor.accepts"],
    "ROUTE-DOUBLE-UNDERSCORE-NAMES": [
        f"{G}.aggregate_name.examples",
        f"{G}.aggregate_name.roundtrip",
        "vectors.aggregate_names",
    ],
    "AGG-NO-SINGLE-SERVER-EXCEPTION": ["vectors.aggregate_names"],
    "ROUTE-NON-NAMESPACED-REJECTED": ["vectors.aggregate_names"],
    "ROUTE-INVALID-NAMESPACE-FORMAT": [f"{G}.aggregate_name.invalid", "vectors.aggregate_names"],
    "VIEW-DRILLDOWN": [f"{G}.view_selector.parse", f"{G}.artifact_handle.examples"],
}

# Extra checks that live in hand-written tests (path::function); merged with CHECKS.
R = "tests/runtime/"
RUNTIME_CHECKS: dict[str, list[str]] = {
    "TOOLID-VERSION-FROM-META": [
        R + "test_catalog.py::test_ids_namespaces_and_fields",
        R + "test_catalog.py::test_invalid_version_falls_back_to_hash8",
    ],
    "TOOLID-COLLISION-ERROR": [
        R + "test_catalog.py::test_duplicate_tools_are_an_error_naming_both",
        R + "test_catalog.py::test_namespace_collision_is_an_error",
    ],
    "TOOLID-SOLE-KEY": [R + "test_runtime.py::test_hydrate_and_execute_share_one_key"],
    "BUDGET-EXACT-CL100K": [
        R + "test_tokens.py::test_offline_encoding_is_the_budget_encoder",
        R + "test_tokens.py::test_missing_encoder_is_a_loud_error",
        R + "test_tokens.py::test_known_counts",
    ],
    "BUDGET-PROMPT-FORM": [
        R + "test_cards.py::test_long_descriptions_are_truncated_to_the_target",
        R + "test_cards.py::test_browse_text_is_checked_against_the_cap",
    ],
    "BUDGET-TARGETS": [
        R + "test_cards.py::test_long_descriptions_are_truncated_to_the_target",
        R + "test_cards.py::test_real_catalog_cards_all_validate_and_fit",
    ],
    "BUDGET-CARD-HARD-CAP": [
        R + "test_cards.py::test_generated_cards_fit_or_raise",
        R + "test_cards.py::test_real_catalog_cards_all_validate_and_fit",
    ],
    "BUDGET-BROWSE-HARD-CAP": [R + "test_cards.py::test_browse_text_is_checked_against_the_cap"],
    "BUDGET-OVER-CAP-ERROR": [
        R + "test_cards.py::test_a_card_over_the_hard_cap_raises",
        R + "test_cards.py::test_a_card_over_the_hard_cap_excludes_only_that_tool",
    ],
    "BUDGET-NO-FIELD-DROPPING": [
        R + "test_cards.py::test_schema_flag_side_effects_cost_and_tags",
        R + "test_cards.py::test_long_names_are_cut_on_the_card_only",
    ],
    "TRUNC-VERBATIM-WITHIN-BUDGET": [
        R + "test_truncate.py::test_short_text_is_verbatim",
        R + "test_truncate.py::test_matches_the_brute_force_reference",
    ],
    "TRUNC-SENTENCE-PREFIX": [
        R + "test_truncate.py::test_multi_sentence_text_is_cut_at_a_sentence_end",
        R + "test_truncate.py::test_abbreviations_and_file_names_are_not_sentence_ends",
        R + "test_truncate.py::test_full_width_terminators_end_chinese_sentences",
    ],
    "TRUNC-HARD-CUT-ELLIPSIS": [
        R + "test_truncate.py::test_one_huge_sentence_is_hard_cut_with_an_ellipsis",
        R + "test_truncate.py::test_cjk_text_is_cut_at_a_character_boundary",
    ],
    "TRUNC-DETERMINISTIC": [
        R + "test_truncate.py::test_deterministic_across_processes_locales_and_hash_seeds"
    ],
    "ORDER-SCORE-DESC": [
        R + "test_cards.py::test_order_is_score_desc_then_id_asc",
        R + "test_browse.py::test_query_browse_ranks_and_scores",
    ],
    "ORDER-TIE-ID-ASC": [R + "test_cards.py::test_order_is_score_desc_then_id_asc"],
    "ORDER-BYTE-STABLE": [
        R + "test_browse.py::test_tree_is_independent_of_input_order",
        R + "test_truncate.py::test_deterministic_across_processes_locales_and_hash_seeds",
    ],
    "BROWSE-QUERY-TOP-K": [R + "test_browse.py::test_query_browse_ranks_and_scores"],
    "BROWSE-PATH-CHILDREN": [
        R + "test_browse.py::test_walk_the_whole_tree",
        R + "test_browse.py::test_large_namespaces_are_clustered",
    ],
    "BROWSE-ROOT-ONE-PER-NAMESPACE": [R + "test_browse.py::test_root_lists_one_card_per_namespace"],
    "BROWSE-LEAF-SINGLE-CARD": [
        R + "test_browse.py::test_walk_the_whole_tree",
        R + "test_browse.py::test_leaf_slugs",
    ],
    "BROWSE-EXACTLY-ONE-ARG": [
        R + "test_browse.py::test_exactly_one_of_query_or_path",
        R + "test_runtime.py::test_both_or_neither_query_and_path",
    ],
    "ERROR-PATH-NOT-FOUND": [
        R + "test_browse.py::test_path_not_found_names_the_nearest_parent",
        R + "test_runtime.py::test_valid_paths_list_or_are_not_found",
    ],
    "ERROR-PATH-INVALID": [
        R + "test_browse.py::test_every_invalid_path_is_path_invalid",
        R + "test_runtime.py::test_invalid_paths_are_path_invalid",
    ],
    "ERROR-BROWSE-CARRIER": [
        R + "test_server_surface.py::test_error_result_shape",
        R + "test_server_surface.py::test_a_runtime_gateway_error_becomes_its_payload",
    ],
    "EXPOSE-SCHEMAS-ONLY-VIA-HYDRATION": [
        R + "test_runtime.py::test_hydrate_and_execute_share_one_key",
        R + "test_server_surface.py::test_transparent_lists_meta_tools_then_stripped_entries",
    ],
    "EXPOSE-TRANSPARENT-FULL-CATALOG": [
        R + "test_runtime.py::test_stripped_tools_cover_the_catalog",
        R + "test_server_surface.py::test_transparent_lists_meta_tools_then_stripped_entries",
    ],
    "EXPOSE-TRANSPARENT-SENTINEL-SCHEMA": [
        R + "test_runtime.py::test_stripped_tools_cover_the_catalog"
    ],
    "EXPOSE-TRANSPARENT-DESCRIPTION-TRUNCATED": [
        R + "test_server_transports.py::test_real_runtime_transparent_over_stdio"
    ],
    "EXPOSE-STRIPPED-NOT-CALLABLE": [
        R + "test_server_surface.py::test_calling_a_stripped_entry_directly_points_to_tool_execute"
    ],
    "EXPOSE-GATEWAY-NO-UPSTREAM-LISTING": [
        R + "test_server_surface.py::test_gateway_lists_exactly_its_meta_tools",
        R + "test_server_transports.py::test_gateway_mode_over_http_lists_only_the_meta_tools",
    ],
    "ENVELOPE-EXECUTE-PIPELINE": [
        R + "test_runtime.py::test_browse_execute_view_over_real_servers"
    ],
    "HYDRATE-SHARED-OPERATION": [
        R + "test_runtime.py::test_hydrate_and_execute_share_one_key",
        R + "test_catalog.py::test_hydrate_gives_the_full_description_and_a_copy_of_the_schema",
    ],
    "HYDRATE-OUTPUT-SCHEMA-KEPT": [R + "test_catalog.py::test_ids_namespaces_and_fields"],
    "VALIDATE-BEFORE-UPSTREAM": [R + "test_runtime.py::test_args_invalid_never_reaches_upstream"],
    "VALIDATE-ARGS-INVALID-ERROR": [
        R + "test_validation.py::test_message_names_path_and_expectation",
        R + "test_runtime.py::test_args_invalid_never_reaches_upstream",
    ],
    "VALIDATE-NO-UPSTREAM-ON-INVALID": [
        R + "test_runtime.py::test_args_invalid_never_reaches_upstream",
        R + "test_runtime.py::test_invalid_tool_ids_are_typed_errors",
    ],
    "CACHE-STABLE-OPT-IN": [
        R + "test_runtime.py::test_cache_stable_browse_records_hydration_only_on_success",
        R + "test_browse.py::test_query_browse_ranks_and_scores",
    ],
    "CACHE-SEEN-SET": [R + "test_session.py::test_hydrated_tools_count_as_seen"],
    "CACHE-SEEN-PREFIX-ID-ASC": [
        R + "test_session.py::test_mixed_browse_has_seen_then_marker_then_new"
    ],
    "CACHE-MARKER-CARD": [
        R + "test_session.py::test_marker_card_is_a_valid_internal_card",
        R + "test_session.py::test_mixed_browse_has_seen_then_marker_then_new",
    ],
    "CACHE-NEW-SUFFIX-ID-ASC": [
        R + "test_session.py::test_mixed_browse_has_seen_then_marker_then_new"
    ],
    "CACHE-PREFIX-CONTENT-FROZEN": [
        R + "test_session.py::test_seen_content_is_frozen_at_first_sighting",
        R + "test_session.py::test_frozen_content_survives_a_different_query",
    ],
    "CACHE-SCORE-PRESERVED": [
        R + "test_session.py::test_frozen_content_survives_a_different_query"
    ],
    "CACHE-MARKER-FIRST-BROWSE": [
        R + "test_session.py::test_first_browse_has_no_marker_and_is_sorted_by_id"
    ],
    "CACHE-MARKER-ALL-SEEN": [R + "test_session.py::test_all_seen_has_no_marker"],
    "CACHE-MARKER-ALL-NEW": [
        R + "test_session.py::test_all_new_after_earlier_browses_has_no_marker"
    ],
    "CACHE-MARKER-NOT-IN-TOOLS-LIST": [
        R + "test_server_surface.py::test_gateway_lists_exactly_its_meta_tools",
        R + "test_runtime.py::test_stripped_tools_cover_the_catalog",
    ],
    "CACHE-FAILED-HYDRATE-NOT-RECORDED": [
        R + "test_session.py::test_failed_hydration_is_not_recorded",
        R + "test_runtime.py::test_cache_stable_browse_records_hydration_only_on_success",
    ],
    "ENVELOPE-TEXT-SUMMARY": [
        R + "test_firewall.py::test_short_text_is_the_summary_and_needs_no_artifact",
        R + "test_firewall.py::test_summary_is_bounded_and_a_prefix",
    ],
    "ENVELOPE-STATUS": [R + "test_firewall.py::test_is_error_gives_status_error"],
    "ENVELOPE-BINARY-ARTIFACTS": [
        R + "test_firewall.py::test_image_is_decoded_into_a_binary_artifact",
        R + "test_firewall.py::test_audio_is_decoded_into_a_binary_artifact",
    ],
    "ENVELOPE-RESOURCE-CONTENT": [
        R + "test_firewall.py::test_embedded_text_resource_goes_to_full_text_and_an_artifact",
        R + "test_firewall.py::test_embedded_blob_resource_is_a_binary_artifact",
    ],
    "ENVELOPE-RESOURCE-LINK": [
        R + "test_firewall.py::test_resource_link_is_a_reference_with_no_bytes"
    ],
    "ENVELOPE-STRUCTURED-CONTENT-ARTIFACT": [
        R + "test_firewall.py::test_structured_content_is_an_artifact_and_facts"
    ],
    "ENVELOPE-STRUCTURED-CONTENT-FACTS": [
        R + "test_firewall.py::test_seed_002_structured_content_example"
    ],
    "ENVELOPE-CONTENT-ANNOTATIONS": [
        R + "test_firewall.py::test_part_annotations_go_to_provenance_with_their_index"
    ],
    "ANNOT-NOT-SECURITY": [R + "test_catalog.py::test_ids_namespaces_and_fields"],
    "ROUTE-MULTI-UPSTREAM": [
        R + "test_upstream_real.py::test_pool_of_real_servers",
        R + "test_runtime.py::test_browse_execute_view_over_real_servers",
    ],
    "ERROR-META-TOOL-RESULT": [
        R + "test_server_surface.py::test_error_result_shape",
        R + "test_server_surface.py::test_argument_errors_of_other_meta_tools",
    ],
    "ERROR-NEVER-RAISE": [
        R
        + "test_server_surface.py::test_an_unexpected_exception_is_an_upstream_error_and_is_logged",
        R + "test_server_surface.py::test_a_gateway_error_inside_an_exception_group_is_unwrapped",
    ],
    "REGISTRY-ADD-SERVER": [R + "test_upstream_connection.py::test_pagination_is_followed"],
    "REGISTRY-REFRESH-ON-LIST-CHANGED": [
        R + "test_upstream_pool.py::test_list_changed_relists_and_notifies"
    ],
    "REGISTRY-STORE-FULL-SCHEMA": [
        R + "test_catalog.py::test_hydrate_gives_the_full_description_and_a_copy_of_the_schema"
    ],
    "REGISTRY-INTERNAL-NAMESPACE": [R + "test_catalog.py::test_same_name_in_two_servers_is_fine"],
    "REGISTRY-GET-TOOL-FULL": [
        R + "test_catalog.py::test_hydrate_gives_the_full_description_and_a_copy_of_the_schema"
    ],
    "REGISTRY-CHANGE-EVENT": [R + "test_upstream_pool.py::test_list_changed_relists_and_notifies"],
    "TRANSPORT-LIST-CHANGED-NOTIFY": [
        R + "test_server_surface.py::test_list_changed_reaches_a_legacy_client",
        R + "test_server_surface.py::test_list_changed_reaches_a_2026_subscriber",
    ],
    "ROUTE-UNKNOWN-TOOL": [
        R + "test_catalog.py::test_unknown_well_formed_ids_are_tool_not_found",
        R + "test_server_surface.py::test_an_unknown_tool_in_gateway_mode",
    ],
    "ROUTE-TIMEOUT": [
        R + "test_runtime.py::test_a_hung_or_crashed_upstream_is_isolated",
        R + "test_upstream_connection.py::test_hanging_call_times_out_and_connection_survives",
    ],
    "ROUTE-PROPAGATE-ERRORS": [
        R + "test_upstream_connection.py::test_error_answer_is_call_failed",
        R + "test_firewall.py::test_is_error_gives_status_error",
    ],
    "TRANSPORT-ADVERTISE-CAPABILITIES": [
        R
        + "test_server_surface.py::test_capabilities_advertise_list_changed_only_when_the_list_can_change"
    ],
    "TRANSPORT-INIT-HANDSHAKE": [
        R + "test_server_transports.py::test_stdio_handshake_client",
        R + "test_server_transports.py::test_streamable_http_handshake_client_has_a_session",
    ],
    "TRANSPORT-SSE-ENDPOINT": [R + "test_server_transports.py::test_legacy_sse_client"],
    "TRANSPORT-MESSAGES-POST": [
        R
        + "test_server_transports.py::test_sse_messages_accept_the_session_id_spelling_of_seed_001"
    ],
    "TRANSPORT-SSE-SESSION-LIFECYCLE": [R + "test_server_transports.py::test_legacy_sse_client"],
    "ROUTE-SERVER-UNAVAILABLE": [
        R + "test_runtime.py::test_a_hung_or_crashed_upstream_is_isolated",
        R + "test_upstream_pool.py::test_failures_are_isolated",
    ],
    "ROUTE-UNKNOWN-SERVER": [R + "test_upstream_pool.py::test_unknown_key_and_timeouts"],
    "ROUTE-UPSTREAM-CLEAN-NAME": [R + "test_runtime.py::test_hydrate_and_execute_share_one_key"],
    "VIEW-DRILLDOWN": [
        R + "test_runtime.py::test_browse_execute_view_over_real_servers",
        R + "test_artifacts.py::test_every_valid_selector_gives_a_view_or_view_failed",
    ],
}


RUNTIME_CHECKS.setdefault("CARD-NO-SCHEMAS", []).append(
    R + "test_cards.py::test_a_schema_pasted_into_a_description_is_cut_before_it"
)

_EXTRA_ROWS: list[tuple[str, list[str]]] = [
    (
        "TOOLID-GRAMMAR",
        [
            "vectors.grammars",
            f"{G}.namespace.examples",
            f"{G}.namespace.valid",
            f"{G}.namespace.invalid",
            f"{G}.name.examples",
            f"{G}.name.valid",
            f"{G}.name.invalid",
            f"{G}.version.examples",
            f"{G}.version.valid",
            f"{G}.version.invalid",
            f"{G}.hash8.examples",
            f"{G}.hash8.valid",
            f"{G}.hash8.invalid",
        ],
    ),
    (
        "PATH-GRAMMAR",
        [f"{G}.path_segment.examples", f"{G}.path_segment.valid", f"{G}.path_segment.invalid"],
    ),
    (
        "VIEW-DRILLDOWN",
        [
            f"{G}.view_selector.examples",
            f"{G}.view_selector.valid",
            f"{G}.view_selector.invalid",
            f"{G}.artifact_handle.examples",
            f"{G}.artifact_handle.valid",
            f"{G}.artifact_handle.invalid",
        ],
    ),
    (
        "CACHE-MARKER-CARD",
        [
            f"{G}.cache_marker_id.examples",
            f"{G}.cache_marker_id.valid",
            f"{G}.cache_marker_id.invalid",
        ],
    ),
    ("CARD-TAG-MAX-24-CHARS", [f"{G}.tag.examples", f"{G}.tag.valid", f"{G}.tag.invalid"]),
    (
        "EXPOSE-URL-ENCODE-NAMES",
        [f"{G}.wire_name.examples", f"{G}.wire_name.valid", f"{G}.wire_name.invalid"],
    ),
    (
        "ROUTE-DOUBLE-UNDERSCORE-NAMES",
        [
            f"{G}.aggregate_name.cap",
            f"{G}.aggregate_name.examples",
            f"{G}.aggregate_name.valid",
            f"{G}.aggregate_name.invalid",
        ],
    ),
    (
        "SEARCH-FIXED-TOOL-SET",
        [
            "vectors.operations",
            f"{G}.search_operation.roundtrip",
            f"{G}.search_operation.examples",
            f"{G}.search_operation.valid",
            f"{G}.search_operation.invalid",
        ],
    ),
    (
        "TOOLID-NAMESPACE-SOURCE",
        [f"{G}.server_key.examples", f"{G}.server_key.valid", f"{G}.server_key.invalid"],
    ),
    ("TRUNC-VERBATIM-WITHIN-BUDGET", ["truncate.description"]),
    ("TRUNC-SENTENCE-PREFIX", ["truncate.description"]),
    ("TRUNC-HARD-CUT-ELLIPSIS", ["truncate.description"]),
    ("TRUNC-DETERMINISTIC", ["truncate.description"]),
    ("BUDGET-EXACT-CL100K", ["tokens.count"]),
    ("PATH-GRAMMAR", ["vectors.grammars"]),
    ("VIEW-DRILLDOWN", [f"{G}.view_selector.cap", "vectors.selectors"]),
]
EXTRA: dict[str, list[str]] = {}
for _req, _ids in _EXTRA_ROWS:
    EXTRA.setdefault(_req, []).extend(_ids)

PENDING_BY_SCOPE = {
    "runtime": "issue 3 (runtime)",
    "transport": "issue 3 (runtime serving)",
    "surface": "issue 3 (runtime)",
}
SEARCH_OR_AGG = "later issue (search and aggregate profiles)"


def main() -> int:
    path = Path(sys.argv[1] if len(sys.argv) > 1 else "spec/requirements.yaml")
    lines = path.read_text(encoding="utf-8").splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if re.match(r"\s+(checks|pending):", line):
            i += 1
            continue
        out.append(line)
        m = re.match(r"(\s*)- id: (\S+)", line)
        if m:
            req = m.group(2)
            indent = m.group(1) + "  "
            # find the entry's scope and profiles to choose a pending note
            block = []
            j = i + 1
            while j < len(lines) and not re.match(r"\s*- id:", lines[j]) and lines[j].strip():
                block.append(lines[j])
                j += 1
            text = "\n".join(block)
            scope = re.search(r"scope: (\w+)", text).group(1)
            profiles = re.search(r"profiles: \[([^\]]*)\]", text).group(1)
            checks = CHECKS.get(req, []) + EXTRA.get(req, []) + RUNTIME_CHECKS.get(req, [])
            checks = list(dict.fromkeys(checks))
            if checks:
                out.append(f"{indent}checks: [{', '.join(checks)}]")
            else:
                only_other = all(p.strip() in ("search", "aggregate") for p in profiles.split(","))
                note = SEARCH_OR_AGG if only_other else PENDING_BY_SCOPE[scope]
                out.append(f'{indent}pending: "{note}"')
        i += 1
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
