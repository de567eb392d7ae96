"""How the runtime uses a state backend, and what a caller gets when the store is unreachable.

An outage of the shared store never raises across the MCP boundary, and never passes
silently (AM-SHARED-STATE):
- a cache-stable browse is answered as the first browse of a session (every card new, no
  marker) and nothing is recorded;
- a hydration (explicit or tool_execute's implicit one) is answered, and not recorded;
- tool_execute's result keeps its summary and facts, and its artifacts are listed in
  provenance.issues as not kept (the upstream call is not repeated);
- tool_view is VIEW_FAILED naming the outage (the backend's own answer).
Each is logged as a warning.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, Final, TypeVar

from gatespec.seen_cards import SeenCards
from gatespec.state.base import SeenCardBackend, StateUnavailable

__all__ = ["record_seen", "stable_browse", "without_artifacts"]

log = logging.getLogger(__name__)
T = TypeVar("T")

# Arrangements tried when other replicas keep freezing the same new cards first (each retry
# arranges over what they stored, so two rounds settle it; the third is a margin).
_ATTEMPTS: Final = 3


async def stable_browse(
    seen_cards: SeenCardBackend,
    scope: str,
    ids: Sequence[str],
    arrange: Callable[[SeenCards], T],
) -> T:
    """`arrange(session)` over the scope's stored session (the entries of `ids`, the cards
    the browse shows), and what that changed stored."""
    result: T | None = None
    for _ in range(_ATTEMPTS):
        try:
            session = await seen_cards.load(scope, ids)
        except StateUnavailable as exc:
            log.warning("cache-stable state unavailable, browsing as a new session: %s", exc)
            return arrange(SeenCards())
        result = arrange(session)
        try:
            if await seen_cards.save(scope, session):
                return result
        except StateUnavailable as exc:
            log.warning("cache-stable state unavailable, browse not recorded: %s", exc)
            return result
    assert result is not None
    return result


async def record_seen(seen_cards: SeenCardBackend, scope: str, tool_id: str) -> None:
    try:
        await seen_cards.record_seen(scope, tool_id)
    except StateUnavailable as exc:
        log.warning("cache-stable state unavailable, %s not recorded as seen: %s", tool_id, exc)


def without_artifacts(envelope: dict[str, Any], why: str) -> dict[str, Any]:
    """`envelope` with its artifacts withdrawn (they could not be stored), saying so."""
    if not envelope["artifacts"]:
        return envelope
    log.warning("artifacts of %s not kept: %s", envelope["provenance"].get("tool_id"), why)
    provenance = dict(envelope["provenance"])
    issues = list(provenance.get("issues", []))
    for art in envelope["artifacts"]:
        issues.append(
            {
                "problem": f"{art['label']}: {art['size_bytes']} bytes not kept: "
                "the shared state store is unreachable; call the tool again to view them"
            }
        )
    provenance["issues"] = issues
    return {**envelope, "artifacts": [], "provenance": provenance}
