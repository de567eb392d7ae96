"""Args validation before any upstream call (seed 000 §4.4): drafts, caching, error shape.

The schemas below are real `inputSchema`s: MCP servers captured by LiveMCPBench (Apache-2.0),
github/github-mcp-server tool snapshots (MIT), and @modelcontextprotocol/server-everything.
"""

from __future__ import annotations

import dataclasses
import json
import urllib.request
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gatespec.validation as validation
from gatespec.validation import ArgsValidator, compile_schema, json_path
from gatespec_surface.errors import ErrorCode, GatewayError
from gatespec_surface.schemas import MODEL_SCHEMAS

ERROR_PAYLOAD = jsonschema.Draft202012Validator(MODEL_SCHEMAS["ErrorPayload"])
DRAFT07 = "http://json-schema.org/draft-07/schema#"

# npm-sentinel-mcp npmTrends (LiveMCPBench)
NPM_TRENDS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "packages": {"type": "array", "items": {"type": "string"}},
        "period": {
            "type": "string",
            "enum": ["last-week", "last-month", "last-year"],
            "default": "last-month",
        },
    },
    "required": ["packages"],
    "additionalProperties": False,
    "$schema": DRAFT07,
}
# 12306-mcp get-tickets (LiveMCPBench; descriptions dropped)
GET_TICKETS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "date": {"type": "string", "minLength": 10, "maxLength": 10},
        "fromStation": {"type": "string"},
        "toStation": {"type": "string"},
        "trainFilterFlags": {
            "type": "string",
            "pattern": "^[GDZTKOFS]*$",
            "maxLength": 8,
            "default": "",
        },
        "sortFlag": {"type": "string", "default": ""},
        "sortReverse": {"type": "boolean", "default": False},
        "limitedNum": {"type": "number", "minimum": 0, "default": 0},
    },
    "required": ["date", "fromStation", "toStation"],
    "additionalProperties": False,
    "$schema": DRAFT07,
}
# github list_commits (github-mcp-server; no "$schema": read as 2020-12)
LIST_COMMITS: dict[str, Any] = {
    "properties": {
        "author": {"type": "string"},
        "fields": {
            "items": {
                "enum": ["sha", "html_url", "commit", "author", "committer"],
                "type": "string",
            },
            "type": "array",
        },
        "owner": {"type": "string"},
        "page": {"minimum": 1, "type": "number"},
        "path": {"type": "string"},
        "perPage": {"maximum": 100, "minimum": 1, "type": "number"},
        "repo": {"type": "string"},
        "sha": {"type": "string"},
        "since": {"type": "string"},
        "until": {"type": "string"},
    },
    "required": ["owner", "repo"],
    "type": "object",
}
# github update_issue_labels (oneOf of a string and an object)
UPDATE_ISSUE_LABELS: dict[str, Any] = {
    "properties": {
        "issue_number": {"minimum": 1, "type": "number"},
        "labels": {
            "items": {
                "oneOf": [
                    {"type": "string"},
                    {
                        "properties": {
                            "confidence": {"enum": ["LOW", "MEDIUM", "HIGH"], "type": "string"},
                            "is_suggestion": {"type": "boolean"},
                            "name": {"type": "string"},
                            "rationale": {"maxLength": 280, "type": "string"},
                        },
                        "required": ["name"],
                        "type": "object",
                    },
                ]
            },
            "type": "array",
        },
        "owner": {"type": "string"},
        "repo": {"type": "string"},
    },
    "required": ["owner", "repo", "issue_number", "labels"],
    "type": "object",
}
# pdf-reader-mcp read_pdf (LiveMCPBench): draft-04 keywords ("exclusiveMinimum": true) and no
# "$schema"; 2020-12 rejects it as a schema, draft-04 accepts it.
READ_PDF: dict[str, Any] = {
    "type": "object",
    "properties": {
        "sources": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "minLength": 1},
                    "url": {"type": "string", "format": "uri"},
                    "pages": {
                        "anyOf": [
                            {
                                "type": "array",
                                "items": {
                                    "type": "integer",
                                    "exclusiveMinimum": True,
                                    "minimum": 0,
                                },
                                "minItems": 1,
                            },
                            {"type": "string", "minLength": 1},
                        ]
                    },
                },
                "additionalProperties": False,
            },
            "minItems": 1,
        },
        "include_full_text": {"type": "boolean", "default": False},
        "include_metadata": {"type": "boolean", "default": True},
        "include_page_count": {"type": "boolean", "default": True},
    },
    "required": ["sources"],
    "additionalProperties": False,
}
# server-everything get-annotated-message
ANNOTATED_MESSAGE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "messageType": {"type": "string", "enum": ["error", "success", "debug"]},
        "includeImage": {"default": False, "type": "boolean"},
    },
    "required": ["messageType"],
    "$schema": DRAFT07,
}

