"""Layer-2 families of the search profile (seed 003, ADR-041): search's hits and their
fields, its query and namespace filter, the operation types, schema, call (the upstream's own
result, arguments checked before upstream) and batch (ordered, one failure failing only
itself), proved against the fixture's call log.

Every expected answer comes from the fixture (what each tool is, returns or fails with) and
from the seed's wording as the spec's amendments decide it: operations "/namespace/name"
(AM-SEARCH-OPERATION, AM-SEARCH-OPERATION-NAME), hits and their order (AM-SEARCH-HITS), types
(AM-SEARCH-NO-SUBSCRIPTIONS), schema (AM-SEARCH-SCHEMA-ERRORS), call (AM-SEARCH-CALL-RESULT)
and batch (AM-SEARCH-BATCH). At --level seed the kit finds each fixture tool's operation in the
IUT's own listing (the seed shows operation names only by example), reads answers by what the
seed names (a hit's operation, namespace, type and description; schema's input and output
schemas, under any key; batch's results in order) and leaves what only an amendment decides
(field names, closed objects, error codes the seed does not name, validation before upstream)
to --level spec.
"""

from __future__ import annotations

from typing import Any, Final

from gatespec_conformance.fixtures.catalog import (
    ECHO,
    FAILS,
    FAILURE_TEXT,
    STRUCTURED,
    STRUCTURED_CONTENT,
    by_name,
)
from gatespec_conformance.functions.run import same_json
from gatespec_conformance.live import readings
from gatespec_conformance.live.checks import Emit, Family
from gatespec_conformance.live.facts import Live
from gatespec_conformance.live.observations import admitted
from gatespec_conformance.live.payloads import (
    QUOTED_MAX,
    WRONG_CODE,
    judge_call_error,
    judge_failed,
    judge_success,
)
from gatespec_conformance.rules import SPEC, Finding, Rule, charged_to, seed_value
from gatespec_surface.errors import ErrorCode
from gatespec_surface.grammars import is_search_operation
from gatespec_surface.schemas import MODEL_SCHEMAS

__all__ = ["FAMILIES"]

_ARGS_INVALID: Final = ErrorCode.ARGS_INVALID.value
_NOT_FOUND: Final = ErrorCode.TOOL_NOT_FOUND.value
_HIT_FIELDS: Final = frozenset(MODEL_SCHEMAS["SearchHit"]["properties"])
_TYPES: Final = frozenset(MODEL_SCHEMAS["SearchHit"]["properties"]["type"]["enum"])
# A schema in a hit: under any field the seeds name for one (readings), or bare properties.
_SCHEMA_KEYS: Final = (*readings.INPUT_SCHEMA_KEYS, *readings.OUTPUT_SCHEMA_KEYS, "properties")
_ABSENT: Final = "zz_no_such_operation"
# What the seed names a hit's parts (S003-SEARCH-FIELDS): required at both levels.
_SEED_FIELDS: Final = frozenset(seed_value(("S003-SEARCH-FIELDS",), sorted(_HIT_FIELDS)))

