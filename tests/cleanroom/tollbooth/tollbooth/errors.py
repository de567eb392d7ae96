"""Typed errors carrying the seed's error codes.

Two families, both named by seed 000:

* :class:`CatalogError` -- seed 000 §1.5/§1.6/§2.3 name this exception
  (``contextweaver.exceptions.CatalogError``) for malformed tool_ids, tool_id
  collisions and cards over the hard token cap.  The seed gives it no code
  vocabulary, so the ``code`` values below are this implementation's own
  (see README "Readings").
* :class:`GatewayError` -- the §3.4 error object
  (``{"error", "message", "path", "details"}``) with the codes of seed 000
  §3.4 plus those added by seed 002 "Error shape".
"""

from __future__ import annotations

from typing import Any

# --- seed 000 §3.4 + seed 002 "Error shape" -------------------------------
PATH_INVALID = "PATH_INVALID"
PATH_NOT_FOUND = "PATH_NOT_FOUND"
ARGS_INVALID = "ARGS_INVALID"
UPSTREAM_ERROR = "UPSTREAM_ERROR"
HYDRATE_FAILED = "HYDRATE_FAILED"
VIEW_FAILED = "VIEW_FAILED"

GATEWAY_ERROR_CODES = (
    PATH_INVALID,
    PATH_NOT_FOUND,
    ARGS_INVALID,
    UPSTREAM_ERROR,
    HYDRATE_FAILED,
    VIEW_FAILED,
)

# --- CatalogError codes (implementation-chosen; the seed names only the class)
TOOL_ID_INVALID = "TOOL_ID_INVALID"  # §1.1 / §1.6 parse/format failure
TOOL_ID_COLLISION = "TOOL_ID_COLLISION"  # §1.5
UPSTREAM_TOOL_INVALID = "UPSTREAM_TOOL_INVALID"  # §1.2-§1.4: no id derivable
CARD_INVALID = "CARD_INVALID"  # §2.1 / §2.2 field rules
CARD_OVER_BUDGET = "CARD_OVER_BUDGET"  # §2.3 single-card hard cap
BROWSE_OVER_BUDGET = "BROWSE_OVER_BUDGET"  # §2.3 response hard cap

CATALOG_ERROR_CODES = (
    TOOL_ID_INVALID,
    TOOL_ID_COLLISION,
    UPSTREAM_TOOL_INVALID,
    CARD_INVALID,
    CARD_OVER_BUDGET,
    BROWSE_OVER_BUDGET,
)


class CatalogError(Exception):
    """Seed 000 §1.5, §1.6, §2.3: raised by id helpers and the card builder."""

    def __init__(self, code: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"CatalogError({self.code!r}, {self.message!r})"


class GatewayError(Exception):
    """Seed 000 §3.4 / seed 002 "Error shape": a typed, serialisable error.

    ``to_dict()`` yields exactly the §3.4 object::

        {"error": code, "message": str, "path": str, "details": {...}}
    """

    def __init__(
        self,
        code: str,
        message: str,
        path: str = "",
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        if code not in GATEWAY_ERROR_CODES:
            raise ValueError(f"unknown gateway error code {code!r}")
        self.code = code
        self.message = message
        self.path = path
        self.details = dict(details or {})

    def to_dict(self) -> dict[str, Any]:
        return {
            "error": self.code,
            "message": self.message,
            "path": self.path,
            "details": self.details,
        }

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"GatewayError({self.code!r}, {self.message!r}, path={self.path!r})"