# (tool_id, schema, the draft jsonschema must use for it, args it accepts)
REAL_SCHEMAS: list[tuple[str, dict[str, Any], type[Any], dict[str, Any]]] = [
    (
        "npm-sentinel:npmTrends#00000001",
        NPM_TRENDS,
        jsonschema.Draft7Validator,
        {"packages": ["react", "vue"], "period": "last-week"},
    ),
    (
        "s12306:get-tickets#00000002",
        GET_TICKETS,
        jsonschema.Draft7Validator,
        {"date": "2025-01-01", "fromStation": "BJP", "toStation": "SHH", "trainFilterFlags": "GD"},
    ),
    (
        "github:list_commits#00000003",
        LIST_COMMITS,
        jsonschema.Draft202012Validator,
        {"owner": "o", "repo": "r", "perPage": 30, "fields": ["sha"]},
    ),
    (
        "github:update_issue_labels#00000004",
        UPDATE_ISSUE_LABELS,
        jsonschema.Draft202012Validator,
        {"owner": "o", "repo": "r", "issue_number": 3, "labels": ["bug", {"name": "p1"}]},
    ),
    (
        "pdf-reader:read_pdf#00000005",
        READ_PDF,
        jsonschema.Draft4Validator,
        {"sources": [{"path": "a.pdf", "pages": [1, 2]}], "include_full_text": True},
    ),
    (
        "everything:get-annotated-message#00000006",
        ANNOTATED_MESSAGE,
        jsonschema.Draft7Validator,
        {"messageType": "error", "includeImage": False},
    ),
]


def args_error(
    schema: object, args: object, validator: ArgsValidator | None = None
) -> GatewayError:
    with pytest.raises(GatewayError) as info:
        (validator or ArgsValidator()).validate("t:tool", schema, args)
    ERROR_PAYLOAD.validate(info.value.to_payload())
    json.dumps(info.value.to_payload(), ensure_ascii=False).encode("utf-8")
    return info.value


# ---------------------------------------------------------------------- accepts / rejects


@pytest.mark.parametrize(
    ("schema", "args"),
    [
        (NPM_TRENDS, {"packages": ["react"], "period": "last-week"}),
        (GET_TICKETS, {"date": "2025-01-01", "fromStation": "BJP", "toStation": "SHH"}),
        (LIST_COMMITS, {"owner": "o", "repo": "r", "perPage": 100}),
        (UPDATE_ISSUE_LABELS, {"owner": "o", "repo": "r", "issue_number": 1, "labels": ["bug"]}),
        (READ_PDF, {"sources": [{"path": "a.pdf", "pages": [1, 2]}]}),
        (ANNOTATED_MESSAGE, {"messageType": "success", "includeImage": True}),
    ],
)
def test_valid_args_pass(schema: dict[str, Any], args: dict[str, Any]) -> None:
    ArgsValidator().validate("t:tool", schema, args)  # no exception: accepted


def test_message_names_path_and_expectation() -> None:
    err = args_error(LIST_COMMITS, {"owner": "o", "repo": "r", "perPage": "ten"})
    assert err.code is ErrorCode.ARGS_INVALID and err.path == "t:tool"
    assert "$.perPage" in err.message and "'number'" in err.message
    assert err.details["errors"] == [
        {
            "path": "$.perPage",
            "message": "'ten' is not of type 'number'",
            "keyword": "type",
            "schema_path": "/properties/perPage/type",
        }
    ]


