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
RUNTIME_CHECKS: dict[str, list[str]] = {}

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
            checks = CHECKS.get(req, []) + RUNTIME_CHECKS.get(req, [])
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
