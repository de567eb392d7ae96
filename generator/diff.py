"""`generator diff OLD NEW`: every change between two versions of the spec, classified for the
two parties the spec binds.

Clients of a gateway send meta-tool arguments, ids, paths and selectors, and read results,
cards, errors and tools/list names. Implementations accept what clients send and produce what
clients read. So a change to what flows in (an input) is judged the other way round from a
change to what flows out (an output): narrowing an input refuses values clients send (breaking
for clients); narrowing an output forbids values implementations produce (breaking for
implementations). RULES below is the whole classification; docs/spec-evolution.md prints it.

A change of several kinds (a grammar used as input and as output, a rename that is a removal
plus an addition) is breaking for a party when any of its kinds is.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from .ir import _grammar_refs as grammar_refs
from .languages import Verdict, compare, language
from .snapshot import RULE_FILES, Snapshot
from .views import ERROR_PAYLOAD

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
MAX_KEYWORDS = ("maxLength", "maximum", "exclusiveMaximum", "maxItems", "maxProperties")
MIN_KEYWORDS = ("minLength", "minimum", "exclusiveMinimum", "minItems", "minProperties")
EDITORIAL_KEYWORDS = frozenset({"description", "title", "$comment", "examples"})
IGNORED_RULE_KEYS = frozenset({"source", "amendments"})


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


def _short(value: Any, limit: int = 60) -> str:
    text = (
        json.dumps(value, ensure_ascii=False, sort_keys=True)
        if not isinstance(value, str)
        else repr(value)
    )
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _names(values: Any) -> list[str]:
    if values is None:
        return []
    return [values] if isinstance(values, str) else list(values)


def _bounds(schema: dict[str, Any], snap: Snapshot) -> dict[str, tuple[Any, str | None]]:
    """keyword -> (value, the rule reference it comes from), for literal keywords and x-bound
    (and spec 0.1.0's x-bound-max-length / x-bound-maximum form)."""
    out: dict[str, tuple[Any, str | None]] = {
        k: (schema[k], None) for k in (*MAX_KEYWORDS, *MIN_KEYWORDS) if k in schema
    }
    refs = dict(schema.get("x-bound") or {})
    for key, ref in schema.items():
        if key.startswith("x-bound-"):
            head, *rest = key.removeprefix("x-bound-").split("-")
            refs[head + "".join(p.title() for p in rest)] = ref
    for keyword, ref in refs.items():
        out[keyword] = (snap.rule(str(ref)), str(ref))
    return out


class Differ:
    """Compares two snapshots; `changes` lists what it found, in spec order."""

    def __init__(self, old: Snapshot, new: Snapshot) -> None:
        self.old, self.new = old, new
        self.changes: list[Change] = []

    def add(
        self, where: str, kinds: tuple[str, ...] | str, summary: str, method: str | None = None
    ) -> None:
        kinds = (kinds,) if isinstance(kinds, str) else kinds
        self.changes.append(Change(where, tuple(dict.fromkeys(kinds)), summary, method))

    def run(self) -> list[Change]:
        self.grammars()
        self.error_codes()
        self.meta_tools()
        self.profiles()
        self.models()
        self.rules()
        self.behaviour()
        self.amendments()
        self.requirements()
        self.vectors()
        self.surface()
        self.bookkeeping()
        return self.changes

    # ------------------------------------------------------------ grammars

    def _uses(self, snap: Snapshot) -> dict[str, set[tuple[str, str]]]:
        """grammar -> {(direction, where)}: schemas that name it, then grammars that embed it."""
        uses: dict[str, set[tuple[str, str]]] = {g: set() for g in snap.grammars}
        for tool, t in snap.meta_tools.items():
            for where, names in _grammar_refs(t.get("input_schema") or {}, f"{tool}.input"):
                for g in names:
                    uses.setdefault(g, set()).add(("input", where))
        reachable = _reachable_models(snap)
        for model, schema in snap.models.items():
            direction = "output" if model in reachable else "internal"
            for where, names in _grammar_refs(schema, model):
                for g in names:
                    uses.setdefault(g, set()).add((direction, where))
        for name, implicit in IMPLICIT_USES.items():
            if name in uses:
                uses[name].update(implicit)
        # A grammar inside another one is used wherever that one is.
        changed = True
        while changed:
            changed = False
            for name, grammar in snap.grammars.items():
                inherited = {(d, w if "(via" in w else f"{w} (via {name})") for d, w in uses[name]}
                for ref in grammar_refs(grammar.nodes):
                    if ref in uses and not inherited <= uses[ref]:
                        uses[ref] |= inherited
                        changed = True
        return uses

    def _signature(self, snap: Snapshot, name: str, seen: frozenset[str] = frozenset()) -> Any:
        """What decides a grammar's language: its syntax, its cap and those of the grammars
        it embeds (a grammar whose signature is unchanged needs no comparison)."""
        g = snap.grammars[name]
        refs = sorted(set(grammar_refs(g.nodes)) - seen)
        return (
            g.nodes,
            g.spec.max_length,
            [(r, self._signature(snap, r, seen | {name})) for r in refs if r in snap.grammars],
        )

    def grammars(self) -> None:
        old, new = self.old.grammars, self.new.grammars
        uses_old, uses_new = self._uses(self.old), self._uses(self.new)
        for name in new:
            if name not in old:
                self.add(f"grammars.{name}", "grammar.added", "a new grammar")
                continue
            if old[name].spec.error != new[name].spec.error:
                self.add(
                    f"grammars.{name}.error",
                    "error.grammar_code_changed",
                    f"malformed values answer {new[name].spec.error}, not {old[name].spec.error}",
                )
            if self._signature(self.old, name) == self._signature(self.new, name):
                continue
            verdict = compare(language([name], old), language([name], new))
            uses = uses_old.get(name, set()) | uses_new.get(name, set())
            self._grammar_change(f"grammars.{name}", verdict, uses)
        for name in old:
            if name not in new:
                self.add(f"grammars.{name}", "grammar.removed", "grammar removed")

    def _grammar_change(self, where: str, verdict: Verdict, uses: set[tuple[str, str]]) -> None:
        if verdict.relation == "equal":
            self.add(where, "grammar.rewritten", verdict.describe(), verdict.method)
            return
        directions = sorted({d for d, _ in uses}) or ["input", "output"]
        shown = sorted({w for _, w in uses})
        used = (
            f"used by {', '.join(shown[:4])}{' ...' if len(shown) > 4 else ''}"
            if shown
            else "no schema names it: counted as input and output"
        )
        self.add(
            where,
            tuple(f"{d}.{verdict.relation}" for d in directions),
            f"{verdict.relation}: {verdict.describe()}; {used}",
            verdict.method,
        )

    # ------------------------------------------------------------ error codes

    def error_codes(self) -> None:
        old, new = self.old.codes, self.new.codes
        removed = [c for c in old if c not in new]
        added = [c for c in new if c not in old]
        renamed = {
            r: a
            for r in removed
            for a in added
            if (old[r] or {}).get("summary") == (new[a] or {}).get("summary")
        }
        for code in added:
            if code not in renamed.values():
                self.add(f"errors.{code}", "error.code_added", "a new error code")
        for code in removed:
            if code in renamed:
                self.add(
                    f"errors.{code}",
                    ("error.code_removed", "error.code_added"),
                    f"renamed {renamed[code]} (likely: removed, and added with the same summary)",
                )
            else:
                self.add(f"errors.{code}", "error.code_removed", "error code removed")

    # ------------------------------------------------------------ meta-tools

    def meta_tools(self) -> None:
        old, new = self.old.meta_tools, self.new.meta_tools
        removed = [t for t in old if t not in new]
        added = [t for t in new if t not in old]
        renamed = {r: a for r in removed for a in added if _same_tool(old[r], new[a])}
        for tool in added:
            if tool not in renamed.values():
                self.add(f"meta_tools.{tool}", "meta_tool.added", "a new meta-tool")
        for tool in removed:
            if tool in renamed:
                self.add(
                    f"meta_tools.{tool}",
                    ("meta_tool.removed", "meta_tool.added"),
                    f"renamed {renamed[tool]} (likely: a removal plus an addition with the same "
                    "schemas)",
                )
            else:
                self.add(f"meta_tools.{tool}", "meta_tool.removed", "meta-tool removed")
        for tool in (t for t in new if t in old):
            self._meta_tool(tool, old[tool], new[tool])

    def _meta_tool(self, tool: str, old: dict[str, Any], new: dict[str, Any]) -> None:
        where = f"meta_tools.{tool}"
        if " ".join(str(old.get("description")).split()) != " ".join(
            str(new.get("description")).split()
        ):
            self.add(f"{where}.description", "meta_tool.description_changed", "reworded")
        self.schema(
            old.get("input_schema") or {}, new.get("input_schema") or {}, f"{where}.input", "input"
        )
        self._result(where, old, new)
        errs_old, errs_new = _names(old.get("errors")), _names(new.get("errors"))
        for code in errs_new:
            if code not in errs_old:
                self.add(f"{where}.errors", "error.returned_added", f"may now return {code}")
        for code in errs_old:
            if code not in errs_new:
                self.add(f"{where}.errors", "error.returned_removed", f"no longer returns {code}")

    def _result(self, where: str, old: dict[str, Any], new: dict[str, Any]) -> None:
        kind_old, kind_new = _result_kind(old), _result_kind(new)
        if kind_old == kind_new == "model":
            if old["output"] != new["output"]:
                self.schema(
                    {"x-model": old["output"]},
                    {"x-model": new["output"]},
                    f"{where}.output",
                    "output",
                )
            return
        if kind_old == kind_new:
            return
        shown = {
            "model": f"the {{}} model",
            "upstream": "the upstream tool's own result",
            "unspecified": "unspecified",
        }
        before = shown[kind_old].format(old.get("output"))
        after = shown[kind_new].format(new.get("output"))
        kind = {
            "unspecified": "output.model_unspecified",
        }.get(
            kind_new,
            "output.model_specified" if kind_old == "unspecified" else "output.model_replaced",
        )
        self.add(f"{where}.output", kind, f"the result is {after}, no longer {before}")

    # ------------------------------------------------------------ profiles

    def profiles(self) -> None:
        old, new = self.old.profiles, self.new.profiles
        for name, p in new.items():
            where = f"profiles.{name}"
            if name not in old:
                self.add(where, "profile.added", "a new profile")
                continue
            before, after = _names(old[name].get("meta_tools")), _names(p.get("meta_tools"))
            for tool in after:
                if tool not in before:
                    self.add(f"{where}.meta_tools", "profile.meta_tool_added", f"serves {tool}")
            for tool in before:
                if tool not in after:
                    self.add(
                        f"{where}.meta_tools",
                        "profile.meta_tool_removed",
                        f"no longer serves {tool}",
                    )
            if old[name].get("lists_upstream_tools") != p.get("lists_upstream_tools"):
                self.add(
                    f"{where}.lists_upstream_tools",
                    "behaviour.changed",
                    f"{old[name].get('lists_upstream_tools')} -> {p.get('lists_upstream_tools')}",
                )
        for name in old:
            if name not in new:
                self.add(f"profiles.{name}", "profile.removed", "profile removed")

    # ------------------------------------------------------------ models

    def models(self) -> None:
        old, new = self.old.models, self.new.models
        reachable = _reachable_models(self.old) | _reachable_models(self.new)
        removed = [m for m in old if m not in new]
        added = [m for m in new if m not in old]
        renamed = {r: a for r in removed for a in added if old[r] == new[a]}
        for name in added:
            if name not in renamed.values():
                self.add(f"models.{name}", "model.added", "a new model")
        for name in removed:
            note = (
                f"renamed {renamed[name]} (same schema; model names are not on the wire)"
                if name in renamed
                else "model removed"
            )
            self.add(f"models.{name}", "model.removed", note)
        for name in (m for m in new if m in old):
            direction = "output" if name in reachable else "internal"
            self.schema(old[name], new[name], f"models.{name}", direction)

    # ------------------------------------------------------------ JSON Schema

    def schema(
        self,
        old: Any,
        new: Any,
        where: str,
        direction: str,
        seen: frozenset[tuple[str, str]] = frozenset(),
    ) -> None:
        """Changes between two schemas of one value flowing in `direction`."""
        if old == new:
            return
        if not isinstance(old, dict) or not isinstance(new, dict):
            self.add(where, f"{direction}.changed", f"{_short(old)} -> {_short(new)}")
            return
        if "x-model" in old or "x-model" in new:
            self._model_ref(old, new, where, direction, seen)
            return
        self._grammar_ref(old, new, where, direction)
        self._keywords(old, new, where, direction)
        self._object(old, new, where, direction, seen)
        for key in ("items", "additionalProperties"):
            if isinstance(old.get(key), dict) and isinstance(new.get(key), dict):
                self.schema(
                    old[key],
                    new[key],
                    f"{where}[]" if key == "items" else f"{where}.*",
                    direction,
                    seen,
                )
        for key in ("anyOf", "oneOf", "allOf"):
            self._options(old.get(key), new.get(key), f"{where}.{key}", direction, seen)

    def _model_ref(
        self,
        old: dict[str, Any],
        new: dict[str, Any],
        where: str,
        direction: str,
        seen: frozenset[tuple[str, str]],
    ) -> None:
        name_old, name_new = old.get("x-model"), new.get("x-model")
        if name_old is not None and name_old == name_new:
            return  # the model's own changes are reported once, under models.
        pair = (str(name_old), str(name_new))
        if pair in seen:
            return
        resolved_old = self.old.models.get(name_old, {}) if name_old else old
        resolved_new = self.new.models.get(name_new, {}) if name_new else new
        self.schema(resolved_old, resolved_new, where, direction, seen | {pair})

    def _grammar_ref(
        self, old: dict[str, Any], new: dict[str, Any], where: str, direction: str
    ) -> None:
        g_old, g_new = _names(old.get("x-grammar")), _names(new.get("x-grammar"))
        if g_old == g_new:
            return
        if not g_old or not g_new:
            self.add(
                where, f"{direction}.changed", f"x-grammar {g_old or 'none'} -> {g_new or 'none'}"
            )
            return
        known = all(g in self.old.grammars for g in g_old) and all(
            g in self.new.grammars for g in g_new
        )
        if not known:
            self.add(where, f"{direction}.changed", f"grammars {g_old} -> {g_new}")
            return
        verdict = compare(language(g_old, self.old.grammars), language(g_new, self.new.grammars))
        if verdict.relation != "equal":
            self.add(
                where,
                f"{direction}.{verdict.relation}",
                f"{'|'.join(g_old)} -> {'|'.join(g_new)}: {verdict.describe()}",
                verdict.method,
            )

    def _keywords(
        self, old: dict[str, Any], new: dict[str, Any], where: str, direction: str
    ) -> None:
        types_old, types_new = set(_names(old.get("type"))), set(_names(new.get("type")))
        if types_old != types_new:
            # a number type admits every integer
            widen = frozenset({"integer"} if "number" in types_new else ())
            narrow = frozenset({"integer"} if "number" in types_old else ())
            self._set_change(where, direction, "type", types_old, types_new, widen, narrow)
        for key in ("enum", "const"):
            if old.get(key) != new.get(key):
                values_old = _values(old, key)
                values_new = _values(new, key)
                self._set_change(where, direction, key, values_old, values_new)
        bounds_old, bounds_new = _bounds(old, self.old), _bounds(new, self.new)
        for keyword in (*MAX_KEYWORDS, *MIN_KEYWORDS):
            a, b = bounds_old.get(keyword), bounds_new.get(keyword)
            if a and b and (a[0] == b[0] or (a[1] is not None and a[1] == b[1])):
                continue  # the same value, or the same rule (whose value rules() compares)
            if a or b:
                self._bound_change(where, direction, keyword, a and a[0], b and b[0])
        if old.get("pattern") != new.get("pattern"):
            self.add(
                where,
                f"{direction}.changed",
                f"pattern {_short(old.get('pattern'))} -> {_short(new.get('pattern'))}",
            )
        if bool(old.get("uniqueItems")) != bool(new.get("uniqueItems")):
            relation = "narrowed" if new.get("uniqueItems") else "widened"
            self.add(
                where, f"{direction}.{relation}", f"uniqueItems {bool(new.get('uniqueItems'))}"
            )
        if "default" in old and "default" in new and old["default"] != new["default"]:
            self.add(
                where,
                f"{direction}.default_changed",
                f"default {_short(old['default'])} -> {_short(new['default'])}",
            )
        one_old, one_new = _names(old.get("x-exactly-one-of")), _names(new.get("x-exactly-one-of"))
        if one_old != one_new:
            relation = "narrowed" if not one_old else "widened" if not one_new else "changed"
            self.add(
                where,
                f"{direction}.{relation}",
                f"exactly one of {one_old or 'none'} -> {one_new or 'none'}",
            )
        closed_old, closed_new = (
            old.get("additionalProperties") is False,
            new.get("additionalProperties") is False,
        )
        if closed_old != closed_new and ("properties" in old or "properties" in new):
            relation = "narrowed" if closed_new else "widened"
            self.add(
                where,
                f"{direction}.{relation}",
                "unknown fields " + ("refused" if closed_new else "allowed"),
            )
        known = {
            "type", "enum", "const", "pattern", "uniqueItems", "default", "x-exactly-one-of",
            "additionalProperties", "properties", "required", "items", "anyOf", "oneOf", "allOf",
            "x-bound", "x-grammar", "x-error-code", "x-model", *MAX_KEYWORDS, *MIN_KEYWORDS,
            *EDITORIAL_KEYWORDS,
        }  # fmt: skip
        for key in sorted((set(old) | set(new)) - known):
            if not key.startswith("x-bound-") and old.get(key) != new.get(key):
                self.add(
                    where,
                    f"{direction}.changed",
                    f"{key} {_short(old.get(key))} -> {_short(new.get(key))}",
                )

    def _set_change(
        self,
        where: str,
        direction: str,
        key: str,
        old: set[Any],
        new: set[Any],
        new_also: frozenset[Any] = frozenset(),
        old_also: frozenset[Any] = frozenset(),
    ) -> None:
        """A change of admitted values; *_also: values a side admits without listing them."""
        if not old or not new:
            relation = "narrowed" if new else "widened"  # no constraint admits everything
        else:
            inside, outside = old <= new | new_also, new <= old | old_also
            if inside and outside:
                return  # the same values, listed differently
            relation = "widened" if inside else "narrowed" if outside else "changed"
        gone, came = sorted(map(str, old - new)), sorted(map(str, new - old))
        detail = ", ".join([*(f"-{v}" for v in gone), *(f"+{v}" for v in came)])
        self.add(where, f"{direction}.{relation}", f"{key} {detail}")

    def _bound_change(self, where: str, direction: str, keyword: str, old: Any, new: Any) -> None:
        upper = keyword in MAX_KEYWORDS
        if old is None or new is None:
            relation = "narrowed" if old is None else "widened"
        elif not isinstance(old, (int, float)) or not isinstance(new, (int, float)):
            relation = "changed"
        elif (new < old) == upper:
            relation = "narrowed"
        else:
            relation = "widened"
        self.add(where, f"{direction}.{relation}", f"{keyword} {old} -> {new}")

    def _object(
        self,
        old: dict[str, Any],
        new: dict[str, Any],
        where: str,
        direction: str,
        seen: frozenset[tuple[str, str]],
    ) -> None:
        props_old, props_new = old.get("properties") or {}, new.get("properties") or {}
        req_old, req_new = set(old.get("required") or []), set(new.get("required") or [])
        removed = [p for p in props_old if p not in props_new]
        added = [p for p in props_new if p not in props_old]
        renamed = {
            r: a
            for r in removed
            for a in added
            if _editorial_free(props_old[r]) == _editorial_free(props_new[a])
        }
        added_kind = lambda p: f"{direction}.{'required_' if p in req_new else ''}field_added"  # noqa: E731
        for p in added:
            if p not in renamed.values():
                self.add(
                    f"{where}.{p}", added_kind(p), "added" + (" (required)" if p in req_new else "")
                )
        for p in removed:
            if p in renamed:
                a = renamed[p]
                self.add(
                    f"{where}.{p}",
                    (f"{direction}.field_removed", added_kind(a)),
                    f"renamed {a} (likely: a removal plus an addition of the same schema)",
                )
            else:
                self.add(f"{where}.{p}", f"{direction}.field_removed", "removed")
        for p in (p for p in props_new if p in props_old):
            if (p in req_old) != (p in req_new):
                state = "required" if p in req_new else "optional"
                self.add(f"{where}.{p}", f"{direction}.field_now_{state}", f"now {state}")
            self.schema(props_old[p], props_new[p], f"{where}.{p}", direction, seen)

    def _options(
        self, old: Any, new: Any, where: str, direction: str, seen: frozenset[tuple[str, str]]
    ) -> None:
        old, new = list(old or []), list(new or [])
        if old == new:
            return
        if len(old) == len(new):
            for i, (a, b) in enumerate(zip(old, new, strict=True)):
                self.schema(a, b, f"{where}[{i}]", direction, seen)
            return
        gone = [o for o in old if o not in new]
        came = [o for o in new if o not in old]
        relation = "narrowed" if not came else "widened" if not gone else "changed"
        self.add(where, f"{direction}.{relation}", f"alternatives -{len(gone)} +{len(came)}")

    # ------------------------------------------------------------ rules

    @staticmethod
    def _rule_roles(snap: Snapshot) -> dict[str, set[str]]:
        """rule reference -> {"input.max", "output.min", ...}: RULE_ROLES, and the schemas
        that name the rule through x-bound."""
        roles: dict[str, set[str]] = {k: {v} for k, v in RULE_ROLES.items()}
        reachable = _reachable_models(snap)
        found: list[tuple[str, dict[str, Any]]] = [
            ("input", t.get("input_schema") or {}) for t in snap.meta_tools.values()
        ]
        found += [("output" if m in reachable else "internal", s) for m, s in snap.models.items()]
        for direction, schema in found:
            for node in _walk(schema):
                for keyword, (_, ref) in _bounds(node, snap).items():
                    if ref is not None:
                        side = "max" if keyword in MAX_KEYWORDS else "min"
                        roles.setdefault(ref, set()).add(f"{direction}.{side}")
        return roles

    def rules(self) -> None:
        roles_old, roles_new = self._rule_roles(self.old), self._rule_roles(self.new)
        for path, a, b in _leaf_changes(self.old.rules, self.new.rules):
            roles = roles_old.get(path, set()) | roles_new.get(path, set())
            kinds = self._rule_kinds(roles, a, b)
            # a value that bounds nothing on one side is a rule of behaviour there
            if (a is not None and not roles_old.get(path)) or (
                b is not None and not roles_new.get(path)
            ):
                kinds = tuple(dict.fromkeys([*kinds, "behaviour.changed"]))
            self.add(f"rules.{path}", kinds, _transition(a, b))

    @staticmethod
    def _rule_kinds(roles: set[str], old: Any, new: Any) -> tuple[str, ...]:
        """A bound's change by the role of the bound; any other rule is behaviour."""
        numbers = all(
            v is None or (isinstance(v, int) and not isinstance(v, bool)) for v in (old, new)
        )
        if not roles or not numbers:
            return ("behaviour.changed",)
        kinds = []
        for role in sorted(roles):
            direction, side = role.split(".")
            if old is None or new is None:  # a bound introduced narrows; one dropped widens
                relation = "narrowed" if old is None else "widened"
            else:
                relation = "narrowed" if (new < old) == (side == "max") else "widened"
            kinds.append(f"{direction}.{relation}")
        return tuple(kinds)

    def behaviour(self) -> None:
        """The other rules of the surface: tools/list entries, wire names, name mapping."""

        def sections(snap: Snapshot) -> dict[str, Any]:
            profiles = snap.raw.get("profiles.yaml") or {}
            grammars = snap.raw.get("grammars.yaml") or {}
            return {
                "profiles": {
                    k: profiles.get(k)
                    for k in ("advertise_output_schemas", "stripped_entry", "wire_encoding")
                    if k in profiles
                },
                "grammars": {"name_mapping": grammars["name_mapping"]}
                if "name_mapping" in grammars
                else {},
            }

        for path, a, b in _leaf_changes(sections(self.old), sections(self.new)):
            self.add(path, "behaviour.changed", _transition(a, b))

    # ------------------------------------------------------------ records

    def amendments(self) -> None:
        old, new = self.old.amendments, self.new.amendments
        for am, data in new.items():
            title = " ".join(str(data.get("title", "")).split())
            if am not in old:
                self.add(f"amendments.{am}", "amendment.added", title)
            elif old[am] != data:
                fields = ", ".join(
                    k for k in dict.fromkeys([*old[am], *data]) if old[am].get(k) != data.get(k)
                )
                self.add(f"amendments.{am}", "amendment.changed", f"{title} ({fields})")
        for am, data in old.items():
            if am not in new:
                self.add(
                    f"amendments.{am}",
                    "amendment.removed",
                    " ".join(str(data.get("title", "")).split()),
                )

    def requirements(self) -> None:
        old, new = self.old.requirements, self.new.requirements
        reworded = []
        for rid, r in new.items():
            must = r.get("level") in MUST_LEVELS
            if rid not in old:
                self.add(
                    f"requirements.{rid}",
                    "requirement.added" if must else "requirement.advisory",
                    f"added ({r.get('level')})",
                )
                continue
            was = old[rid].get("level") in MUST_LEVELS
            if old[rid].get("level") != r.get("level"):
                kind = (
                    "requirement.strengthened"
                    if must and not was
                    else "requirement.weakened"
                    if was and not must
                    else "requirement.advisory"
                )
                self.add(
                    f"requirements.{rid}", kind, f"{old[rid].get('level')} -> {r.get('level')}"
                )
            if " ".join(str(old[rid].get("text")).split()) != " ".join(str(r.get("text")).split()):
                reworded.append(rid)
        for rid, r in old.items():
            if rid not in new:
                must = r.get("level") in MUST_LEVELS
                self.add(
                    f"requirements.{rid}",
                    "requirement.removed" if must else "requirement.advisory",
                    f"removed ({r.get('level')})",
                )
        if reworded:
            self.add(
                "requirements",
                "requirement.reworded",
                f"{len(reworded)} reworded: {_listed(reworded)}",
            )

    def vectors(self) -> None:
        old, new = self.old.vectors, self.new.vectors
        layout = self.old.raw.get("vectors.yaml")
        if not old and isinstance(layout, dict) and layout:
            total = sum(len(cases) for cases in new.values())
            self.add(
                "vectors",
                "vector.added",
                f"{total} cases in {len(new)} files, all new: {self.old.label}'s vectors.yaml "
                f"held example tables without expected answers ({_listed(list(layout), 3)})",
            )
            return
        for file in dict.fromkeys([*new, *old]):
            cases_old = {str(c.get("name")): c for c in old.get(file) or []}
            cases_new = {str(c.get("name")): c for c in new.get(file) or []}
            where = f"vectors.{file}"
            added = [n for n in cases_new if n not in cases_old]
            removed = [n for n in cases_old if n not in cases_new]
            changed = [
                n
                for n in cases_new
                if n in cases_old
                and any(
                    cases_old[n].get(k) != cases_new[n].get(k)
                    for k in ("function", "input", "expect")
                )
            ]
            if changed:
                self.add(
                    where,
                    "vector.answer_changed",
                    f"expected answers changed ({len(changed)}): {_listed(changed)}",
                )
            if added:
                self.add(where, "vector.added", f"cases added ({len(added)}): {_listed(added)}")
            if removed:
                self.add(
                    where, "vector.removed", f"cases removed ({len(removed)}): {_listed(removed)}"
                )

    def surface(self) -> None:
        old = self.old.raw.get("surface.yaml") or {}
        new = self.new.raw.get("surface.yaml") or {}
        keys = [
            k
            for k in dict.fromkeys([*old, *new])
            if k not in ("spec_version", "files") and old.get(k) != new.get(k)
        ]
        if keys:
            self.add("surface", "editorial", ", ".join(keys) + " changed")

    def bookkeeping(self) -> None:
        """Files that changed without any change above: said, so nothing passes unseen."""
        prefixes = {
            "grammars.yaml": ("grammars.",), "errors.yaml": ("errors.",), "models.yaml": ("models.",),
            "profiles.yaml": ("meta_tools.", "profiles."), "amendments.yaml": ("amendments.",),
            "requirements.yaml": ("requirements",), "vectors.yaml": ("vectors.",),
            "surface.yaml": ("surface",), **{f: ("rules.",) for f in RULE_FILES},
        }  # fmt: skip
        hashes_old, hashes_new = self.old.file_hashes, self.new.file_hashes
        bumped_only = _unversioned(self.old) == _unversioned(self.new)
        quiet = [
            f
            for f in dict.fromkeys([*hashes_new, *hashes_old])
            if hashes_old.get(f) != hashes_new.get(f)
            and not (f == "surface.yaml" and bumped_only)
            and not any(c.where.startswith(prefixes.get(f, ("\0",))) for c in self.changes)
        ]
        if quiet:
            self.add(
                "files", "bookkeeping", "changed with no change to the surface: " + ", ".join(quiet)
            )


# ---------------------------------------------------------------- helpers


def _unversioned(snap: Snapshot) -> Any:
    """surface.yaml without spec_version: a bump alone is no change to report."""
    surface = snap.raw.get("surface.yaml")
    return (
        {k: v for k, v in surface.items() if k != "spec_version"}
        if isinstance(surface, dict)
        else surface
    )


def _walk(schema: Any) -> Iterator[dict[str, Any]]:
    if isinstance(schema, dict):
        yield schema
        for v in schema.values():
            yield from _walk(v)
    elif isinstance(schema, list):
        for v in schema:
            yield from _walk(v)


def _grammar_refs(schema: Any, where: str) -> Iterator[tuple[str, list[str]]]:
    """(where, grammar names) for each x-grammar in a schema, where named by property."""
    if isinstance(schema, dict):
        if "x-grammar" in schema:
            yield where, _names(schema["x-grammar"])
        for key, value in schema.items():
            if key == "properties" and isinstance(value, dict):
                for prop, sub in value.items():
                    yield from _grammar_refs(sub, f"{where}.{prop}")
            elif key != "x-grammar":
                yield from _grammar_refs(value, where)
    elif isinstance(schema, list):
        for value in schema:
            yield from _grammar_refs(value, where)


def _reachable_models(snap: Snapshot) -> set[str]:
    """Models a client reads: meta-tool results, what they embed, and the error payload."""
    todo = [t.get("output") for t in snap.meta_tools.values() if t.get("output")]
    todo.append(ERROR_PAYLOAD)
    seen: set[str] = set()
    while todo:
        name = str(todo.pop())
        if name in seen or name not in snap.models:
            continue
        seen.add(name)
        todo += [n["x-model"] for n in _walk(snap.models[name]) if "x-model" in n]
    return seen


def _result_kind(tool: dict[str, Any]) -> str:
    if tool.get("output"):
        return "model"
    return "upstream" if tool.get("result") == "upstream" else "unspecified"


def _same_tool(a: dict[str, Any], b: dict[str, Any]) -> bool:
    keys = ("input_schema", "output", "result", "errors")
    return all(a.get(k) == b.get(k) for k in keys)


def _editorial_free(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _editorial_free(v) for k, v in schema.items() if k not in EDITORIAL_KEYWORDS}
    if isinstance(schema, list):
        return [_editorial_free(v) for v in schema]
    return schema


def _values(schema: dict[str, Any], key: str) -> set[Any]:
    if key not in schema:
        return set()
    values = schema[key] if key == "enum" else [schema[key]]
    return {json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v for v in values}


def _leaf_changes(old: Any, new: Any, at: str = "") -> Iterator[tuple[str, Any, Any]]:
    """(key path, old, new) for every differing leaf; lists of another length are leaves."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in dict.fromkeys([*old, *new]):
            if key in IGNORED_RULE_KEYS:
                continue
            yield from _leaf_changes(old.get(key), new.get(key), f"{at}.{key}" if at else str(key))
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            yield from _leaf_changes(a, b, f"{at}[{i}]")
    elif old != new:
        yield at, old, new


def _transition(old: Any, new: Any) -> str:
    if isinstance(new, dict) and old is None:
        return "added: " + ", ".join(k for k in new if k not in IGNORED_RULE_KEYS)
    if old is None:
        return f"added: {_short(new)}"
    if new is None:
        return f"removed (was {_short(old)})"
    return f"{_short(old)} -> {_short(new)}"


def _listed(names: list[str], limit: int = 6) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


# ---------------------------------------------------------------- the report


@dataclass
class Report:
    old: Snapshot
    new: Snapshot
    changes: list[Change] = field(default_factory=list)

    @property
    def breaking_clients(self) -> bool:
        return any(c.clients == B for c in self.changes)

    @property
    def breaking_implementations(self) -> bool:
        return any(c.implementations == B for c in self.changes)

    @property
    def breaking(self) -> bool:
        return self.breaking_clients or self.breaking_implementations

    def groups(self) -> dict[str, list[Change]]:
        out: dict[str, list[Change]] = {
            "Breaking for clients and implementations": [],
            "Breaking for clients": [],
            "Breaking for implementations": [],
            "Compatible": [],
        }
        for c in self.changes:
            key = {
                (B, B): "Breaking for clients and implementations",
                (B, C): "Breaking for clients",
                (C, B): "Breaking for implementations",
                (C, C): "Compatible",
            }[(c.clients, c.implementations)]
            out[key].append(c)
        return out

    def _side(self, snap: Snapshot) -> dict[str, Any]:
        return {
            "label": snap.label,
            "spec_version": snap.version,
            "loads": not snap.problems,
            "problems": snap.problems,
        }

    def as_json(self) -> dict[str, Any]:
        return {
            "old": self._side(self.old),
            "new": self._side(self.new),
            "breaking": {
                "clients": self.breaking_clients,
                "implementations": self.breaking_implementations,
            },
            "counts": {
                "changes": len(self.changes),
                "breaking_clients": sum(c.clients == B for c in self.changes),
                "breaking_implementations": sum(c.implementations == B for c in self.changes),
                "compatible": sum(c.clients == c.implementations == C for c in self.changes),
            },
            "changes": [c.as_json() for c in self.changes],
        }

    def text(self) -> str:
        counts = self.as_json()["counts"]
        lines = [
            f"spec diff {self.old.version} ({self.old.label}) -> {self.new.version} ({self.new.label})"
        ]
        for snap in (self.old, self.new):
            if snap.problems:
                n = len(snap.problems)
                lines.append(
                    f"  note: {snap.label} does not load with this generator ({n} "
                    f"problem{'s' if n > 1 else ''}; first: {snap.problems[0]}); it was read leniently"
                )
        lines.append(
            f"  {counts['changes']} changes: {counts['breaking_clients']} breaking for clients, "
            f"{counts['breaking_implementations']} breaking for implementations, "
            f"{counts['compatible']} compatible"
        )
        for title, changes in self.groups().items():
            if not changes:
                continue
            lines += ["", f"{title} ({len(changes)})"]
            for c in changes:
                how = f"; {c.method}" if c.method else ""
                lines.append(f"  {c.where}: {c.summary}  [{', '.join(c.kinds)}{how}]")
        return "\n".join(lines) + "\n"


def diff(old: Snapshot, new: Snapshot) -> Report:
    return Report(old, new, Differ(old, new).run())


def rules_markdown() -> str:
    """The classification table, as docs/spec-evolution.md shows it."""
    rows = ["| kind of change | clients | implementations | why |", "|---|---|---|---|"]
    rows += [f"| `{k}` | {r.clients} | {r.implementations} | {r.why} |" for k, r in RULES.items()]
    return "\n".join(rows) + "\n"