def test_nested_paths_and_missing_required() -> None:
    err = args_error(READ_PDF, {"sources": [{"pages": [0]}], "extra": 1})
    paths = [e["path"] for e in err.details["errors"]]
    assert "$.sources[0].pages" in paths and "$" in paths
    assert "'extra' was unexpected" in err.message
    # the anyOf problem says what each branch objected to
    pages = next(e for e in err.details["errors"] if e["path"] == "$.sources[0].pages")
    assert "branch 0" in pages["message"] and "branch 1" in pages["message"]


def test_every_error_is_listed_up_to_the_bound() -> None:
    schema = {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(30)}}
    err = args_error(schema, {f"p{i}": "x" for i in range(30)})
    assert len(err.details["errors"]) == validation.MAX_REPORTED_ERRORS
    assert err.details["more"] is True
    assert err.message.count("is not of type") == validation.MESSAGE_PROBLEMS


def test_huge_values_do_not_blow_up_the_message() -> None:
    err = args_error(LIST_COMMITS, {"owner": "o" * 100_000, "repo": ["r"] * 10_000})
    assert len(err.message) <= MODEL_SCHEMAS["ErrorPayload"]["properties"]["message"]["maxLength"]
    assert "$.repo" in err.message and "array of 10000 items" in err.message


@pytest.mark.parametrize(
    ("args", "kind"), [([1], "array"), ("x", "string"), (None, "null"), (3, "number")]
)
def test_non_object_args_are_args_invalid(args: object, kind: str) -> None:
    err = args_error(LIST_COMMITS, args)
    assert err.code is ErrorCode.ARGS_INVALID and f"not {kind}" in err.message


def test_lone_surrogates_in_args_do_not_break_the_error() -> None:
    schema = {"type": "object", "additionalProperties": {"type": "integer"}}
    err = args_error(schema, {"\ud800": "\udc00"})
    assert err.details["errors"][0]["path"] == '$["\ufffd"]'
    json.dumps(err.details, ensure_ascii=False).encode("utf-8")


def test_json_path_quotes_keys_that_are_not_identifiers() -> None:
    assert json_path(["a", 0, "b c", "d.e"]) == '$.a[0]["b c"]["d.e"]'


# ---------------------------------------------------------------------- drafts


def test_declared_draft_is_used() -> None:
    draft4 = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {"n": {"type": "number", "maximum": 5, "exclusiveMaximum": True}},
    }
    assert compile_schema("t:x", draft4).draft == "draft-04"
    assert args_error(draft4, {"n": 5}).code is ErrorCode.ARGS_INVALID
    ArgsValidator().validate("t:x", draft4, {"n": 4.9})

    draft7_tuple = {
        "$schema": DRAFT07,
        "type": "object",
        "properties": {"t": {"items": [{"type": "string"}], "additionalItems": False}},
    }
    assert args_error(draft7_tuple, {"t": ["a", 1]}).details["draft"] == "draft-07"

    draft2019 = {
        "$schema": "https://json-schema.org/draft/2019-09/schema",
        "type": "object",
        "dependentRequired": {"a": ["b"]},
    }
    assert args_error(draft2019, {"a": 1}).details["draft"] == "2019-09"


def test_undeclared_draft_defaults_to_2020_12() -> None:
    schema = {"type": "object", "properties": {"t": {"prefixItems": [{"type": "string"}]}}}
    compiled = compile_schema("t:x", schema)
    assert compiled.draft == "2020-12" and compiled.declared is False
    assert args_error(schema, {"t": [1]}).code is ErrorCode.ARGS_INVALID


def test_undeclared_draft_04_schema_falls_back_instead_of_failing() -> None:
    compiled = compile_schema("t:x", READ_PDF)
    assert compiled.draft == "draft-04"
    assert args_error(READ_PDF, {"sources": [{"pages": [0]}]}).code is ErrorCode.ARGS_INVALID


def test_unknown_schema_uri_is_treated_as_undeclared() -> None:
    schema = {"$schema": "https://json-schema.org/draft-07/schema", "type": "object"}
    assert compile_schema("t:x", schema).declared is False


