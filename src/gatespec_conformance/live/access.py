"""Layer-2 families of access control (seed 003 Decision 5 and Consequences; AM-ACCESS-CONTROL,
AM-ACCESS-NO-LEAK), for any implementation reached over HTTP with bearer tokens.

The kit is given tokens of two identities of the IUT (docs/conformance.md "Access control"):

* the run's own (--token): it may see every fixture tool;
* a restricted one (--restricted-token): it may see exactly the fixture tools
  RESTRICTED_VISIBLE and nothing else (a tool added while running included);

and optionally an expired token (--expired-token) of an identity the IUT otherwise accepts.
Without the restricted token (or over stdio) the families that need it are skipped.

What they prove: a request without a valid token is refused (401 with a Bearer challenge); the
restricted identity is shown exactly its tools in every surface; calling anything else is
FORBIDDEN and never reaches upstream (the fixture's call log); nothing hidden leaks through
names, counts, error texts, list_changed, another identity's session or artifacts.
"""

from __future__ import annotations

import re
from typing import Any, Final

import httpx2

from gatespec_conformance.fixtures.catalog import ADD_TOOL, BIG_TEXT, ECHO, FAILS, STRUCTURED
from gatespec_conformance.live import readings
from gatespec_conformance.live.checks import Emit, Family, expect_error
from gatespec_conformance.live.client import CallResult
from gatespec_conformance.live.facts import Live, NoFact, NotGiven
from gatespec_conformance.live.payloads import QUOTED_MAX, judge_call_error, payload_of
from gatespec_conformance.rules import SEED_META_TOOL_CODES, SPEC, Finding, Rule, seed_value
from gatespec_surface import parsers
from gatespec_surface.errors import ErrorCode, GatewayError

__all__ = ["FAMILIES", "HIDDEN_PROBES", "INITIALIZE", "RESTRICTED_VISIBLE"]

# What the restricted identity may see (by fixture tool name), and hidden tools it is made to
# call (one named like a visible one).
RESTRICTED_VISIBLE: Final = (ECHO, STRUCTURED, FAILS, BIG_TEXT, "read_file")
HIDDEN_PROBES: Final = ("destructive_tool", "read-file")
_ABSENT: Final = "zz_no_such_tool"
_FORBIDDEN: Final = ErrorCode.FORBIDDEN.value
# Seed 003 names FORBIDDEN (S003-FORBIDDEN) beside seed 002's six codes.
_SEED_CODES: Final = SEED_META_TOOL_CODES | frozenset(seed_value(("S003-FORBIDDEN",), [_FORBIDDEN]))
_QUIET: Final = 2.0  # seconds the restricted identity is watched for a notification
# An initialize request (handshake era), sent raw where the client would hide the answer.
INITIALIZE: Final = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "gatespec-conformance", "version": "0"},
    },
}
_ACCEPT: Final = {"Accept": "application/json, text/event-stream"}