_FIELDS: Final = Rule("a hit lacks a field the seed names", ("SEARCH-RESULT-FIELDS",))
# Seed 003 Decision 3 names what a hit says ("operation names, namespaces, types, and short
# descriptions"), not the answer's container nor the field of the operation name: --level seed
# reads both as readings.search_hits and readings.hit_operation do; the spec's SearchResult
# ({"hits": [SearchHit]}, SearchHit.operation) is AM-SEARCH-HITS'.
_HITS_FORM: Final = Rule(
    "search's hits are not SearchResult's hits, or a hit names its operation other than as operation",
    ("SEARCH-RESULT-FIELDS",),
    SPEC,
    amended_by=("AM-SEARCH-HITS",),
)
_CLOSED: Final = Rule(
    "a hit carries fields SearchHit does not list",
    ("SEARCH-RESULT-FIELDS",),
    SPEC,
    amended_by=("AM-SEARCH-HITS",),
)
_SCHEMAS: Final = Rule("a hit carries a schema", ("SEARCH-NO-SCHEMAS-IN-RESULTS",))
# Seed 003 keeps the operations' schemas out of search; an upstream description that quotes a
# schema is cut before it only by the spec (AM-SEARCH-HITS: a hit's description is the card's,
# AM-BANNED-IN-DESCRIPTION).
_QUOTED: Final = Rule(
    "a hit's description quotes a schema",
    ("SEARCH-NO-SCHEMAS-IN-RESULTS",),
    SPEC,
    amended_by=("AM-SEARCH-HITS", "AM-BANNED-IN-DESCRIPTION"),
)
_MISSING: Final = Rule(
    "a fixture tool is not listed under its operation", ("SEARCH-RESULT-FIELDS",)
)
_NAMESPACE: Final = Rule("a hit's namespace is not its operation's", ("SEARCH-RESULT-FIELDS",))
_TYPE: Final = Rule("a hit's type is not query or mutation", ("SEARCH-SUBSCRIPTIONS-EXCLUDED",))
_READ_ONLY: Final = Rule(
    "a hit's type does not follow readOnlyHint",
    ("SEARCH-SUBSCRIPTIONS-EXCLUDED",),
    SPEC,
    amended_by=("AM-SEARCH-NO-SUBSCRIPTIONS",),
)
_RANKED: Final = Rule("the best match is not among the first hits", ("SEARCH-QUERY-FILTER",))
_ORDER: Final = Rule("hits are not best first", ("SEARCH-QUERY-FILTER",))
_FILTER: Final = Rule("a filter did not narrow the hits", ("SEARCH-QUERY-FILTER",))
_SCHEMA: Final = Rule("schema does not give the tool's schemas", ("SEARCH-SCHEMA-FULL-SPEC",))
_SCHEMA_KEY: Final = Rule(
    "schema does not give them as input_schema and output_schema",
    ("SEARCH-SCHEMA-FULL-SPEC",),
    SPEC,
    amended_by=("AM-SEARCH-SCHEMA-ERRORS",),
)
_RESULT: Final = Rule(
    "call does not answer the upstream's own result", ("SEARCH-CALL-RESULT-MAPPING",)
)
_DISPATCH: Final = Rule("upstream did not receive exactly this call", ("SEARCH-CALL-DISPATCH",))
_REACHED: Final = Rule(
    "a call that must not reach upstream did",
    ("SEARCH-CALL-DISPATCH",),
    SPEC,
    amended_by=("AM-SEARCH-CALL-RESULT",),
)
_SUCCEEDED: Final = Rule("a call with input the tool refuses succeeded", ("SEARCH-CALL-DISPATCH",))
_ITEMS: Final = Rule("batch's results are not the calls' own, in order", ("SEARCH-BATCH",))
_ITEM_FIELDS: Final = Rule(
    "batch's items are not the spec's BatchResult items",
    ("SEARCH-BATCH",),
    SPEC,
    amended_by=("AM-SEARCH-BATCH",),
)
_UNSTATED_CODE: Final = Rule(
    WRONG_CODE.cause, levels=SPEC, amended_by=("AM-SEARCH-BATCH", "AM-SEARCH-CALL-RESULT")
)
_BATCH_REACHED: Final = Rule(
    "what reached upstream is not the batch's own calls", ("SEARCH-BATCH",)
)


def _code_by_amendment(findings: list[Finding], *amendments: str) -> list[Finding]:
    """The findings, with a wrong error code charged to the amendment that decides the code
    (seed 003 names FORBIDDEN only): --level seed accepts any error payload."""
    return [charged_to(f, *amendments) if f.rule is WRONG_CODE else f for f in findings]


def _field(item: dict[str, Any], *keys: str) -> Any:
    """The first of `keys` an object has (the spec's snake_case, MCP's camelCase)."""
    return next((item[k] for k in keys if k in item), None)


def _members(document: Any) -> Any:
    """What shows an answer's form in a finding: its members' names, or that it is a list."""
    return sorted(document) if isinstance(document, dict) else "a list"


def _hits(document: Any) -> tuple[list[dict[str, Any]], list[Finding]]:
    """The hits of a search answer (none when it carries no list of hits: the family's
    findings then say what is missing), and a finding when they are not in the spec's form."""
    hits, key = readings.search_hits(document)
    if hits is None:
        return [], []
    if key != "hits":
        where = f"under {key!r}" if key else "a bare list"
        return hits, [Finding(_HITS_FORM, f"the hits are {where}", _members(document))]
    return hits, []