@pytest.mark.parametrize(
    "schema",
    [
        None,
        [],
        "object",
        {"type": "objekt"},
        {"type": "object", "properties": {"a": {"minLength": -1}}},
        {"type": "object", "properties": {"a": {"pattern": "("}}},
        {"$schema": DRAFT07, "type": "object", "required": "a"},
    ],
)
def test_unusable_schema_is_hydrate_failed(schema: object) -> None:
    err = args_error(schema, {})
    assert err.code is ErrorCode.HYDRATE_FAILED and "t:tool" in err.message


def test_remote_refs_are_never_fetched(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_network(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("validation tried to fetch a remote $ref")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    schema = {"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}}
    ArgsValidator().validate("t:x", schema, {})  # accepted: the ref is never reached
    err = args_error(schema, {"a": 1})
    assert err.code is ErrorCode.HYDRATE_FAILED and "example.com" in err.message


def test_local_refs_and_meta_schema_refs_resolve() -> None:
    schema = {
        "type": "object",
        "$defs": {"pos": {"type": "integer", "minimum": 1}},
        "properties": {
            "n": {"$ref": "#/$defs/pos"},
            "s": {"$ref": "https://json-schema.org/draft/2020-12/schema"},
        },
    }
    ArgsValidator().validate("t:x", schema, {"n": 1, "s": {"type": "string"}})
    assert args_error(schema, {"n": 0}).details["errors"][0]["path"] == "$.n"
    assert args_error(schema, {"s": {"type": 5}}).code is ErrorCode.ARGS_INVALID


def test_formats_are_annotations_unless_asked_for() -> None:
    schema = {"type": "object", "properties": {"e": {"type": "string", "format": "email"}}}
    ArgsValidator().validate("t:x", schema, {"e": "not-an-email"})
    strict = ArgsValidator(check_formats=True)
    assert args_error(schema, {"e": "not-an-email"}, strict).code is ErrorCode.ARGS_INVALID


# ---------------------------------------------------------------------- fast path


class _Unused:
    """Stands in for python-jsonschema where the fast path must decide alone."""

    def iter_errors(self, instance: object) -> Any:
        raise AssertionError("python-jsonschema was asked about args jsonschema-rs accepts")


def test_jsonschema_rs_alone_accepts_valid_args() -> None:
    compiled = compile_schema("t:x", LIST_COMMITS)
    assert compiled.fast is not None
    fast_only = dataclasses.replace(compiled, validator=_Unused())
    validation.check_args("t:x", fast_only, {"owner": "o", "repo": "r"})
    with pytest.raises(GatewayError, match="python-jsonschema was asked"):
        validation.check_args("t:x", fast_only, {"owner": 1})  # a rejection is re-checked


@pytest.mark.parametrize(
    ("pattern", "value"),
    [
        (r"^\d+$", "\u0663"),  # ARABIC-INDIC DIGIT THREE: a digit to Python, not to ECMA-262
        ("^a$", "a\n"),  # Python's "$" also matches before a trailing newline
    ],
)
def test_python_jsonschema_decides_what_jsonschema_rs_rejects(pattern: str, value: str) -> None:
    schema = {"type": "object", "properties": {"v": {"type": "string", "pattern": pattern}}}
    compiled = compile_schema("t:x", schema)
    assert not validation.fast_accepts(compiled.fast, {"v": value})  # the engines differ here
    ArgsValidator().validate("t:x", schema, {"v": value})  # python-jsonschema's verdict stands


def test_schema_jsonschema_rs_refuses_is_checked_by_python_jsonschema_alone() -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}}
    assert compile_schema("t:x", schema).fast is None
    assert compile_schema("t:x", LIST_COMMITS, check_formats=True).fast is None


# ---------------------------------------------------------------------- cache


def test_validator_is_compiled_once_per_tool_id(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = validation.compile_schema

    def counting(tool_id: str, schema: object, **kw: Any) -> validation.CompiledSchema:
        calls.append(tool_id)
        return real(tool_id, schema, **kw)

    monkeypatch.setattr(validation, "compile_schema", counting)
    v = ArgsValidator()
    for _ in range(3):
        v.validate("a:x", NPM_TRENDS, {"packages": []})
    # keyed by tool_id only: another schema under the same id still uses the first validator
    v.validate("a:x", LIST_COMMITS, {"packages": []})
    v.validate("b:x", LIST_COMMITS, {"owner": "o", "repo": "r"})
    assert calls == ["a:x", "b:x"]
    v.forget("a:x")
    assert "a:x" not in v and "b:x" in v
    assert args_error(LIST_COMMITS, {"packages": []}, v).code is ErrorCode.ARGS_INVALID
    v.forget()
    assert "b:x" not in v


def test_compile_failure_is_cached_and_reraised_fresh() -> None:
    v = ArgsValidator()
    first = args_error({"type": "objekt"}, {}, v)
    second = args_error({"type": "object"}, {}, v)  # same tool_id: the cached failure
    assert first is not second and first.to_payload() == second.to_payload()


# ---------------------------------------------------------------------- property: agrees with jsonschema

JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-5, 200)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from(["last-week", "2025-01-01", "GDZ", "sha", "LOW", "a.pdf", "success"])
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=12,
)