_REFUSED: Final = Rule(
    "a request without a valid bearer token was served", ("SEARCH-BEARER-TOKEN",)
)
_CHALLENGE: Final = Rule(
    "the 401 carries no Bearer challenge naming the protected-resource metadata",
    ("SEARCH-BEARER-TOKEN",),
    SPEC,
    amended_by=("AM-ACCESS-CONTROL",),
)
_SHOWN: Final = Rule("the identity is shown tools it may not see", ("SEARCH-ACCESS-FILTERED",))
_NOT_SHOWN: Final = Rule("the identity is not shown a tool it may see", ("SEARCH-ACCESS-FILTERED",))
_REACHED: Final = Rule("a forbidden call reached upstream", ("SEARCH-CALL-FORBIDDEN",))
_LEAK: Final = Rule(
    "an answer tells a hidden tool from an absent one",
    ("SEARCH-NO-LEAK-TO-UNAUTHORISED",),
    SPEC,
    amended_by=("AM-ACCESS-NO-LEAK",),
)
_NAMED: Final = Rule("a hidden tool's name appears", ("SEARCH-NO-LEAK-TO-UNAUTHORISED",))
_COUNTED: Final = Rule(
    "a count covers more tools than the identity may see",
    ("SEARCH-NO-LEAK-TO-UNAUTHORISED",),
    SPEC,
    amended_by=("AM-ACCESS-NO-LEAK",),
)
_TOLD: Final = Rule(
    "list_changed told an identity whose catalog did not change",
    ("SEARCH-NO-LEAK-TO-UNAUTHORISED",),
    SPEC,
    amended_by=("AM-ACCESS-NO-LEAK",),
)
_SESSION: Final = Rule(
    "another identity's session answers otherwise than a session that does not exist",
    ("SEARCH-NO-LEAK-TO-UNAUTHORISED",),
)
_ARTIFACT: Final = Rule(
    "another identity's artifact answers otherwise than an unknown handle",
    ("SEARCH-NO-LEAK-TO-UNAUTHORISED",),
)
_NUMBER: Final = re.compile(r"(?<![\w#.:/-])\d+(?![\w.-])")


def _restricted_token(live: Live) -> str:
    token = live.options.restricted_token
    if token is None or live.target.url is None:
        raise NotGiven("needs --url and --restricted-token (docs/conformance.md, Access control)")
    return token


async def _post(live: Live, token: str | None, body: Any, **headers: str) -> httpx2.Response:
    assert live.target.url is not None
    auth = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with httpx2.AsyncClient(timeout=live.options.timeout) as http:
        return await http.post(live.target.url, json=body, headers={**_ACCEPT, **auth, **headers})


# ------------------------------------------------------------------ tokens


def _refusal(answer: httpx2.Response) -> list[Finding]:
    if answer.status_code != 401:
        return [Finding(_REFUSED, f"HTTP {answer.status_code}", answer.text[:QUOTED_MAX])]
    challenge = answer.headers.get("www-authenticate", "")
    if not challenge.lower().startswith("bearer") or "resource_metadata=" not in challenge:
        return [Finding(_CHALLENGE, challenge or "no WWW-Authenticate", challenge)]
    return []


async def _unauthenticated(live: Live, emit: Emit) -> None:
    if live.target.url is None or live.target.token is None:
        raise NotGiven("bearer tokens are checked over HTTP: give --url and --token")
    for case, token in (("no-token", None), ("unknown-token", "gatespec-conformance-guess")):
        answer = await _post(live, token, INITIALIZE)
        emit.judge(case, _refusal(answer), input={"token": token}, got=answer.status_code)


async def _expired(live: Live, emit: Emit) -> None:
    token = live.options.expired_token
    if token is None or live.target.url is None:
        raise NotGiven("needs --url and --expired-token")
    answer = await _post(live, token, INITIALIZE)
    emit.judge("", _refusal(answer), input={"token": "(expired)"}, got=answer.status_code)


# ------------------------------------------------------------------ what each identity sees


def _unscored(hit: dict[str, Any]) -> str:
    """A hit as text for the name and count checks, without its score: a score is no count
    (an implementation may rank by whole numbers), and no-leak's name check needs the rest."""
    return str({k: v for k, v in hit.items() if k != "score"})


async def _shown(live: Live) -> tuple[set[str], list[str]]:
    """(the fixture tool names `live`'s identity is shown, every text it was shown them in)."""
    texts: list[str] = []
    if live.profile == "search":
        hits = await live.search_hits(await live.listing())
        texts += [_unscored(h) for h in hits]
        for query in ("read a file", "delete something"):
            texts += [_unscored(h) for h in await live.search_hits({"query": query})]
        return {str(readings.hit_operation(h) or "").rsplit("/", 1)[-1] for h in hits}, texts
    listed = await live.listed_ids()
    if live.profile == "gateway":
        texts += [obs.text for obs in (await live.walk()).nodes.values()]
        texts += [(await live.browse({"query": q})).text for q in ("read a file", "delete")]
    else:
        texts += [f"{t.name} {t.description}" for t in await live.stripped()]
    names = set()
    for tool_id in listed:
        try:
            names.add(parsers.parse_tool_id(tool_id).name)
        except GatewayError:
            names.add(tool_id)
    return names, texts


