"""Checking meta-tool arguments against their generated input schemas (compiled once).

A failure names the argument. When the failing argument is exactly one grammar (a JSON-Schema
pattern the generator emitted from grammars.yaml), the grammar's own checker explains it and its
error code is used if the meta-tool declares that code (so a malformed browse path is
PATH_INVALID, as §3.4 requires); every other failure is ARGS_INVALID, including both or
neither of query/path.

jsonschema-rs accepts valid arguments (microseconds); python-jsonschema explains the rest, so
the messages are its (see gatespec.validation).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any, Final

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from gatespec.validation import fast_accepts, fast_validator
from gatespec_surface import grammars
from gatespec_surface.descriptors import META_TOOL_ERRORS
from gatespec_surface.errors import PATH_MAX_CHARS, ErrorCode, GatewayError
from gatespec_surface.grammars import GrammarInfo
from gatespec_surface.schemas import META_TOOL_INPUT_SCHEMAS
from gatespec_surface.text import clip, json_type

_SHOWN_MAX: Final = 80  # a quoted argument value in a message
_PROBLEM_MAX: Final = 300  # one problem's text in a message
_ROOT_ORDER: Final = ("additionalProperties", "required", "minProperties", "maxProperties")
# JSON type names as a message says them ("expected an object, got a string").
_ARTICLED: Final = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "boolean": "a boolean",
    "number": "a number",
    "integer": "an integer",
    "null": "null",
}


def _grammar_table() -> dict[str, tuple[GrammarInfo, Callable[[object], object]]]:
    """json_pattern -> (grammar, match_NAME) for every generated grammar."""
    table: dict[str, tuple[GrammarInfo, Callable[[object], object]]] = {}
    for value in vars(grammars).values():
        if isinstance(value, GrammarInfo):
            table[value.json_pattern] = (value, getattr(grammars, f"match_{value.name}"))
    return table


_GRAMMARS: Final = _grammar_table()

# What each meta-tool's implementation cannot run without (the runtime's own need: seed 000
# §4.1/§4.2 tool_hydrate(tool_id), tool_execute(tool_id, args), tool_view(handle, selector);
# seed 003 Decision 4 call/batch take {operation, input}). Checked whatever the input schema's
# `required` says, so a spec that stops requiring one of them turns its absence into
# ARGS_INVALID, never into a crash inside the operation. "calls[].operation": the key of each
# item of the array `calls`.
NEEDED: Final[dict[str, tuple[str, ...]]] = {
    "tool_execute": ("tool_id",),
    "tool_hydrate": ("tool_id",),
    "tool_view": ("handle",),
    "schema": ("operation",),
    "call": ("operation",),
    "batch": ("calls", "calls[].operation"),
}


def _shown(value: str) -> str:
    return repr(clip(value, _SHOWN_MAX))


def _kind(value: object) -> str:
    name = json_type(value)
    return _ARTICLED.get(name, name)


def _payload_path(value: object) -> str:
    """The offending value as the error's path, when it fits the payload's path bound (a longer
    one would only be a cut fragment)."""
    return value if isinstance(value, str) and len(value) <= PATH_MAX_CHARS else ""


class ArgumentChecker:
    """Validates one meta-tool's arguments and fills in schema defaults."""

    def __init__(self, tool: str) -> None:
        self.tool = tool
        self.schema: Mapping[str, Any] = META_TOOL_INPUT_SCHEMAS[tool]
        self.properties: Mapping[str, Mapping[str, Any]] = self.schema.get("properties", {})
        self.declared: frozenset[ErrorCode] = frozenset(META_TOOL_ERRORS[tool])
        self.needed: tuple[str, ...] = NEEDED.get(tool, ())
        for need in self.needed:
            top = need.partition("[]")[0]
            if top not in self.properties:
                raise ValueError(f"{tool}'s input schema has no argument {top!r}, which it needs")
        Draft202012Validator.check_schema(self.schema)
        self._validator = Draft202012Validator(self.schema)
        self._fast = fast_validator(Draft202012Validator, self.schema)

    def check(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """The arguments with defaults filled in, or a GatewayError naming what is wrong."""
        args = dict(arguments or {})
        if not fast_accepts(self._fast, args):
            errors = list(self._validator.iter_errors(args))
            if errors:
                raise self._explain(args, min(errors, key=self._rank))
        missing = self._missing(args)
        if missing is not None:
            raise GatewayError(
                ErrorCode.ARGS_INVALID,
                f"{self.tool} is missing required argument {missing!r}",
                "",
                {"rule": "required", "accepted": list(self.properties), "argument": missing},
            )
        for name, prop in self.properties.items():
            if name not in args and "default" in prop:
                args[name] = copy.deepcopy(prop["default"])
        return args

    def _missing(self, args: Mapping[str, Any]) -> str | None:
        """The first argument the operation needs that the call does not give (`calls[2].
        operation` for an item of an array), or None."""
        for need in self.needed:
            top, sep, key = need.partition("[].")
            if top not in args:
                return top
            if sep and isinstance(args[top], list):
                for i, item in enumerate(args[top]):
                    if isinstance(item, Mapping) and key not in item:
                        return f"{top}[{i}].{key}"
        return None

    def _rank(self, error: ValidationError) -> tuple[int, int]:
        # Shape problems of the whole call first (exactly-one, missing, unknown), then the
        # arguments in schema order, so the reported error does not depend on set order.
        if not error.path:
            rule = str(error.validator)
            return (0, _ROOT_ORDER.index(rule) if rule in _ROOT_ORDER else len(_ROOT_ORDER))
        names = list(self.properties)
        arg = error.path[0]
        return (1, names.index(arg) if arg in names else len(names))

    def _explain(self, args: Mapping[str, Any], error: ValidationError) -> GatewayError:
        if not error.path:
            return self._call_error(args, error)
        arg = str(error.path[0])
        value = args.get(arg)
        prop = self.properties.get(arg, {})
        details: dict[str, Any] = {"argument": arg, "rule": str(error.validator)}
        grammar = self._grammar_error(arg, value, prop) if len(error.path) == 1 else None
        if grammar is not None:
            return grammar
        if error.validator == "type" and len(error.path) > 1:
            # Inside the argument (an array item, an object member): name where, and what
            # that place expects, not the argument's own type.
            where = "".join(
                f"[{p}]" if isinstance(p, int) else f".{p}" for p in list(error.path)[1:]
            )
            wanted = error.validator_value
            expected = _ARTICLED.get(wanted, wanted) if isinstance(wanted, str) else "valid"
            message = (
                f"argument {arg!r} item {where} must be {expected}, not {_kind(error.instance)}"
            )
            details["at"] = where
        elif error.validator == "type":
            message = f"argument {arg!r} must be {_expected(prop)}, not {_kind(value)}"
        elif error.validator in ("minLength", "maxLength") and isinstance(value, str):
            limit = error.validator_value
            if not value:
                message = f"argument {arg!r} is empty"
            elif error.validator == "maxLength":
                message = f"argument {arg!r} is {len(value)} characters; the limit is {limit}"
            else:
                message = f"argument {arg!r} is {len(value)} characters; the minimum is {limit}"
        else:
            message = f"argument {arg!r}: {clip(error.message, _PROBLEM_MAX)}"
        return GatewayError(ErrorCode.ARGS_INVALID, message, "", details)

    def _call_error(self, args: Mapping[str, Any], error: ValidationError) -> GatewayError:
        names = list(self.properties)
        rule = str(error.validator)
        details: dict[str, Any] = {"rule": rule, "accepted": names}
        if rule in ("minProperties", "maxProperties") and self.schema.get("maxProperties") == 1:
            given = [n for n in names if n in args]
            got = "neither" if not given else "both" if len(given) == 2 else ", ".join(given)
            message = f"{self.tool} takes exactly one of {_either(names)}; got {got}"
            details["given"] = given
        elif rule == "required":
            missing = [n for n in self.schema.get("required", []) if n not in args]
            message = f"{self.tool} is missing required argument {missing[0]!r}"
            details["argument"] = missing[0]
        elif rule == "additionalProperties":
            extra = sorted(k for k in args if k not in self.properties)
            message = f"{self.tool} has no argument {extra[0]!r}; it takes {', '.join(names)}"
            details["argument"] = extra[0]
        else:
            message = f"{self.tool} arguments: {clip(error.message, _PROBLEM_MAX)}"
        return GatewayError(ErrorCode.ARGS_INVALID, message, "", details)

    def _grammar_error(
        self, arg: str, value: object, prop: Mapping[str, Any]
    ) -> GatewayError | None:
        """The grammar's own error for a string argument that is one grammar, else None."""
        found = _GRAMMARS.get(prop.get("pattern", ""))
        if found is None or not isinstance(value, str):
            if isinstance(value, str) and "anyOf" in prop:
                alternatives = [_GRAMMARS[b["pattern"]][0].name for b in prop["anyOf"]
                                if b.get("pattern") in _GRAMMARS]  # fmt: skip
                if alternatives:
                    message = (
                        f"argument {arg!r} {_shown(value)} is not a {' or a '.join(alternatives)}"
                    )
                    details = {"argument": arg, "rule": "anyOf", "grammars": alternatives}
                    return GatewayError(
                        ErrorCode.ARGS_INVALID, message, _payload_path(value), details
                    )
            return None
        info, match = found
        try:
            match(value)
        except GatewayError as exc:
            code = exc.code if exc.code in self.declared else ErrorCode.ARGS_INVALID
            details = {"argument": arg, "rule": "grammar", "grammar": info.name}
            return GatewayError(
                code, f"argument {arg!r}: {exc.message}", _payload_path(value), details
            )
        return None  # the grammar accepts it: a schema-only rule failed, explained generically


def _expected(prop: Mapping[str, Any]) -> str:
    kind = prop.get("type")
    return _ARTICLED.get(kind, kind) if isinstance(kind, str) else "valid"


def _either(names: list[str]) -> str:
    return " or ".join(names) if len(names) <= 2 else ", ".join(names[:-1]) + " or " + names[-1]
