"""tool_browse: the §3.2 path tree, a BM25 query ranking, and §5 cache-stable ordering."""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

from .cards import Card, make_card, marker_card, rank_order
from .catalog import Catalog, Entry
from .errors import GatewayError

SEGMENT_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}|\*")
ROOT_SEGMENT_RE = re.compile(r"[a-z][a-z0-9_-]{0,63}|\*")
TOP_K = 10
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def parse_path(path: str) -> list[str]:
    """Split a §3.2 path into segments, or raise PATH_INVALID naming the violation."""
    if not path.startswith("/"):
        raise GatewayError("PATH_INVALID", "a path starts with '/'", path)
    if path == "/":
        return []
    if path.endswith("/"):
        raise GatewayError("PATH_INVALID", "a trailing '/' is not allowed", path)
    segments = path[1:].split("/")
    for depth, segment in enumerate(segments):
        if not segment:
            raise GatewayError("PATH_INVALID", "empty segment ('//')", path, {"segment": depth})
        pattern = ROOT_SEGMENT_RE if depth == 0 else SEGMENT_RE
        if not pattern.fullmatch(segment):
            rule = (
                "a namespace ([a-z][a-z0-9_-]{0,63})" if depth == 0 else "[a-z0-9][a-z0-9_-]{0,63}"
            )
            raise GatewayError(
                "PATH_INVALID",
                f"segment {segment!r} must be {rule} or '*'",
                path,
                {"segment": depth},
            )
    return segments


def _namespace_card(namespace: str, leaves: dict[str, Entry]) -> Card:
    names = ", ".join(e.card.name for e in leaves.values())
    return make_card(
        f"{len(leaves)} tool(s): {names}",
        id=f"/{namespace}",
        name=namespace,
        kind="internal",
        namespace=namespace,
        has_schema=False,
    )


def browse_path(catalog: Catalog, path: str) -> list[Card]:
    """Root lists one internal card per namespace; /ns lists its tools; /ns/leaf one tool.

    A trailing '*' means "this node's children", like leaving it out; '*' anywhere else
    addresses no node, so it is PATH_NOT_FOUND (well-formed but absent).
    """
    segments = parse_path(path)
    if segments and segments[-1] == "*":
        segments = segments[:-1]
    if "*" in segments:
        raise GatewayError(
            "PATH_NOT_FOUND", "'*' only means 'all children' as the last segment", path
        )
    if not segments:
        return [_namespace_card(ns, leaves) for ns, leaves in catalog.namespaces.items()]
    leaves = catalog.namespaces.get(segments[0])
    if leaves is None:
        raise GatewayError("PATH_NOT_FOUND", f"no namespace {segments[0]!r}", path)
    if len(segments) == 1:
        return [e.card for e in leaves.values()]
    entry = leaves.get(segments[1])
    if entry is None or len(segments) > 2:
        missing = "/" + "/".join(segments[:2] if entry is None else segments)
        raise GatewayError("PATH_NOT_FOUND", f"nothing at {missing}", path)
    return [entry.card]


def _terms(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def browse_query(catalog: Catalog, query: str) -> list[Card]:
    """Okapi BM25 over name, namespace, tags and description; top-k with a positive score."""
    entries = list(catalog.entries.values())
    docs = [
        Counter(_terms(" ".join([e.upstream_name, e.namespace, *e.card.tags, e.description])))
        for e in entries
    ]
    if not docs:
        return []
    avg_len = sum(sum(d.values()) for d in docs) / len(docs) or 1.0
    wanted = set(_terms(query))
    idf = {}
    for term in wanted:
        df = sum(1 for d in docs if term in d)
        idf[term] = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
    scored = []
    for entry, doc in zip(entries, docs, strict=True):
        length = sum(doc.values())
        score = 0.0
        for term in wanted:
            tf = doc.get(term, 0)
            if tf:
                score += idf[term] * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / avg_len))
        if score > 0:
            card = Card(**{**entry.card.to_json(), "score": round(score, 4)})
            scored.append(card)
    return rank_order(scored)[:TOP_K]


class SessionOrder:
    """§5: seen cards first (frozen, id-ascending), marker, then new cards (id-ascending)."""

    def __init__(self) -> None:
        self.frozen: dict[str, Card] = {}

    def remember(self, card: Card) -> None:
        self.frozen.setdefault(card.id, card)

    def order(self, cards: list[Card]) -> list[Card]:
        seen = sorted((self.frozen[c.id] for c in cards if c.id in self.frozen), key=lambda c: c.id)
        new = sorted((c for c in cards if c.id not in self.frozen), key=lambda c: c.id)
        for card in new:
            self.remember(card)
        return [*seen, marker_card(), *new] if seen and new else [*seen, *new]


def browse_args(arguments: dict[str, Any]) -> tuple[str, str]:
    """Exactly one of query or path (§3.1); a JSON null counts as not given."""
    extra = sorted(set(arguments) - {"query", "path"})
    if extra:
        raise GatewayError("ARGS_INVALID", f"unknown argument(s) {extra}", "", {"unknown": extra})
    given = {k: v for k, v in arguments.items() if v is not None}
    if len(given) != 1:
        raise GatewayError("ARGS_INVALID", "pass exactly one of 'query' or 'path'", "")
    (kind, value), *_ = given.items()
    if not isinstance(value, str):
        raise GatewayError("ARGS_INVALID", f"'{kind}' must be a string", "")
    if kind == "query" and not value.strip():
        raise GatewayError("ARGS_INVALID", "'query' is blank", "")
    return kind, value
