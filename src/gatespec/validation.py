"""Check tool_execute args against the hydrated input schema before any upstream call (§4.4).

Each tool's validator is compiled once and cached under its tool_id alone (§4.3: the tool_id
is the sole cache key), so a catalog refresh that changes a schema must call `forget`.

Choices the seeds leave open:
- The draft is the one the schema declares in "$schema" (draft-04/06/07, 2019-09, 2020-12;
  jsonschema also knows draft-03). A schema that declares none is read as 2020-12; when 2020-12
  rejects it as a schema, older drafts are tried newest first, because real servers emit
  undeclared draft-04 schemas (e.g. `"exclusiveMinimum": true`). A schema no draft accepts is
  HYDRATE_FAILED: the tool cannot be called safely, but nothing is sent upstream either.
- "$ref" resolves inside the schema and to the drafts' own meta-schemas only; nothing is ever
  fetched. A reference that cannot be resolved is HYDRATE_FAILED when validation reaches it.
- "format" is an annotation (the 2019-09+ default and jsonschema's default for every draft):
  the upstream server stays the authority on formats, so a checker that disagrees with it
  cannot block a call. `ArgsValidator(check_formats=True)` turns assertion on.

Speed: python-jsonschema chooses the draft, checks the schema and words every error, but it
costs ~50-130 us per call. Each schema is also compiled once with jsonschema-rs (the same draft,
formats not asserted, nothing fetched), which accepts valid args in about a microsecond; only
args it rejects go through python-jsonschema, so every error message stays python-jsonschema's.
In the differences known, jsonschema-rs is the stricter (ECMA-262 patterns: ASCII digits only, no
match of "$" before a trailing newline), and whatever it rejects is checked again by
python-jsonschema, whose verdict then stands.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import jsonschema_rs
import referencing.exceptions
from jsonschema import (
    Draft4Validator,
    Draft6Validator,
    Draft7Validator,
    Draft201909Validator,
    Draft202012Validator,
)
from jsonschema.exceptions import SchemaError, ValidationError
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for
from jsonschema_specifications import REGISTRY as META_SCHEMAS

from gatespec.signature import signature
from gatespec_surface.errors import ErrorCode, GatewayError
from gatespec_surface.text import clip, json_type, scrub

DEFAULT_DRAFT: Final[type[Validator]] = Draft202012Validator
# Tried in this order when a schema declares no draft and 2020-12 rejects it.
UNDECLARED_FALLBACKS: Final[tuple[type[Validator], ...]] = (
    Draft201909Validator,
    Draft7Validator,
    Draft6Validator,
    Draft4Validator,
)

MAX_REPORTED_ERRORS: Final = 10  # details list at most this many problems
_SCAN_DEPTH: Final = 64  # how deep args are searched for NaN and infinities
MESSAGE_PROBLEMS: Final = 3  # the message names this many
_PROBLEM_MAX_CHARS: Final = 300  # one problem's text in the message and details
_BRANCH_MAX_CHARS: Final = 80  # one anyOf/oneOf branch's objection within a problem
_IDENTIFIER: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _error(
    code: ErrorCode, message: str, tool_id: str, details: dict[str, Any] | None = None
) -> GatewayError:
    return GatewayError(code, message, tool_id, details)  # clipped and scrubbed by GatewayError


def json_path(path: Any) -> str:
    """ "$.a[0]['b c']": where in args a problem is (JSONPath, keys quoted when needed)."""
    out = "$"
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENTIFIER.fullmatch(str(part)):
            out += f".{part}"
        else:
            out += "[" + json.dumps(str(part), ensure_ascii=False) + "]"
    return scrub(out)


def _pointer(path: Any) -> str:
    """RFC 6901 pointer (into the schema) for a jsonschema path deque."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _kind(value: Any) -> str:
    kind = json_type(value)
    if isinstance(value, str):
        return f"{kind} of {len(value)} characters"
    if isinstance(value, (Mapping, list, tuple)):
        return f"{kind} of {len(value)} items"
    return kind


def _describe(error: ValidationError) -> str:
    """What was wrong, in at most _PROBLEM_MAX_CHARS. jsonschema's message quotes the value,
    which can be huge; then the keyword and its expectation are named instead."""
    message = error.message
    if len(message) > _PROBLEM_MAX_CHARS:
        expected = json.dumps(error.validator_value, ensure_ascii=False, default=str)
        message = f"value ({_kind(error.instance)}) fails {error.validator}: {expected}"
    if error.context:  # anyOf / oneOf: what each branch (its first problem) objected to
        firsts: dict[Any, ValidationError] = {}
        for sub in error.context:
            firsts.setdefault(sub.relative_schema_path[0], sub)
        why = "; ".join(
            f"branch {branch}"
            + (f" at {json_path(sub.relative_path)[1:]}" if sub.relative_path else "")
            + f": {clip(sub.message, _BRANCH_MAX_CHARS)}"
            for branch, sub in list(firsts.items())[:3]
        )
        message = f"{clip(message, _BRANCH_MAX_CHARS)} ({why})"
    return clip(message, _PROBLEM_MAX_CHARS)


