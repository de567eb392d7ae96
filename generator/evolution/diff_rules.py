"""How a change to the spec is classified, for the two parties the spec binds.

Clients of a gateway send meta-tool arguments, ids, paths and selectors, and read results,
cards, errors and tools/list names. Implementations accept what clients send and produce what
clients read. So a change to what flows in (an input) is judged the other way round from a
change to what flows out (an output): narrowing an input refuses values clients send (breaking
for clients); narrowing an output forbids values implementations produce (breaking for
implementations). RULES is the whole classification; docs/spec-evolution.md prints it.

A change of several kinds (a grammar used as input and as output, a rename that is a removal
plus an addition) is breaking for a party when any of its kinds is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .snapshot import Snapshot

Impact = Literal["breaking", "compatible"]
B: Impact = "breaking"
C: Impact = "compatible"


@dataclass(frozen=True)
class Rule:
    clients: Impact
    implementations: Impact
    why: str


_OUTPUT_RULES: dict[str, Rule] = {
    "output.narrowed": Rule(C, B, "implementations may produce values no longer allowed"),
    "output.widened": Rule(B, C, "clients may read values they never saw before"),
    "output.changed": Rule(B, B, "narrowed and widened at once"),
    "output.field_added": Rule(
        C, C, "an optional field: clients ignore fields they do not know; no one must produce it"
    ),
    "output.required_field_added": Rule(C, B, "implementations must produce it"),
    "output.field_removed": Rule(
        B,
        B,
        "clients that read it find nothing; the closed schema refuses implementations "
        "that still produce it",
    ),
    "output.field_now_required": Rule(C, B, "implementations must always produce it"),
    "output.field_now_optional": Rule(B, C, "clients can no longer count on it"),
    "output.default_changed": Rule(B, B, "an absent field means something else"),
}

# The classification: kind of change -> (clients, implementations, why).
RULES: dict[str, Rule] = {
    # ---- inputs: what clients send (arguments, ids, paths, selectors, aggregate names)
    "input.narrowed": Rule(B, C, "values clients send may now be refused"),
    "input.widened": Rule(C, B, "implementations must accept values they could refuse"),
    "input.changed": Rule(B, B, "narrowed and widened at once"),
    "input.field_added": Rule(C, B, "an optional argument: implementations must accept it"),
    "input.required_field_added": Rule(
        B, B, "clients that do not send it are refused; implementations must take it"
    ),
    "input.field_removed": Rule(B, C, "clients that send it are refused"),
    "input.field_now_required": Rule(B, C, "clients that omit it are refused"),
    "input.field_now_optional": Rule(C, B, "implementations must cope with its absence"),
    "input.default_changed": Rule(B, B, "an omitted argument means something else"),
    # ---- outputs: what clients read (results, cards, error payloads, tools/list names)
    **_OUTPUT_RULES,
    "output.model_replaced": Rule(B, B, "a meta-tool's result has another shape"),
    "output.model_specified": Rule(C, B, "a result no model bound must now match one"),
    "output.model_unspecified": Rule(B, C, "clients lose the shape they read"),
    # ---- models no meta-tool returns (the conformance kit's function layer): outputs that
    # implementations produce and no client reads
    **{
        "internal" + kind.removeprefix("output"): Rule(
            C, rule.implementations, f"as `{kind}` for implementations; no client reads it"
        )
        for kind, rule in _OUTPUT_RULES.items()
    },
    # ---- error codes
    "error.code_added": Rule(C, C, "a new code no meta-tool returns yet"),
    "error.code_removed": Rule(C, B, "implementations that emit it are wrong"),
    "error.returned_added": Rule(
        B,
        C,
        "a meta-tool may return a code strict clients do not know (strict clients: those "
        "that refuse an unknown code)",
    ),
    "error.returned_removed": Rule(
        C, B, "implementations that return it from this meta-tool are wrong"
    ),
    "error.grammar_code_changed": Rule(B, B, "malformed input is answered with another code"),
    # ---- meta-tools and profiles
    "meta_tool.added": Rule(C, C, "defined; implementations serve it where a profile lists it"),
    "meta_tool.removed": Rule(B, C, "clients that call it fail"),
    "meta_tool.description_changed": Rule(C, C, "wording the model reads; no contract changes"),
    "profile.added": Rule(C, C, "a new surface; implementations choose the profiles they serve"),
    "profile.removed": Rule(B, C, "clients of the profile lose it"),
    "profile.meta_tool_added": Rule(C, B, "implementations of the profile must serve it"),
    "profile.meta_tool_removed": Rule(B, C, "clients of the profile can no longer call it"),
    # ---- rules implementations follow and clients observe
    "behaviour.changed": Rule(
        B, B, "rendering, truncation, encodings, ordering, tree shape or another rule changed"
    ),
    # ---- records that change no contract by themselves
    "grammar.added": Rule(C, C, "classified where a schema uses it"),
    "grammar.removed": Rule(C, C, "classified where a schema used it"),
    "grammar.rewritten": Rule(C, C, "another syntax for the same language"),
    "model.added": Rule(C, C, "classified where a meta-tool returns it"),
    "model.removed": Rule(C, C, "classified where a meta-tool returned it"),
    "amendment.added": Rule(C, C, "a recorded decision; what it changes is classified itself"),
    "amendment.changed": Rule(C, C, "a recorded decision reworded or extended"),
    "amendment.removed": Rule(C, C, "a recorded decision withdrawn"),
    "requirement.added": Rule(C, B, "a new MUST or MUST NOT implementations must meet"),
    "requirement.removed": Rule(B, C, "clients lose a MUST or MUST NOT they could count on"),
    "requirement.strengthened": Rule(C, B, "a statement became a MUST or MUST NOT"),
    "requirement.weakened": Rule(B, C, "a MUST or MUST NOT became advisory"),
    "requirement.advisory": Rule(C, C, "a SHOULD or MAY added, removed or re-levelled"),
    "requirement.reworded": Rule(C, C, "the paraphrase of a seed statement changed"),
    "vector.answer_changed": Rule(B, B, "an expected answer changed"),
    "vector.added": Rule(C, C, "new expected answers for behaviour the spec states"),
    "vector.removed": Rule(C, C, "expected answers withdrawn"),
    "editorial": Rule(C, C, "titles, glossary, seeds"),
    "bookkeeping": Rule(C, C, "seed facts, extensions, checks: no surface change"),
}

MUST_LEVELS = frozenset({"MUST", "MUST NOT"})
# Grammar uses no schema states: tools/list names (AM-WIRE-NAME), aggregate names (seed 004).
IMPLICIT_USES: dict[str, tuple[tuple[str, str], ...]] = {
    "wire_name": (("output", "tools/list names of the transparent profile"),),
    "aggregate_name": (
        ("input", "aggregate tools/call names"),
        ("output", "aggregate tools/list names"),
    ),
}
# Rule values that bound what clients read, besides those a schema names through x-bound.
RULE_ROLES: dict[str, str] = {
    "tokens.card.target": "output.max",
    "tokens.card.hard_cap": "output.max",
    "tokens.browse_response.preamble": "output.max",
    "tokens.args_signature": "output.max",
    "firewall.view_max_chars": "output.max",
}


@dataclass(frozen=True)
class Change:
    where: str
    kinds: tuple[str, ...]
    summary: str
    method: str | None = None  # how a grammar comparison was decided (languages.Verdict)

    @property
    def clients(self) -> Impact:
        return B if any(RULES[k].clients == B for k in self.kinds) else C

    @property
    def implementations(self) -> Impact:
        return B if any(RULES[k].implementations == B for k in self.kinds) else C

    def as_json(self) -> dict[str, Any]:
        return {
            "where": self.where,
            "kinds": list(self.kinds),
            "clients": self.clients,
            "implementations": self.implementations,
            "summary": self.summary,
            "method": self.method,
        }


class Recorder:
    """The two versions compared and the changes found so far, in spec order."""

    def __init__(self, old: Snapshot, new: Snapshot) -> None:
        self.old, self.new = old, new
        self.changes: list[Change] = []

    def add(
        self, where: str, kinds: tuple[str, ...] | str, summary: str, method: str | None = None
    ) -> None:
        kinds = (kinds,) if isinstance(kinds, str) else kinds
        self.changes.append(Change(where, tuple(dict.fromkeys(kinds)), summary, method))

    def keyed(
        self,
        prefix: str,
        old: Mapping[str, Any],
        new: Mapping[str, Any],
        kinds: tuple[str, str | Callable[[str], str]],
        what: str,
        same: Callable[[Any, Any], bool],
        basis: str,
    ) -> list[str]:
        """Entries removed from and added to a named collection, as (removed kind, added kind
        or a function of the added name). An entry removed and one added that `same` pairs are
        one change: a rename, that is a removal plus an addition. Returns the names in both."""
        removed_kind, added = kinds
        added_kind = added if callable(added) else (lambda _name: str(added))
        gone = [k for k in old if k not in new]
        came = [k for k in new if k not in old]
        renamed: dict[str, str] = {}
        for r in gone:
            match = next(
                (a for a in came if a not in renamed.values() and same(old[r], new[a])), None
            )
            if match is not None:
                renamed[r] = match
        for a in came:
            if a not in renamed.values():
                required = " (required)" if ".required_" in added_kind(a) else ""
                self.add(f"{prefix}{a}", added_kind(a), f"{what} added{required}")
        for r in gone:
            if r in renamed:
                a = renamed[r]
                self.add(
                    f"{prefix}{r}",
                    (removed_kind, added_kind(a)),
                    f"renamed {a} (likely: a removal plus an addition, {basis})",
                )
            else:
                self.add(f"{prefix}{r}", removed_kind, f"{what} removed")
        return [k for k in new if k in old]


def rules_markdown() -> str:
    """The classification table, as docs/spec-evolution.md shows it."""
    rows = ["| kind of change | clients | implementations | why |", "|---|---|---|---|"]
    rows += [f"| `{k}` | {r.clients} | {r.implementations} | {r.why} |" for k, r in RULES.items()]
    return "\n".join(rows) + "\n"
