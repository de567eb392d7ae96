"""`gatespec vectors export DIR`: the shipped vectors, their meta-schema and schemas, and an index
describing every function's input and answer shapes."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Final

from gatespec_conformance.functions.cases import Case, generated_cases, vector_cases
from gatespec_conformance.functions.protocol import all_functions
from gatespec_surface import SPEC_HASH, SPEC_VERSION
from gatespec_surface import vectors as v

# ------------------------------------------------------------------ export


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return f"array<{_shape(value, 0)}>" if value else "array"
    return "object"


_MAX_KEYS: Final = 8  # wider objects (cards, schemas) are shown as "object"


def _shape(values: Sequence[Any], depth: int) -> Any:
    """A compact description of the JSON values seen: type names joined by "|", objects
    expanded (optional keys marked "?") down to `depth` levels."""
    dicts = [x for x in values if isinstance(x, dict)]
    names = sorted({_type_name(x) for x in values if not isinstance(x, dict)})
    if any(n.startswith("array<") for n in names):  # an empty array says nothing more
        names = [n for n in names if n != "array"]
    if dicts:
        keys = sorted({k for d in dicts for k in d})
        if depth > 0 and len(keys) <= _MAX_KEYS:
            obj = {
                (k if all(k in d for d in dicts) else k + "?"): _shape(
                    [d[k] for d in dicts if k in d], depth - 1
                )
                for k in keys
            }
            return obj if not names else {"anyOf": [obj, "|".join(names)]}
        names = sorted({*names, "object"})
    return "|".join(names) if names else "unknown"


def describe_functions(cases: Sequence[Case]) -> list[dict[str, Any]]:
    """Each protocol function with the input and answer shapes its cases show, and the error
    codes they expect. Functions come from the generated FUNCTIONS and the kit's extras, so a
    function with no case still appears (with unknown shapes)."""
    out = []
    for fn in all_functions():
        mine = [c for c in cases if c.function == fn]
        vectors = [c for c in mine if any(i.startswith("vectors.") for i in c.check_ids)]
        oks = [c.expect["ok"] for c in mine if "ok" in c.expect]
        out.append(
            {
                "name": fn,
                "source": "vectors" if fn in v.FUNCTIONS else "kit",
                "vector_cases": len(vectors),
                "input": _shape([c.input for c in mine], 2) if mine else "unknown",
                "ok": _shape(oks, 2) if oks else "unknown",
                "errors": sorted({c.expect["error"] for c in mine if "error" in c.expect}),
            }
        )
    return out


def export_vectors(directory: str | Path, seed: int = 0) -> dict[str, Any]:
    """Copy the shipped vector files, meta-schema.json and schemas.json into `directory` and
    write index.json beside them. Returns the index."""
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    root = resources.files(v)
    files = []
    for name in [*v.VECTOR_FILES, "meta-schema.json", "schemas.json"]:
        data = root.joinpath(name).read_bytes()
        (target / name).write_bytes(data)
        entry: dict[str, Any] = {"name": name, "sha256": hashlib.sha256(data).hexdigest()}
        if name in v.VECTOR_FILES:
            entry["cases"] = len(json.loads(data)["cases"])
        files.append(entry)
    # Shapes of the kit's own functions come from a few drawn cases (they have no vectors).
    kit_only = [c for c in generated_cases(seed, 5) if c.function not in v.FUNCTIONS]
    index = {
        "format": "gatespec-vectors-index/1",
        "spec_version": SPEC_VERSION,
        "spec_hash": SPEC_HASH,
        "meta_schema": "meta-schema.json",
        "schemas": "schemas.json",
        "vector_files": list(v.VECTOR_FILES),
        "files": files,
        "functions": describe_functions([*vector_cases(), *kit_only]),
    }
    (target / "index.json").write_text(
        json.dumps(index, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return index