@dataclass(frozen=True)
class CompiledSchema:
    validator: Validator
    draft: str  # the draft actually used, e.g. "draft-07"
    declared: bool  # whether the schema named its draft in "$schema"
    fast: Any = None  # the jsonschema-rs validator (accepts only), None if it cannot take it


# jsonschema-rs's validator for each draft python-jsonschema may choose.
_FAST_DRAFTS: Final[dict[type[Validator], Any]] = {
    Draft4Validator: jsonschema_rs.Draft4Validator,
    Draft6Validator: jsonschema_rs.Draft6Validator,
    Draft7Validator: jsonschema_rs.Draft7Validator,
    Draft201909Validator: jsonschema_rs.Draft201909Validator,
    Draft202012Validator: jsonschema_rs.Draft202012Validator,
}


def _never_fetch(uri: str) -> Any:
    raise ValueError(f"remote references are never fetched ({uri})")


def fast_validator(cls: type[Validator], schema: Mapping[str, Any]) -> Any:
    """jsonschema-rs's compiled form of a schema python-jsonschema accepted as `cls`, or None
    when jsonschema-rs cannot take it (an unresolvable $ref, a pattern it cannot compile):
    then python-jsonschema checks every call, as it always could."""
    fast_cls = _FAST_DRAFTS.get(cls)
    if fast_cls is None:
        return None
    try:
        return fast_cls(schema, validate_formats=False, retriever=_never_fetch)
    except Exception:  # any refusal only costs speed
        return None


def fast_accepts(fast: Any, instance: object) -> bool:
    """True when jsonschema-rs accepts `instance`; False when it rejects it or cannot read it
    (lone surrogates, for one): the caller then asks python-jsonschema."""
    try:
        return fast is not None and bool(fast.is_valid(instance))
    except Exception:
        return False


_DRAFT_NAMES: Final[dict[type[Validator], str]] = {
    Draft4Validator: "draft-04",
    Draft6Validator: "draft-06",
    Draft7Validator: "draft-07",
    Draft201909Validator: "2019-09",
    Draft202012Validator: "2020-12",
}


def _declared_draft(schema: Mapping[str, Any]) -> type[Validator] | None:
    """The draft "$schema" names, or None when it names none jsonschema knows (an unknown URI,
    such as an https spelling of an http meta-schema id, is treated as undeclared)."""
    uri = schema.get("$schema")
    if not isinstance(uri, str):
        return None
    try:
        # default=None rather than jsonschema's deprecation warning for an unknown URI.
        return validator_for(schema, default=None)  # type: ignore[arg-type]
    except ValueError:  # a string urlsplit cannot parse
        return None


def compile_schema(tool_id: str, schema: object, *, check_formats: bool = False) -> CompiledSchema:
    """A validator for `schema`; HYDRATE_FAILED when it is not a usable JSON Schema object."""
    if not isinstance(schema, Mapping):
        raise _error(
            ErrorCode.HYDRATE_FAILED,
            f"input schema of {tool_id} is {type(schema).__name__}, not an object",
            tool_id,
        )
    declared = _declared_draft(schema)
    candidates = (declared,) if declared else (DEFAULT_DRAFT, *UNDECLARED_FALLBACKS)
    first_problem: str | None = None
    for cls in candidates:
        try:
            cls.check_schema(dict(schema))
        except SchemaError as exc:
            first_problem = first_problem or (
                f"schema{json_path(exc.path)[1:]}: {clip(exc.message, _PROBLEM_MAX_CHARS)}"
            )
            continue
        except Exception as exc:  # a schema that breaks the checker itself (e.g. deep nesting)
            first_problem = first_problem or f"{type(exc).__name__}: {exc}"
            continue
        checker = cls.FORMAT_CHECKER if check_formats else None
        validator = cls(schema, registry=META_SCHEMAS, format_checker=checker)
        # Asserted formats: the two libraries know different formats, so no fast path.
        fast = None if check_formats else fast_validator(cls, schema)
        name = _DRAFT_NAMES.get(cls, cls.__name__)
        return CompiledSchema(validator, name, declared is not None, fast)
    tried = ", ".join(_DRAFT_NAMES.get(c, c.__name__) for c in candidates)
    raise _error(
        ErrorCode.HYDRATE_FAILED,
        f"input schema of {tool_id} is not a valid JSON Schema ({tried}): {first_problem}",
        tool_id,
        {"tool_id": tool_id, "drafts_tried": tried, "problem": first_problem},
    )


