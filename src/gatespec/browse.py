"""tool_browse (§3): ranked cards for a query, or the children of a node of the catalog tree.

The tree, built once per catalog snapshot, has a node for every valid path it lists:

    /                     one internal card per namespace (id "/ns")
    /ns                   the namespace's tool cards, or, past budgets.CLUSTER_THRESHOLD
                          tools, one internal card per cluster (id "/ns/cluster")
    /ns/cluster           the cluster's tool cards
    /ns/leaf, /ns/cluster/leaf
                          one tool: its single card (leaf = a path-segment slug of its name)

(spec/browse.yaml `tree`, AM-BROWSE-TREE.)
"*" as the last segment means the same node (parse_path drops it). Malformed paths raise
PATH_INVALID (parse_path); well-formed paths of no node raise PATH_NOT_FOUND naming the nearest
node above them.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from gatespec.cards import (
    Card,
    browse_text,
    build_cards,
    internal_card,
    order_cards,
    restrict_cards,
    with_score,
)
from gatespec.catalog import Catalog, Item
from gatespec.ranking import Document, Ranker
from gatespec.ranking.text import stem
from gatespec.seen_cards import SeenCards
from gatespec_surface.budgets import (
    BROWSE_DEFAULT_TOP_K,
    BROWSE_MAX_TOP_K,
    CLUSTER_THRESHOLD,
    LEAF_SLUG_DIGEST_HEX,
    LEAF_SLUG_FALLBACK,
    LEAF_SLUG_KEEP,
    LEAF_SLUG_REPLACEMENT,
    LEAF_SLUG_STRIP_LEADING,
    OTHER_CLUSTER,
)
from gatespec_surface.errors import ErrorCode, GatewayError
from gatespec_surface.grammars import PATH_SEGMENT_MAX_LENGTH, is_path_segment
from gatespec_surface.parsers import parse_path
from gatespec_surface.render import render_preamble
from gatespec_surface.schemas import META_TOOL_INPUT_SCHEMAS

__all__ = ["OTHER_CLUSTER", "BrowseResponse", "BrowseTree", "Browser", "build_ranker", "leaf_slug"]

_BROWSE_ARGS: Final = META_TOOL_INPUT_SCHEMAS["tool_browse"]["properties"]
ROOT_PATH: Final = "/"  # the tree's root: one card per namespace
_QUERY_MIN_CHARS: Final[int] = _BROWSE_ARGS["query"]["minLength"]
_SEGMENT_MAX: Final[int] = PATH_SEGMENT_MAX_LENGTH
_SLUG_BAD: Final = re.compile(f"[^{LEAF_SLUG_KEEP}]")
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


@dataclass(frozen=True)
class BrowseResponse:
    """One tool_browse answer: the ordered cards (JSON form), the exact text the client reads
    (preamble + one line per card; what the budget bounds) and the BrowseResult structure."""

    cards: list[Card]
    text: str
    structured: dict[str, Any] = field(repr=False)


@dataclass(frozen=True)
class Selection:
    """What a browse found, before cache-stable arrangement and rendering."""

    cards: list[Card]
    preamble: str
    structured: dict[str, Any]  # the BrowseResult fields besides the cards


# ---------------------------------------------------------------------- the tree


def leaf_slug(name: str) -> str:
    """A path segment for an upstream tool name: lower case, other characters become "-"."""
    slug = _SLUG_BAD.sub(LEAF_SLUG_REPLACEMENT, name.lower()).lstrip(LEAF_SLUG_STRIP_LEADING)
    return slug[:_SEGMENT_MAX] or LEAF_SLUG_FALLBACK


def _words(name: str) -> list[str]:
    """Lower-case words of a tool name: snake, kebab, dotted and camel case all split."""
    return [w.lower() for w in _WORDS.findall(name)]


def _count(n: int) -> str:
    return f"{n} tool" if n == 1 else f"{n} tools"


class _Node:
    """A node's listing: its children in §2.5 order, or a leaf's single card. Tool cards are
    looked up (and so fitted, gatespec.cards.LazyCards) when the node is first listed."""

    __slots__ = ("_cards", "_ids", "_source")

    def __init__(
        self,
        cards: Sequence[Card] | None = None,
        *,
        ids: Sequence[str] = (),
        source: Mapping[str, Card] | None = None,
    ) -> None:
        self._cards = None if cards is None else tuple(order_cards(cards))
        self._ids, self._source = tuple(ids), source

    @property
    def cards(self) -> tuple[Card, ...]:
        if self._cards is None:
            assert self._source is not None
            # Idempotent: two threads listing it first build the same tuple.
            self._cards = tuple(order_cards(self._source[i] for i in self._ids))
        return self._cards


def _clusters(items: Sequence[Item]) -> list[tuple[str, list[Item]]]:
    """Group a large namespace by shared name words, most discriminative first.

    Greedy: take the word (by stem, so "issue"/"issues" agree) that the most still-unassigned
    tools share, preferring words that mostly do not lead a name (objects such as "issue",
    "file" over verbs such as "get", "list"); a word must group at least two tools and must
    not take all that remain. Tools left over go to OTHER_CLUSTER. Deterministic: ties go to
    the alphabetically first stem.
    """
    words = {item.id: _words(item.name) for item in items}
    stem_of: dict[str, str] = {}  # names share few distinct words: stem each once
    stems = {
        i: [stem_of[w] if w in stem_of else stem_of.setdefault(w, stem(w)) for w in ws]
        for i, ws in words.items()
    }
    distinct = {i: set(s) for i, s in stems.items()}
    leads: Counter[str] = Counter()
    occurs: Counter[str] = Counter()
    holders: dict[str, list[str]] = {}  # stem -> ids of the tools whose names have it
    for item in items:
        for s in dict.fromkeys(stems[item.id]):
            occurs[s] += 1
            leads[s] += stems[item.id][0] == s
            holders.setdefault(s, []).append(item.id)
    unassigned = {item.id: item for item in items}
    # How many still-unassigned tools have each stem: kept up to date as tools are taken.
    counts: Counter[str] = Counter(occurs)
    chosen: list[tuple[str, list[Item]]] = []
    used: set[str] = set()
    while len(chosen) < CLUSTER_THRESHOLD - 1 and unassigned:  # room left for OTHER_CLUSTER
        candidates = [
            (2 * leads[s] > occurs[s], -n, s)
            for s, n in counts.items()
            if 2 <= n < len(unassigned) and s not in used
        ]
        if not candidates:
            break
        _, _, best = min(candidates)
        used.add(best)
        taken = sorted(i for i in holders[best] if i in unassigned)
        members = [unassigned.pop(i) for i in taken]
        for i in taken:
            counts.subtract(distinct[i])
        surfaces = Counter(
            w for m in members for w, s in zip(words[m.id], stems[m.id], strict=True) if s == best
        )
        # the commonest spelling names the cluster ("issue" for issue/issues)
        segment = min(surfaces, key=lambda w: (-surfaces[w], len(w), w))[:_SEGMENT_MAX]
        if segment == OTHER_CLUSTER or any(segment == c for c, _ in chosen):
            unassigned.update((m.id, m) for m in members)  # put back; the word stays used
            for i in taken:
                counts.update(distinct[i])
            continue
        chosen.append((segment, members))
    if unassigned:
        chosen.append((OTHER_CLUSTER, sorted(unassigned.values(), key=lambda m: m.id)))
    return sorted(chosen)


class BrowseTree:
    """Every node of the path tree, with its listing precomputed."""

    def __init__(self, catalog: Catalog, cards: Mapping[str, Card]) -> None:
        self._nodes: dict[tuple[str, ...], _Node] = {}
        root: list[Card] = []
        for ns in catalog.namespaces():
            items = catalog.by_namespace(ns)
            groups = _clusters(items) if len(items) > CLUSTER_THRESHOLD else []
            if len(groups) > 1:
                names = ", ".join(seg for seg, _ in groups)
                summary = f"{_count(len(items))} in {len(groups)} groups: {names}"
                listing = []
                for seg, members in groups:
                    listing.append(internal_card(f"/{ns}/{seg}", seg, ns, self._summary(members)))
                    self._add_leaves((ns, seg), members, cards)
                self._nodes[(ns,)] = _Node(listing)
            else:  # small, or no shared words to group by: list the tools themselves
                summary = self._summary(items)
                self._add_leaves((ns,), items, cards)
            root.append(internal_card(f"/{ns}", ns, ns, summary))
        self._nodes[()] = _Node(root)

    @staticmethod
    def _summary(items: Sequence[Item]) -> str:
        return f"{_count(len(items))}: " + ", ".join(sorted(item.name for item in items))

    def _add_leaves(
        self, parent: tuple[str, ...], items: Sequence[Item], cards: Mapping[str, Card]
    ) -> None:
        taken: set[str] = set()
        for item in sorted(items, key=lambda i: i.id):
            slug = leaf_slug(item.name)
            if slug in taken:  # a later id whose name slugs alike gets a digest suffix
                digest = hashlib.sha256(item.id.encode("utf-8")).hexdigest()
                n = LEAF_SLUG_DIGEST_HEX
                while slug in taken:
                    slug = f"{leaf_slug(item.name)[: _SEGMENT_MAX - n - 1]}-{digest[:n]}"
                    n += 1
            assert is_path_segment(slug), slug
            taken.add(slug)
            self._nodes[(*parent, slug)] = _Node(ids=(item.id,), source=cards)
        self._nodes[parent] = _Node(ids=[i.id for i in items], source=cards)

    def listing(self, path: object) -> tuple[Card, ...]:
        """The cards at `path` (PATH_INVALID / PATH_NOT_FOUND as the module says)."""
        parts = parse_path(path)
        node = self._nodes.get(parts.segments)
        if node is not None:
            return node.cards
        depth = len(parts.segments)
        while depth and parts.segments[:depth] not in self._nodes:
            depth -= 1
        nearest = "/" + "/".join(parts.segments[:depth])
        raise GatewayError(
            ErrorCode.PATH_NOT_FOUND,
            f"path {path!r} does not exist; the nearest existing node is {nearest!r}",
            str(path),
            {"nearest": nearest},
        )


# ---------------------------------------------------------------------- browsing


def build_ranker(catalog: Catalog, *, semantic: bool = True, background: bool = True) -> Ranker:
    """The ranker over every catalog item (what a query browse searches)."""
    return Ranker(
        [
            Document.of_tool(
                item.id, item.name, item.description, item.namespace, item.input_schema
            )
            for item in catalog.items()
        ],
        semantic=semantic,
        background=background,
    )


class Browser:
    """tool_browse over one catalog snapshot: the cards, the ranker and the tree are built once
    and shared by every browse. Each is built when first needed: a card when a browse shows it
    (gatespec.cards.LazyCards), the lexical index on the first query, the tree on the first
    path browse (or the first query nothing matches).

    The ranker (gatespec.ranking.Ranker) is hybrid when the embedding model is available,
    from the first query on (the model loads then, on a worker thread; queries are ranked
    lexically until it is ready). `semantic=False` makes it lexical, and `background=False`
    loads the model and encodes the catalog before returning (`gatespec rank`)."""

    def __init__(
        self,
        catalog: Catalog,
        cards: Mapping[str, Card] | None = None,
        *,
        semantic: bool = True,
        background: bool = True,
        ranker: Ranker | None = None,
    ) -> None:
        self.catalog = catalog
        self.cards = cards if cards is not None else build_cards(catalog)
        self.ranker = (
            ranker
            if ranker is not None
            else build_ranker(catalog, semantic=semantic, background=background)
        )
        self._tree: BrowseTree | None = None
        self._tree_lock = threading.Lock()

    @property
    def tree_built(self) -> bool:
        return self._tree is not None

    @property
    def tree(self) -> BrowseTree:
        """The path tree, built on first use (once, whichever thread asks first)."""
        if self._tree is None:
            with self._tree_lock:
                if self._tree is None:
                    self._tree = BrowseTree(self.catalog, self.cards)
        return self._tree

    def restricted_to(self, catalog: Catalog) -> Browser:
        """The browser of `catalog`, a subset of this one's: the same cards and embeddings,
        its own tree and lexical statistics (what a gateway fronting only those tools would
        build, AM-ACCESS-NO-LEAK)."""
        ids = {item.id for item in catalog.items()}
        return Browser(catalog, restrict_cards(self.cards, ids), ranker=self.ranker.restricted(ids))

    def browse(
        self,
        query: object = None,
        path: object = None,
        *,
        seen: SeenCards | None = None,
        top_k: int = BROWSE_DEFAULT_TOP_K,
    ) -> BrowseResponse:
        """Cards for a query (ranked) or a path (a tree node). With a session's seen cards, the
        cards are arranged cache-stably (§5) before the text is rendered."""
        return self.render(self.select(query, path, top_k=top_k), seen)

    def select(
        self, query: object = None, path: object = None, *, top_k: int = BROWSE_DEFAULT_TOP_K
    ) -> Selection:
        """The cards a browse shows, before any cache-stable arrangement (a shared session
        store reads the state of these ids only)."""
        if (query is None) == (path is None):
            raise GatewayError(
                ErrorCode.ARGS_INVALID,
                "pass exactly one of query or path"
                + (" (got both)" if query is not None else " (got neither)"),
            )
        if path is not None:
            cards = [with_score(c, None) for c in self.tree.listing(path)]
            return Selection(cards, render_preamble(len(cards), path=str(path)), {"path": path})
        cards, total = self._ranked(query, top_k)
        if not cards:
            # Nothing matches: never an empty list while the catalog has tools. The answer is
            # the root of the tree (one card per namespace), worded and marked as the path
            # browse it is, so the model goes on by path; for an empty catalog too, whose
            # empty answer then points at path browsing as well.
            root = [with_score(c, None) for c in self.tree.listing(ROOT_PATH)]
            return Selection(root, render_preamble(len(root), path=ROOT_PATH), {"path": ROOT_PATH})
        return Selection(cards, render_preamble(len(cards), total=total), {})

    def render(self, selection: Selection, seen: SeenCards | None = None) -> BrowseResponse:
        """The response for `selection`, arranged by `seen` when there is one."""
        cards = selection.cards
        if seen is not None:
            cards = seen.arrange(cards)
        structured = {"cards": cards, **selection.structured}
        return BrowseResponse(cards, browse_text(selection.preamble, cards), structured)

    def _ranked(self, query: object, top_k: int) -> tuple[list[Card], int]:
        # A long query is cut by the ranker (browse.query_max_chars), not refused.
        if not isinstance(query, str) or len(query) < _QUERY_MIN_CHARS:
            raise GatewayError(
                ErrorCode.ARGS_INVALID,
                f"query must be a string of at least {_QUERY_MIN_CHARS} character(s)",
                details={"query": repr(query)[:80]},
            )
        if isinstance(top_k, bool) or not isinstance(top_k, int):
            raise GatewayError(ErrorCode.ARGS_INVALID, f"top_k must be an integer, not {top_k!r}")
        if not 1 <= top_k <= BROWSE_MAX_TOP_K:
            raise GatewayError(
                ErrorCode.ARGS_INVALID, f"top_k must be between 1 and {BROWSE_MAX_TOP_K}"
            )
        hits, total = self.ranker.search_counted(query, k=top_k)  # total: the preamble's N
        cards = [with_score(self.cards[tool_id], score) for tool_id, score in hits]
        return order_cards(cards), total