async def _visible(live: Live, emit: Emit) -> None:
    token = _restricted_token(live)
    everything, _ = await _shown(live)
    async with live.as_token(token) as restricted:
        names, _ = await _shown(restricted)
    want = set(RESTRICTED_VISIBLE)
    findings = []
    if names - want:
        findings.append(Finding(_SHOWN, "", sorted(names - want)[:10]))
    if want - names:
        findings.append(Finding(_NOT_SHOWN, "", sorted(want - names)))
    if not (everything > want):
        findings.append(Finding(_NOT_SHOWN, "the run's own identity sees less", sorted(everything)))
    emit.judge("", findings, expected=sorted(want), got=sorted(names)[:20])


# ------------------------------------------------------------------ calling hidden tools


async def _targets(live: Live) -> dict[str, str]:
    """Fixture tool name -> how the profile addresses it (tool id or operation), for the
    hidden probes and an absent tool, as the run's own identity knows them."""
    namespace = await live.namespace()
    if live.profile == "search":
        known = await live.operations()
        out = {name: known[name] for name in HIDDEN_PROBES}
        out[_ABSENT] = await live.absent_operation(_ABSENT)
        return out
    ids = await live.fixture_ids()
    out = {name: ids[name] for name in HIDDEN_PROBES}
    out[_ABSENT] = parsers.make_tool_id(namespace, _ABSENT, {})
    return out


