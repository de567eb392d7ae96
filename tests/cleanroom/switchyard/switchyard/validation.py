"""JSON Schema validation of tool arguments against the stored upstream schema
(seed 001, "Store full schema": "full JSON schema is stored for validation and
routing")."""

from __future__ import annotations

from typing import Any

import jsonschema
from jsonschema.exceptions import SchemaError


def validation_errors(schema: Any, instance: Any, limit: int = 10) -> list[dict[str, str]]:
    """Return up to `limit` validation errors; [] when valid or the schema is unusable."""
    if not isinstance(schema, dict):
        return []
    try:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        validator = cls(schema)
        errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
    except SchemaError:
        return []  # an upstream with a broken schema is not the caller's fault
    except Exception:  # noqa: BLE001 - e.g. unresolvable $ref: skip validation
        return []
    out = []
    for err in errors[:limit]:
        path = "/" + "/".join(str(p) for p in err.absolute_path)
        out.append({"path": path, "message": err.message})
    return out