@st.composite
def near(draw: st.DrawFn, value: Any) -> Any:
    """`value`, or a small mutation of it somewhere inside, so that both outcomes occur."""
    how = draw(st.sampled_from(["keep", "keep", "replace", "descend", "drop", "add"]))
    if how == "replace":
        return draw(JSON_VALUES)
    if isinstance(value, dict) and value:
        key = draw(st.sampled_from(sorted(value)))
        if how == "drop":
            return {k: v for k, v in value.items() if k != key}
        if how == "add":
            return {**value, draw(st.text(max_size=6)): draw(JSON_VALUES)}
        if how == "descend":
            return {**value, key: draw(near(value[key]))}
    if isinstance(value, list) and value and how in ("descend", "drop", "add"):
        i = draw(st.integers(0, len(value) - 1))
        if how == "drop":
            return value[:i] + value[i + 1 :]
        if how == "add":
            return [*value, draw(JSON_VALUES)]
        return [*value[:i], draw(near(value[i])), *value[i + 1 :]]
    return value


@st.composite
def args_for(draw: st.DrawFn, example: dict[str, Any]) -> dict[str, Any]:
    """Mutations of accepted args (mostly), or arbitrary objects keyed like the schema."""
    out = example
    for _ in range(draw(st.integers(0, 3))):
        mutated = draw(near(out))
        out = mutated if isinstance(mutated, dict) else out
    if draw(st.integers(0, 9)) == 0:
        keys = draw(st.lists(st.sampled_from(sorted(example)) | st.text(max_size=6), max_size=6))
        out = {k: draw(JSON_VALUES) for k in keys}
    return out


@pytest.mark.parametrize(("tool_id", "schema", "draft", "example"), REAL_SCHEMAS)
@settings(max_examples=120)
@given(data=st.data())
def test_args_invalid_exactly_when_jsonschema_says_invalid(
    tool_id: str, schema: dict[str, Any], draft: type[Any], example: dict[str, Any], data: Any
) -> None:
    args = data.draw(args_for(example))
    reference = draft(schema)
    try:
        ArgsValidator().validate(tool_id, schema, args)
    except GatewayError as err:
        assert err.code is ErrorCode.ARGS_INVALID
        assert not reference.is_valid(args)
        assert len(err.details["errors"]) == min(
            len(list(reference.iter_errors(args))), validation.MAX_REPORTED_ERRORS
        )
        ERROR_PAYLOAD.validate(err.to_payload())
    else:
        assert reference.is_valid(args)


@pytest.mark.parametrize(("tool_id", "schema", "draft", "example"), REAL_SCHEMAS)
def test_real_schemas_compile_with_the_expected_draft_and_accept_their_example(
    tool_id: str, schema: dict[str, Any], draft: type[Any], example: dict[str, Any]
) -> None:
    assert compile_schema(tool_id, schema).validator.__class__ is draft
    assert draft(schema).is_valid(example)
    ArgsValidator().validate(tool_id, schema, example)
