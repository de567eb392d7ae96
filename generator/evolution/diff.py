"""`generator diff OLD NEW`: every change between two versions of the spec, classified by
generator/diff_rules.py for clients and implementations. Differ walks the surface (grammars,
error codes, meta-tools, profiles, models, rules), schema_diff.py compares JSON Schemas and
record_diff.py the records (amendments, requirements, vectors)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..ir import grammar_refs
from ..views import ERROR_PAYLOAD
from . import record_diff
from .diff_report import Report
from .diff_rules import IMPLICIT_USES, RULE_ROLES, Change
from .languages import Verdict, compare, language
from .schema_diff import MAX_KEYWORDS, SchemaDiff, bounds, names, short, walk
from .snapshot import Snapshot

IGNORED_RULE_KEYS = frozenset({"source", "amendments"})


class Differ(SchemaDiff):
    """Compares two snapshots; `changes` lists what it found, in spec order."""

    def run(self) -> list[Change]:
        self.grammars()
        self.error_codes()
        self.meta_tools()
        self.profiles()
        self.models()
        self.rules()
        self.behaviour()
        for records in (
            record_diff.amendments,
            record_diff.requirements,
            record_diff.vectors,
            record_diff.surface,
            record_diff.bookkeeping,
        ):
            records(self)
        return self.changes

    def _uses(self, snap: Snapshot) -> dict[str, set[tuple[str, str]]]:
        """grammar -> {(direction, where)}: schemas that name it, then grammars that embed it."""
        uses: dict[str, set[tuple[str, str]]] = {g: set() for g in snap.grammars}
        for tool, t in snap.meta_tools.items():
            for where, found in _grammar_refs(t.get("input_schema") or {}, f"{tool}.input"):
                for g in found:
                    uses.setdefault(g, set()).add(("input", where))
        reachable = _reachable_models(snap)
        for model, schema in snap.models.items():
            direction = "output" if model in reachable else "internal"
            for where, found in _grammar_refs(schema, model):
                for g in found:
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

    def error_codes(self) -> None:
        old, new = self.old.codes, self.new.codes
        self.keyed(
            "errors.",
            old,
            new,
            ("error.code_removed", "error.code_added"),
            "error code",
            lambda a, b: (a or {}).get("summary") == (b or {}).get("summary"),
            "with the same summary",
        )

    def meta_tools(self) -> None:
        old, new = self.old.meta_tools, self.new.meta_tools
        kinds = ("meta_tool.removed", "meta_tool.added")
        both = self.keyed("meta_tools.", old, new, kinds, "meta-tool", _same_tool, "same schemas")
        for tool in both:
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
        errs_old, errs_new = names(old.get("errors")), names(new.get("errors"))
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

    def profiles(self) -> None:
        old, new = self.old.profiles, self.new.profiles
        for name, p in new.items():
            where = f"profiles.{name}"
            if name not in old:
                self.add(where, "profile.added", "a new profile")
                continue
            before, after = names(old[name].get("meta_tools")), names(p.get("meta_tools"))
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

    def models(self) -> None:
        old, new = self.old.models, self.new.models
        reachable = _reachable_models(self.old) | _reachable_models(self.new)
        kinds = ("model.removed", "model.added")
        basis = "same schema; model names are not on the wire"
        for name in self.keyed("models.", old, new, kinds, "model", lambda a, b: a == b, basis):
            direction = "output" if name in reachable else "internal"
            self.schema(old[name], new[name], f"models.{name}", direction)

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
            for node in walk(schema):
                for keyword, (_, ref) in bounds(node, snap).items():
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


def _grammar_refs(schema: Any, where: str) -> Iterator[tuple[str, list[str]]]:
    """(where, grammar names) for each x-grammar in a schema, where named by property."""
    if isinstance(schema, dict):
        if "x-grammar" in schema:
            yield where, names(schema["x-grammar"])
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
        todo += [n["x-model"] for n in walk(snap.models[name]) if "x-model" in n]
    return seen


def _result_kind(tool: dict[str, Any]) -> str:
    if tool.get("output"):
        return "model"
    return "upstream" if tool.get("result") == "upstream" else "unspecified"


def _same_tool(a: dict[str, Any], b: dict[str, Any]) -> bool:
    keys = ("input_schema", "output", "result", "errors")
    return all(a.get(k) == b.get(k) for k in keys)


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
        return f"added: {short(new)}"
    if new is None:
        return f"removed (was {short(old)})"
    return f"{short(old)} -> {short(new)}"


def diff(old: Snapshot, new: Snapshot) -> Report:
    return Report(old, new, Differ(old, new).run())