def check_args(tool_id: str, compiled: CompiledSchema, args: object) -> None:
    """ARGS_INVALID naming the first problems (and listing up to MAX_REPORTED_ERRORS in
    details) when `args` does not satisfy the schema; HYDRATE_FAILED when the schema turns out
    unusable while validating (an unresolvable $ref, an invalid pattern)."""
    if not isinstance(args, Mapping):
        kind = json_type(args)
        raise _error(
            ErrorCode.ARGS_INVALID,
            f"args for {tool_id} must be a JSON object, not {kind}",
            tool_id,
            {"tool_id": tool_id, "errors": [{"path": "$", "message": f"{kind} is not an object"}]},
        )
    odd = _non_finite(args, "$")
    if odd is not None:  # Python's JSON reader takes NaN/Infinity; passed on, they become null
        path, value = odd
        raise _error(
            ErrorCode.ARGS_INVALID,
            f"args for {tool_id}: {path} is {value}, which is not a JSON number",
            tool_id,
            {"tool_id": tool_id, "errors": [{"path": path, "message": f"{value} is not JSON"}]},
        )
    if fast_accepts(compiled.fast, args):
        return
    try:
        found = list(
            itertools.islice(compiled.validator.iter_errors(args), MAX_REPORTED_ERRORS + 1)
        )
    except referencing.exceptions.Unresolvable as exc:
        raise _error(
            ErrorCode.HYDRATE_FAILED,
            f"input schema of {tool_id} has a $ref the gateway cannot resolve "
            f"(remote references are never fetched): {exc}",
            tool_id,
            {"tool_id": tool_id},
        ) from None
    except Exception as exc:  # the schema broke validation itself; still nothing goes upstream
        raise _error(
            ErrorCode.HYDRATE_FAILED,
            f"input schema of {tool_id} cannot be applied: {type(exc).__name__}: {exc}",
            tool_id,
            {"tool_id": tool_id},
        ) from None
    if not found:
        return
    more = len(found) > MAX_REPORTED_ERRORS
    errors = found[:MAX_REPORTED_ERRORS]
    problems = [
        {
            "path": json_path(e.absolute_path),
            "message": _describe(e),
            "keyword": str(e.validator),
            "schema_path": _pointer(e.absolute_schema_path),
        }
        for e in errors
    ]
    named = "; ".join(f"{p['path']}: {p['message']}" for p in problems[:MESSAGE_PROBLEMS])
    rest = len(problems) - MESSAGE_PROBLEMS
    if rest > 0:
        named += f" (and {rest}{'+' if more else ''} more)"
    # AM-ARGS-SIGNATURE: what the tool takes, so the next call can succeed without hydration
    takes = signature(tool_id, compiled.validator.schema)
    raise _error(
        ErrorCode.ARGS_INVALID,
        f"args for {tool_id} do not match its input schema: {named}. It takes {takes}",
        tool_id,
        {
            "tool_id": tool_id,
            "draft": compiled.draft,
            "errors": problems,
            "more": more,
            "signature": takes,
        },
    )


def _non_finite(value: object, path: str, depth: int = 0) -> tuple[str, float] | None:
    """(JSONPath, value) of the first NaN or infinity in `value`, if any."""
    if isinstance(value, float):
        return None if math.isfinite(value) else (path, value)
    if depth > _SCAN_DEPTH:
        return None  # deeper nesting than any tool schema: left to the validator
    if isinstance(value, Mapping):
        for key, item in value.items():
            found = _non_finite(item, f"{path}{json_path([key])[1:]}", depth + 1)
            if found is not None:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = _non_finite(item, f"{path}[{i}]", depth + 1)
            if found is not None:
                return found
    return None


class ArgsValidator:
    """Compiles each tool's input schema once, keyed by tool_id, and checks args against it.

    Compilation failures are cached too (a bad schema stays bad until `forget`)."""

    def __init__(self, *, check_formats: bool = False) -> None:
        self.check_formats = check_formats
        self._compiled: dict[str, CompiledSchema | GatewayError] = {}
        self._lock = threading.Lock()

    def compiled(self, tool_id: str, schema: object) -> CompiledSchema:
        """The cached validator for tool_id, compiling `schema` on first use only."""
        with self._lock:
            entry = self._compiled.get(tool_id)
        if entry is None:
            try:
                entry = compile_schema(tool_id, schema, check_formats=self.check_formats)
            except GatewayError as exc:
                entry = exc
            with self._lock:
                entry = self._compiled.setdefault(tool_id, entry)
        if isinstance(entry, GatewayError):
            # A fresh exception each time: re-raising one instance would grow its traceback.
            raise GatewayError(entry.code, entry.message, entry.path, entry.details)
        return entry

    def validate(self, tool_id: str, schema: object, args: object) -> None:
        """§4.4: return None when args satisfy the tool's schema; raise ARGS_INVALID (or
        HYDRATE_FAILED for an unusable schema) otherwise. Call this before going upstream."""
        check_args(tool_id, self.compiled(tool_id, schema), args)

    def forget(self, tool_id: str | None = None) -> None:
        """Drop one tool's validator (or all): call on catalog refresh."""
        with self._lock:
            if tool_id is None:
                self._compiled.clear()
            else:
                self._compiled.pop(tool_id, None)

    def __contains__(self, tool_id: object) -> bool:
        return tool_id in self._compiled


__all__ = [
    "DEFAULT_DRAFT",
    "MAX_REPORTED_ERRORS",
    "ArgsValidator",
    "CompiledSchema",
    "check_args",
    "compile_schema",
    "json_path",
]
