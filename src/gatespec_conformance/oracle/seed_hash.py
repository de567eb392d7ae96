"""hash8 as seed 000 §1.3 prints it, copied without change (the seed is the oracle)."""

from __future__ import annotations

import hashlib
import json

__all__ = ["seed_hash8"]


def _canonical_shape(input_schema: dict[str, object]) -> str:
    props = sorted((input_schema.get("properties") or {}).keys())  # type: ignore[attr-defined]
    required = sorted(input_schema.get("required") or [])  # type: ignore[call-overload]
    return json.dumps(
        {"properties": props, "required": required},
        sort_keys=True,
        separators=(",", ":"),
    )


def _hash8(upstream_name: str, input_schema: dict[str, object]) -> str:
    canonical = upstream_name + "\n" + _canonical_shape(input_schema)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:8]


def seed_hash8(upstream_name: str, input_schema: dict[str, object]) -> str:
    """§1.3's `_hash8`: the first 8 hex digits of sha256(name + "\\n" + canonical shape)."""
    return _hash8(upstream_name, input_schema)
