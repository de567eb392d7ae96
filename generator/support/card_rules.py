"""The ChoiceCard validator (§2.1-§2.2): the model's bounds (a pydantic model), then the
rules JSON Schema cannot state, each a small function named after its rule in models.yaml.

A rule returns the problems it finds as "rule: what is wrong" strings; the validator lists
them all, schema problems first."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, Final

from pydantic import BaseModel, ValidationError

from .errors import SurfaceError

LINE_BREAKS: Final = ("\n", "\r", "\u2028", "\u2029")
# Grammar-bound identity fields, and score, are not content that could smuggle a field.
_NOT_SCANNED: Final = frozenset({"id", "namespace", "score"})

Card = Mapping[str, Any]
Accepts = Callable[[object], bool]


def normalise_key(key: str) -> str:
    """How a field name is compared with the banned ones: "input-Schema" is "inputschema"."""
    return key.replace("_", "").replace("-", "").lower()


def _strings(value: Any, out: list[str]) -> list[str]:
    """Every string inside `value` (keys included), depth first."""
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, Mapping):
        for k, v in value.items():
            out.append(str(k))
            _strings(v, out)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _strings(v, out)
    return out


class CardRules:
    """Binds the rules to the surface: the card model, the banned fields and stringified
    patterns, the grammars a card id may match, and the error a broken card raises. Each rule
    is the method of its name (RULES, in the order problems are listed)."""

    RULES: Final = (
        "single_line_description",
        "tags_sorted",
        "internal_ids",
        "namespace_matches_id",
        "no_banned_content",
    )

    def __init__(
        self,
        *,
        model: type[BaseModel],
        banned_fields: Collection[str],
        banned_stringified: Sequence[re.Pattern[str]],
        tool_ids: Accepts,
        internal_ids: Sequence[Accepts],
        error: type[SurfaceError],
    ) -> None:
        self.model = model
        self.permitted = frozenset(model.model_fields)
        self.banned = frozenset(normalise_key(f) for f in banned_fields)
        self.stringified = tuple(banned_stringified)
        # One pass over all of a card's lower-cased text instead of one search per pattern
        # and string (case-insensitive alternations are slow in `re`).
        self._banned_text = re.compile("|".join(f"(?:{p.pattern})" for p in self.stringified))
        # For ASCII text (lower-casing keeps every character in place) the same search runs
        # case-sensitively on the lowered text, ~2x faster: valid when every pattern is
        # case-insensitive, ASCII and written in lower case (a character range spanning
        # letters included), as no_banned_content already assumes.
        self._lowered = (
            tuple(re.compile(p.pattern, p.flags & ~re.IGNORECASE) for p in self.stringified)
            if all(
                p.flags & re.IGNORECASE and p.pattern.isascii() and p.pattern == p.pattern.lower()
                for p in self.stringified
            )
            else None
        )
        self.is_tool_id = tool_ids
        self.internal_id_grammars = tuple(internal_ids)
        self.error = error

    def banned_content_at(self, text: str) -> int | None:
        """Where the first stringified banned field starts in `text` (AM-BANNED-IN-DESCRIPTION),
        or None: card builders cut an upstream description there."""
        # Case-insensitive patterns on the text itself: lower-casing can change string lengths.
        patterns = self.stringified
        if self._lowered is not None and text.isascii():
            patterns, text = self._lowered, text.lower()
        starts = [m.start() for p in patterns if (m := p.search(text)) is not None]
        return min(starts) if starts else None

    def violations(self, card: object) -> list[str]:
        """Every way `card` breaks §2.1-§2.2 (schema bounds first, then the rules)."""
        if not isinstance(card, Mapping):
            return [f"a card is an object, not {type(card).__name__}"]
        problems = self.schema(card)
        for rule in self.RULES:
            problems += getattr(self, rule)(card)
        return problems

    def validate(self, card: object) -> None:
        """Raise the card error listing every violation; return None for a valid card."""
        problems = self.violations(card)
        if problems:
            card_id = card.get("id", "") if isinstance(card, Mapping) else ""
            raise self.error(
                message="invalid ChoiceCard: " + "; ".join(problems),
                path=str(card_id),
                details={"violations": problems},
            )

    # ------------------------------------------------------------ the schema and the rules

    def schema(self, card: Card) -> list[str]:
        problems = []
        if not card.keys() <= self.permitted:
            for key in card:
                if normalise_key(str(key)) in self.banned:
                    problems.append(f"no_banned_content: banned field {key!r}")
        try:
            self.model.model_validate(card)
        except ValidationError as exc:
            for err in exc.errors():
                loc = ".".join(str(p) for p in err["loc"]) or "card"
                if err["type"] == "extra_forbidden" and normalise_key(loc) in self.banned:
                    continue  # already reported as banned
                msg = "is not a permitted field" if err["type"] == "extra_forbidden" else err["msg"]
                problems.append(f"{loc}: {msg}")
        return problems

    @staticmethod
    def single_line_description(card: Card) -> list[str]:
        description = card.get("description")
        if isinstance(description, str) and any(b in description for b in LINE_BREAKS):
            return ["single_line_description: the description holds a line break"]
        return []

    @staticmethod
    def tags_sorted(card: Card) -> list[str]:
        tags = card.get("tags")
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            return []  # the schema reports it
        problems = []
        if tags != sorted(tags):
            problems.append("tags_sorted: tags are not in ascending order")
        if len(set(tags)) != len(tags):
            problems.append("tags_sorted: tags repeat (they are de-duplicated)")
        return problems

    def internal_ids(self, card: Card) -> list[str]:
        card_id, kind = card.get("id"), card.get("kind")
        if not isinstance(card_id, str) or not isinstance(kind, str):
            return []
        if kind == "internal":
            if any(accepts(card_id) for accepts in self.internal_id_grammars):
                return []
            return ["internal_ids: an internal card's id is a path or the cache marker"]
        if not self.is_tool_id(card_id):
            return [f"internal_ids: a {kind} card's id must be a tool_id"]
        return []

    def namespace_matches_id(self, card: Card) -> list[str]:
        card_id, kind = card.get("id"), card.get("kind")
        if not isinstance(card_id, str) or not isinstance(kind, str) or kind == "internal":
            return []
        if self.is_tool_id(card_id) and card.get("namespace") != card_id.split(":", 1)[0]:
            return ["namespace_matches_id: namespace differs from the id's namespace"]
        return []

    def no_banned_content(self, card: Card) -> list[str]:
        texts: list[str] = []
        for key, value in card.items():
            if key not in _NOT_SCANNED:
                _strings(value, texts)
        found = self._banned_text.search("\x00".join(texts).lower())
        if found:
            return [f"no_banned_content: {found.group(0)!r} stringifies a banned field"]
        return []