def _problems(hit: dict[str, Any]) -> list[Finding]:
    found = []
    if "operation" not in hit and readings.hit_operation(hit) is not None:
        # the seed's "operation names" under `name`: the seed's fields are all there
        found.append(Finding(_HITS_FORM, "the operation is under 'name'", hit))
        hit = {**hit, "operation": readings.hit_operation(hit)}
    if not _SEED_FIELDS <= set(hit):
        found.append(Finding(_FIELDS, f"fields {sorted(hit)}", hit))
    if set(hit) - _HIT_FIELDS:
        found.append(Finding(_CLOSED, f"fields {sorted(hit)}", hit))
    if any(key in hit for key in _SCHEMA_KEYS):
        found.append(Finding(_SCHEMAS, "", hit))
    elif "properties" in str(hit.get("description")):
        found.append(Finding(_QUOTED, "", hit))
    if hit.get("type") not in _TYPES:
        found.append(Finding(_TYPE, f"type {hit.get('type')!r}", hit))
    operation = hit.get("operation")
    if is_search_operation(operation) and str(operation).split("/")[1] != hit.get("namespace"):
        found.append(Finding(_NAMESPACE, "", hit))
    return found


async def _fields(live: Live, emit: Emit) -> None:
    """search with no query lists every fixture tool under its operation, each hit with
    operation, namespace, type and a short description, never a schema."""
    operations = await live.operations()
    args = await live.listing()
    call = await live.call("search", args)
    document, findings = judge_success(call, "search")
    hits, form = _hits(document)
    findings += form
    for hit in hits:
        findings += _problems(hit)
    listed = {readings.hit_operation(h) for h in hits}
    must = [operations[t.name] for t in live.fixture if admitted(t, live.level)]
    missing = sorted(op for op in must if op not in listed)
    if missing:
        findings.append(Finding(_MISSING, f"{len(missing)} missing, e.g. {missing[:3]}", missing))
    expected = sorted(must)[:10]
    emit.judge("", findings, input=args, expected=expected, got=call.shown())


async def _types(live: Live, emit: Emit) -> None:
    """Only query and mutation operations exist (no subscription); readOnlyHint makes a
    query (AM-SEARCH-NO-SUBSCRIPTIONS)."""
    operations = await live.operations()
    hits = {readings.hit_operation(h): h for h in await live.search_hits(await live.listing())}
    for name in ("read_only_tool", "destructive_tool", ECHO):
        op = operations.get(name)
        if op is None:
            continue
        want = (
            "query" if (by_name(name).annotations or {}).get("readOnlyHint") is True else "mutation"
        )
        hit = hits.get(op, {})
        problem = (
            None if hit.get("type") == want else [Finding(_READ_ONLY, f"{hit.get('type')!r}", hit)]
        )
        emit.judge(name, problem, input={"operation": op}, expected={"type": want}, got=hit)
    odd = [h for h in hits.values() if h.get("type") not in _TYPES]
    emit.judge("all", [Finding(_TYPE, "", odd[:3])] if odd else None, got=sorted(_TYPES))


async def _ranking(live: Live, emit: Emit) -> None:
    """A query ranks best first (the fixture's known answers among the default number of
    hits, as tool_browse's k); limit and namespace narrow the hits (seed 003 Consequences)."""
    operations = await live.operations()
    namespace = await live.namespace()
    for query, name in live.served_queries():
        if name not in operations:
            continue
        call = await live.call("search", {"query": query})  # the default limit, as browse's k
        document, findings = judge_success(call, "search")
        hits, form = _hits(document)
        findings += form
        if operations[name] not in [readings.hit_operation(h) for h in hits]:
            findings.append(Finding(_RANKED, f"{operations[name]} not among the hits", hits))
        scores = [h.get("score") for h in hits]
        numbers = [float(s) for s in scores if isinstance(s, int | float)]
        if len(numbers) == len(scores) and numbers != sorted(numbers, reverse=True):
            findings.append(Finding(_ORDER, "", scores))
        emit.judge(
            query, findings, input={"query": query}, expected=operations[name], got=call.shown()
        )
    for case, args, most in (
        ("limit", {"query": "file", "limit": 1}, 1),
        ("namespace", {"query": "file", "namespace": "zz" + namespace[:30]}, 0),
    ):
        declared = await live.declares("search", case)
        if live.level == "seed" and not declared:
            emit.skip(case, f"the seed names no {case} argument, and the IUT declares none")
            continue
        call = await live.call("search", args)
        document, findings = judge_success(call, "search")
        if len(_hits(document)[0]) > most:
            findings.append(Finding(_FILTER, f"more than {most} hit(s)", document))
        if not declared:  # only the spec names the argument (AM-SEARCH-HITS)
            findings = [charged_to(f, "AM-SEARCH-HITS") for f in findings]
        emit.judge(case, findings, input=args, got=call.shown())


