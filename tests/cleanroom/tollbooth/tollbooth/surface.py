"""The seed's pure functions, importable without starting anything.

Every name here is defined in a small module and re-exported; see each
function's docstring for the seed section it implements, and README.md for
the table (function -> signature -> seed section -> error codes).
"""

from .cards import (
    BANNED_FIELDS,
    BROWSE_PREAMBLE_TOKENS,
    CACHE_BREAKPOINT_ID,
    CARD_HARD_CAP_TOKENS,
    CARD_TARGET_TOKENS,
    KINDS,
    PERMITTED_FIELDS,
    ChoiceCard,
    browse_hard_cap,
    build_card,
    cache_stable_order,
    card_tokens,
    check_browse_budget,
    make_breakpoint_card,
    normalize_tags,
    order_cards,
    render_browse,
    render_card,
    single_line,
    truncate_description,
    validate_card,
    validate_card_dict,
    validate_card_fields,
)
from .catalog import Catalog, CatalogEntry, make_entry, schema_problem, tool_card
from .errors import (
    ARGS_INVALID,
    HYDRATE_FAILED,
    PATH_INVALID,
    PATH_NOT_FOUND,
    UPSTREAM_ERROR,
    VIEW_FAILED,
    CatalogError,
    GatewayError,
)
from .paths import format_path, parse_path, validate_path
from .results import ArtifactRef, ResultEnvelope, firewall, format_fact, mcp_result_to_envelope, summarize
from .tokens import count_tokens, encode, get_encoding
from .toolid import (
    ToolIdParts,
    canonical_shape,
    check_collisions,
    declared_version,
    format_tool_id,
    hash8,
    infer_namespace,
    make_tool_id,
    parse_tool_id,
    split_upstream_name,
)
from .views import ArtifactStore, view_artifact

__all__ = [name for name in dir() if not name.startswith("_")]