def _attempts(profile: str, target: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(label, meta-tool, arguments) of every way the profile reaches a tool."""
    if profile == "search":
        return [
            ("call", "call", {"operation": target, "input": {}}),
            ("schema", "schema", {"operation": target}),
        ]
    out = [("execute", "tool_execute", {"tool_id": target, "args": {}})]
    if profile == "transparent":
        out.append(("hydrate", "tool_hydrate", {"tool_id": target}))
    return out


async def _forbidden(live: Live, emit: Emit) -> None:
    token = _restricted_token(live)
    log = live.require_log()
    targets = await _targets(live)
    async with live.as_token(token) as restricted:
        for name in HIDDEN_PROBES:
            for label, tool, args in _attempts(live.profile, targets[name]):
                mark = log.mark()
                call = await restricted.call(tool, args)
                if live.profile == "search":  # seed 003's CallError (payloads.judge_call_error)
                    findings = judge_call_error(call, {_FORBIDDEN}, live.level)
                else:
                    findings = expect_error(call, {_FORBIDDEN}, _SEED_CODES)
                reached = [e for e in log.since(mark) if e.get("name") == name]
                if reached:
                    findings.append(Finding(_REACHED, "", reached[:2]))
                emit.judge(f"{name}/{label}", findings, input=args, got=call.shown())
        if live.profile == "search":
            calls = [{"operation": targets[n]} for n in HIDDEN_PROBES]
            mark = log.mark()
            key = await live.batch_key()
            call = await restricted.call("batch", {key: [*calls, {"operation": "/x/y"}]})
            document, _ = call.document()
            items, _ = readings.batch_items(document)  # the array under any member at seed
            findings = []
            if items is None or len(items) != len(calls) + 1:
                findings.append(Finding(_REACHED, "no result per call", call.shown()))
            else:
                # each failed item's error, its code under any member at --level seed (seed
                # 003 names none: readings.call_error_code), §3.4's `error` at --level spec
                errors = [i.get("error") or {} for i in items[: len(calls)]]
                if live.level == "seed":
                    codes = [readings.call_error_code(e) for e in errors]
                else:
                    codes = [e.get("error") if isinstance(e, dict) else None for e in errors]
                if codes != [_FORBIDDEN] * len(calls):
                    findings.append(Finding(_REACHED, f"codes {codes}", items[:2]))
            reached = [e for e in log.since(mark) if e.get("name") in HIDDEN_PROBES]
            if reached:
                findings.append(Finding(_REACHED, "", reached[:2]))
            emit.judge("batch", findings, input={"calls": calls}, got=call.shown())


# ------------------------------------------------------------------ leaks


def _same_answer(hidden: CallResult, absent: CallResult) -> list[Finding]:
    """A hidden tool's answer must be the absent one's (the caller's own input aside)."""
    a, _ = payload_of(hidden)
    b, _ = payload_of(absent)
    if a is None or b is None:
        return [Finding(_LEAK, "not both error payloads", [hidden.shown(), absent.shown()])]
    keep = ("error", "message", "details")
    if {k: a.get(k) for k in keep} != {k: b.get(k) for k in keep}:
        return [Finding(_LEAK, "", {"hidden": a, "absent": b})]
    return []


async def _no_leak(live: Live, emit: Emit) -> None:
    token = _restricted_token(live)
    targets = await _targets(live)
    async with live.as_token(token) as restricted:
        for name in HIDDEN_PROBES:
            for label, tool, args in _attempts(live.profile, targets[name]):
                hidden = await restricted.call(tool, args)
                absent_args = {**args, **_address(live.profile, targets[_ABSENT])}
                absent = await restricted.call(tool, absent_args)
                emit.judge(
                    f"{name}/{label}",
                    _same_answer(hidden, absent),
                    input=[args, absent_args],
                    got=[hidden.shown(), absent.shown()],
                )
        names, texts = await _shown(restricted)
    everything = {t.name for t in live.fixture}
    hidden_names = sorted(everything - set(RESTRICTED_VISIBLE))
    joined = "\n".join(texts)
    found = [n for n in hidden_names if re.search(rf"(?<![\w.-]){re.escape(n)}(?![\w.-])", joined)]
    emit.judge("names", [Finding(_NAMED, "", found)] if found else None, got=found)
    numbers = sorted({int(n) for n in _NUMBER.findall(joined)})
    too_big = [n for n in numbers if n > len(names)]
    emit.judge("counts", [Finding(_COUNTED, "", too_big)] if too_big else None, got=numbers)


def _address(profile: str, target: str) -> dict[str, str]:
    return {"operation": target} if profile == "search" else {"tool_id": target}


async def _list_changed(live: Live, emit: Emit) -> None:
    token = _restricted_token(live)
    owner_ids = await live.fixture_ids()

    async with (
        live.as_token(live.target.token or "", live.target.protocol) as own,
        live.as_token(token) as restricted,
    ):
        await restricted.session.list_tools(live.options.timeout)

        async def add() -> CallResult:
            call = await own.call("tool_execute", {"tool_id": owner_ids[ADD_TOOL], "args": {}})
            return call

        told: list[tuple[CallResult, str | None]] = []

        async def add_and_wait() -> CallResult:
            told.append(await own.session.expect_list_changed(add, timeout))
            return told[0][0]

        timeout = live.options.list_changed_timeout
        call, restricted_missing = await restricted.session.expect_list_changed(
            add_and_wait, _QUIET
        )
        own_missing = told[0][1] if told else "never triggered"
    findings = []
    if own_missing:
        findings.append(Finding(_NOT_SHOWN, f"the run's own identity: {own_missing}", None))
    if restricted_missing is None:
        findings.append(Finding(_TOLD, "", {"added": ADD_TOOL}))
    emit.judge("", findings, input={"tool": ADD_TOOL}, got=call.shown())


async def _sessions(live: Live, emit: Emit) -> None:
    token = _restricted_token(live)
    opened = await _post(live, live.target.token, INITIALIZE)
    session = opened.headers.get("mcp-session-id")
    if not session:
        raise NoFact("the IUT opened no session for a handshake-era client")
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    stolen = await _post(live, token, listing, **{"Mcp-Session-Id": session})
    unknown = await _post(live, token, listing, **{"Mcp-Session-Id": "0" * 32})
    same = (stolen.status_code, stolen.text) == (unknown.status_code, unknown.text)
    problem = None if same and stolen.status_code >= 400 else [Finding(_SESSION, "", None)]
    got = {"theirs": [stolen.status_code, stolen.text[:QUOTED_MAX]], "unknown": unknown.status_code}
    emit.judge("", problem, got=got)


async def _artifacts(live: Live, emit: Emit) -> None:
    token = _restricted_token(live)
    made = await live.fixture_call(BIG_TEXT)
    document, _ = made.document()
    artifacts = document.get("artifacts") if isinstance(document, dict) else None
    if not isinstance(artifacts, list) or not artifacts or not isinstance(artifacts[0], dict):
        raise NoFact(f"tool_execute of {BIG_TEXT} gave no artifact", made)
    handle = str(artifacts[0].get("handle"))
    unknown = "art_" + "0" * 16
    async with live.as_token(token) as restricted:
        theirs = await restricted.call("tool_view", {"handle": handle})
        absent = await restricted.call("tool_view", {"handle": unknown})
    if not theirs.is_error:
        findings = [Finding(_ARTIFACT, "another identity read it", theirs.shown())]
    else:
        findings = expect_error(theirs, {ErrorCode.VIEW_FAILED.value})
        a, _ = payload_of(theirs)
        b, _ = payload_of(absent)
        shown_a = str((a or {}).get("message")).replace(handle, "H")
        if shown_a != str((b or {}).get("message")).replace(unknown, "H"):
            findings.append(Finding(_ARTIFACT, "", {"theirs": a, "unknown": b}))
    emit.judge("", findings, input={"handle": handle}, got=theirs.shown())


_ALL: Final = ("gateway", "transparent", "search")

FAMILIES: Final[list[Family]] = [
    Family(
        "access/unauthenticated",
        "server.access.unauthenticated",
        _unauthenticated,
        _ALL,
        summary="a request without a valid bearer token is refused: 401 with a Bearer challenge",
    ),
    Family(
        "access/expired",
        "server.access.expired",
        _expired,
        _ALL,
        summary="an expired token is refused like no token",
    ),
    Family(
        "access/visible",
        "server.access.visible",
        _visible,
        _ALL,
        summary="the restricted identity is shown exactly its tools",
    ),
    Family(
        "access/forbidden",
        "server.access.forbidden",
        _forbidden,
        _ALL,
        summary="a hidden tool is FORBIDDEN in every way of calling it; nothing reaches upstream",
    ),
    Family(
        "access/no-leak",
        "server.access.no_leak",
        _no_leak,
        _ALL,
        summary="a hidden tool answers as an absent one; no hidden name or count is shown",
        amended_by=("AM-ACCESS-NO-LEAK",),
        seed="AM-ACCESS-NO-LEAK",
    ),
    Family(
        "access/list-changed",
        "server.access.list_changed",
        _list_changed,
        ("transparent",),
        summary="list_changed reaches only identities whose visible catalog changed",
        amended_by=("AM-ACCESS-NO-LEAK",),
        seed="AM-ACCESS-NO-LEAK",
    ),
    Family(
        "access/sessions",
        "server.access.sessions",
        _sessions,
        _ALL,
        summary="another identity's session is answered as one that does not exist",
    ),
    Family(
        "access/artifacts",
        "server.access.artifacts",
        _artifacts,
        ("gateway",),
        summary="another identity's artifact is answered as an unknown handle",
        amended_by=("AM-ACCESS-NO-LEAK",),
        seed="AM-ACCESS-NO-LEAK",
    ),
]