async def _schema(live: Live, emit: Emit) -> None:
    operations = await live.operations()
    for name in (ECHO, STRUCTURED):
        if name not in operations:
            continue
        tool = by_name(name)
        call = await live.call("schema", {"operation": operations[name]})
        document, findings = judge_success(call, "schema")
        values = list(document.values())
        for key, want in (
            ("input_schema", tool.input_schema),
            ("output_schema", tool.output_schema),
        ):
            if document and not same_json(document.get(key), want):
                # the seed names no keys: at --level seed the schema must be there under any
                found = want is None or any(same_json(v, want) for v in values)
                findings.append(Finding(_SCHEMA_KEY if found else _SCHEMA, key, document.get(key)))
        emit.judge(
            name,
            findings,
            input={"operation": operations[name]},
            expected=tool.input_schema,
            got=call.shown(),
        )
    absent = await live.absent_operation(_ABSENT)
    call = await live.call("schema", {"operation": absent})
    findings = _code_by_amendment(
        judge_call_error(call, {_NOT_FOUND}, live.level), "AM-ACCESS-NO-LEAK"
    )
    emit.judge("unknown", findings, input={"operation": absent}, got=call.shown())


async def _call(live: Live, emit: Emit) -> None:
    operations = await live.operations()
    log = live.require_log()
    cases: list[tuple[str, str, dict[str, Any]]] = [
        ("echo", ECHO, {"text": "from the kit", "times": 2}),
        ("structured", STRUCTURED, {}),
        ("upstream-failure", FAILS, {}),
    ]
    for case, name, args in cases:
        mark = log.mark()
        call = await live.call("call", {"operation": operations[name], "input": args})
        new = log.since(mark)
        findings: list[Finding] = []
        result = call.result
        if case == "upstream-failure":  # the operation's own failure passes through
            if result is None or result.is_error is not True or FAILURE_TEXT not in call.text:
                findings.append(Finding(_RESULT, "not the upstream's isError result", call.shown()))
        else:
            findings += judge_failed(call)
            if case == "echo" and call.text.strip() != "from the kit from the kit":
                findings.append(Finding(_RESULT, "text content", call.text[:QUOTED_MAX]))
            if case == "structured" and not same_json(call.structured, STRUCTURED_CONTENT):
                findings.append(Finding(_RESULT, "structuredContent", call.structured))
        if [e.get("name") for e in new] != [name] or not same_json(new[0].get("arguments"), args):
            findings.append(Finding(_DISPATCH, f"{len(new)} upstream call(s)", new[:2]))
        emit.judge(
            case, findings, input={"operation": operations[name], "input": args}, got=call.shown()
        )
    mark = log.mark()
    bad = {"operation": operations[ECHO], "input": {"times": "many"}}
    call = await live.call("call", bad)
    if live.level == "seed":  # the seed does not say who refuses it: the upstream may
        findings = [] if call.is_error else [Finding(_SUCCEEDED, "", call.shown())]
    else:
        findings = judge_call_error(call, {_ARGS_INVALID}, live.level)
    if log.since(mark):
        findings.append(Finding(_REACHED, "", log.since(mark)))
    emit.judge(
        "args-invalid", findings, input=bad, expected={"error": _ARGS_INVALID}, got=call.shown()
    )


