"""Changes between two JSON Schemas of one value (a meta-tool's arguments, a model), flowing
in one direction: input (clients send it), output (clients read it) or internal (no client
reads it). The spec's extensions are read as the generator reads them: x-grammar as a language
(generator/languages.py), x-model by following the reference, x-bound by the rule it names."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from .diff_rules import Recorder
from .languages import compare, language
from .snapshot import Snapshot

MAX_KEYWORDS = ("maxLength", "maximum", "exclusiveMaximum", "maxItems", "maxProperties")
MIN_KEYWORDS = ("minLength", "minimum", "exclusiveMinimum", "minItems", "minProperties")
EDITORIAL_KEYWORDS = frozenset({"description", "title", "$comment", "examples"})


def short(value: Any, limit: int = 60) -> str:
    text = (
        json.dumps(value, ensure_ascii=False, sort_keys=True)
        if not isinstance(value, str)
        else repr(value)
    )
    return text if len(text) <= limit else text[: limit - 3] + "..."


def names(values: Any) -> list[str]:
    if values is None:
        return []
    return [values] if isinstance(values, str) else list(values)


def walk(schema: Any) -> Iterator[dict[str, Any]]:
    if isinstance(schema, dict):
        yield schema
        for v in schema.values():
            yield from walk(v)
    elif isinstance(schema, list):
        for v in schema:
            yield from walk(v)


def bounds(schema: dict[str, Any], snap: Snapshot) -> dict[str, tuple[Any, str | None]]:
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


def values_of(schema: dict[str, Any], key: str) -> set[Any]:
    if key not in schema:
        return set()
    values = schema[key] if key == "enum" else [schema[key]]
    return {json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v for v in values}


def _editorial_free(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _editorial_free(v) for k, v in schema.items() if k not in EDITORIAL_KEYWORDS}
    if isinstance(schema, list):
        return [_editorial_free(v) for v in schema]
    return schema


class SchemaDiff(Recorder):
    """Recorder of schema changes (Differ extends it to the whole spec)."""

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
            self.add(where, f"{direction}.changed", f"{short(old)} -> {short(new)}")
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
        g_old, g_new = names(old.get("x-grammar")), names(new.get("x-grammar"))
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
        types_old, types_new = set(names(old.get("type"))), set(names(new.get("type")))
        if types_old != types_new:
            # a number type admits every integer
            widen = frozenset({"integer"} if "number" in types_new else ())
            narrow = frozenset({"integer"} if "number" in types_old else ())
            self._set_change(where, direction, "type", types_old, types_new, widen, narrow)
        for key in ("enum", "const"):
            if old.get(key) != new.get(key):
                values_old = values_of(old, key)
                values_new = values_of(new, key)
                self._set_change(where, direction, key, values_old, values_new)
        bounds_old, bounds_new = bounds(old, self.old), bounds(new, self.new)
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
                f"pattern {short(old.get('pattern'))} -> {short(new.get('pattern'))}",
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
                f"default {short(old['default'])} -> {short(new['default'])}",
            )
        one_old, one_new = names(old.get("x-exactly-one-of")), names(new.get("x-exactly-one-of"))
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
                    f"{key} {short(old.get(key))} -> {short(new.get(key))}",
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

        def added_kind(p: str) -> str:
            return f"{direction}.{'required_' if p in req_new else ''}field_added"

        self.keyed(
            f"{where}.",
            props_old,
            props_new,
            (f"{direction}.field_removed", added_kind),
            "field",
            lambda a, b: _editorial_free(a) == _editorial_free(b),
            "same schema",
        )
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