async def _batch(live: Live, emit: Emit) -> None:
    operations = await live.operations()
    absent = await live.absent_operation(_ABSENT)
    key = await live.batch_key()
    log = live.require_log()
    calls: list[dict[str, Any]] = [
        {"operation": operations[ECHO], "input": {"text": "first"}},
        {"operation": operations[FAILS]},
        {"operation": absent},
        {"operation": operations[ECHO], "input": {"times": 0}},
        {"operation": operations[STRUCTURED]},
    ]
    mark = log.mark()
    call = await live.call("batch", {key: calls})
    reached = sorted(str(e.get("name")) for e in log.since(mark))
    document, findings = judge_success(call, "batch")
    items, member = readings.batch_items(document)
    items = items or []
    if items and member != "results":
        where = f"under {member!r}" if member else "a bare list"
        findings.append(Finding(_ITEM_FIELDS, f"the items are {where}", _members(document)))
    want_errors = [False, True, True, True, False]
    got = [bool(_field(i, "is_error", "isError") or i.get("error")) for i in items]
    if live.level == "seed" and len(got) == len(want_errors):
        # {"times": 0} breaks only the declared schema, which the seed does not have the
        # gateway check (AM-SEARCH-CALL-RESULT does); the fixture itself runs it
        got[3] = want_errors[3]
    if got != want_errors:
        findings.append(Finding(_ITEMS, "is_error per item, in order", got))
    else:
        spec_form = [(i.get("operation"), i.get("is_error")) for i in items]
        if spec_form != [(c["operation"], e) for c, e in zip(calls, want_errors, strict=True)]:
            findings.append(Finding(_ITEM_FIELDS, "operation and is_error per item", items[:2]))
        codes = [(i.get("error") or {}).get("error") for i in items[2:4]]
        if codes != [_NOT_FOUND, _ARGS_INVALID]:
            findings.append(Finding(_UNSTATED_CODE, "the failed items' codes", items[2:4]))
        # the output under the spec's field, MCP's casing, or seed 003's "output"
        last = _field(items[4], *readings.BATCH_OUTPUT_KEYS)
        if not same_json(last, STRUCTURED_CONTENT):
            findings.append(Finding(_ITEMS, "structured content of the last item", items[4]))
        elif _field(items[4], "structured_content") is None:
            findings.append(Finding(_ITEM_FIELDS, "the output is not structured_content", items[4]))
    # the invalid echo may reach upstream at --level seed (the upstream refuses it)
    must = sorted([ECHO, FAILS, STRUCTURED])
    if reached != must and not (live.level == "seed" and reached == sorted([*must, ECHO])):
        findings.append(Finding(_BATCH_REACHED, "", reached))
    emit.judge("", findings, input={key: calls}, got=call.shown())


_PROFILE: Final = ("search",)

FAMILIES: Final[list[Family]] = [
    Family(
        "search/fields",
        "server.search.fields",
        _fields,
        _PROFILE,
        summary="search lists every fixture tool as /namespace/name with its fields, no schema",
        amended_by=("AM-SEARCH-OPERATION", "AM-SEARCH-HITS"),
    ),
    Family(
        "search/types",
        "server.search.types",
        _types,
        _PROFILE,
        summary="every hit is a query or a mutation (readOnlyHint: query); no subscription",
        amended_by=("AM-SEARCH-NO-SUBSCRIPTIONS",),
    ),
    Family(
        "search/ranking",
        "server.search.ranking",
        _ranking,
        _PROFILE,
        summary="a query finds the fixture's known answers best first; limit and namespace narrow",
        amended_by=("AM-SEARCH-HITS",),
    ),
    Family(
        "search/schema",
        "server.search.schema",
        _schema,
        _PROFILE,
        summary="schema gives the tool's input and output schemas; unknown is TOOL_NOT_FOUND",
        amended_by=("AM-SEARCH-SCHEMA-ERRORS",),
    ),
    Family(
        "search/call",
        "server.search.call",
        _call,
        _PROFILE,
        summary="call answers the upstream's own result; invalid input never reaches upstream",
        amended_by=("AM-SEARCH-CALL-RESULT",),
    ),
    Family(
        "search/batch",
        "server.search.batch",
        _batch,
        _PROFILE,
        summary="batch answers each call in order; a failed call fails only its own item",
        amended_by=("AM-SEARCH-BATCH",),
    ),
]
