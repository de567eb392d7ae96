"""Layer-2 families of the aggregate profile (seeds 001 and 004): one namespaced MCP server in
front of two fixture upstreams in rich mode (AGG_SERVERS, each paging its lists by
AGG_FIXTURE_PAGE and naming itself in the shared call log).

Every expected answer comes from the fixture's own tables (its tools, prompts, resources) and
the seeds' naming (server__name; AM-RESOURCE-URI for server+uri). Families: namespacing,
routing, prompts, resources, pagination, broadcast partial failure, cancellation, capabilities,
and list_changed (an upstream's, then a registry change made by rewriting the IUT's config file,
which the kit can do only when it wrote that file).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import anyio
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from gatespec_conformance.fixtures.catalog import MCP_VALID_ONLY_PROFILES, fixture_tools
from gatespec_conformance.fixtures.rich import (
    BAD_PROMPT,
    NO_SCHEME_URI,
    PROMPTS,
    RELAY_TOOLS,
    RESOURCES,
    TEMPLATE,
)
from gatespec_conformance.live.checks import Emit, Family
from gatespec_conformance.live.payloads import payload_of
from gatespec_conformance.rules import SPEC, Finding, Rule
from gatespec_surface.errors import ErrorCode
from gatespec_surface.grammars import is_aggregate_name, is_resource_uri

if TYPE_CHECKING:
    from gatespec_conformance.live.client import CallResult
    from gatespec_conformance.live.facts import Live

__all__ = ["AGG_FIXTURE_PAGE", "AGG_IUT_PAGE", "AGG_MCP_VALID_ONLY", "AGG_SERVERS", "FAMILIES"]

AGG_SERVERS: Final = ("alpha", "beta")
# The aggregate fixtures serve only tool entries MCP's schema allows (MCP_VALID_ONLY_PROFILES).
AGG_MCP_VALID_ONLY: Final = "aggregate" in MCP_VALID_ONLY_PROFILES
AGG_FIXTURE_PAGE: Final = 7  # the fixtures' own pages: the IUT must follow their cursors
AGG_IUT_PAGE: Final = 10  # the page size the kit's own gatespec config asks for
EXTRA_SERVER: Final = "gamma"  # the server a registry change adds
_LISTING: Final = "AM-AGGREGATE-LISTING"
_URI: Final = "AM-RESOURCE-URI"
_ERRORS: Final = "AM-AGGREGATE-ERRORS"

# ------------------------------------------------------------------ what the fixtures offer


def _tool_shape(tool: dict[str, Any]) -> bool:
    """A tool MCP allows: an inputSchema object of type "object"."""
    schema = tool.get("inputSchema")
    return isinstance(schema, dict) and schema.get("type") == "object"


def expected_tools(server: str) -> tuple[list[str], set[str], set[str]]:
    """(the names the IUT must list, in the fixture's order; names it may list; names it must
    not list) for one fixture, by seed 004's server__name and AM-AGGREGATE-SEPARATOR."""
    required: list[str] = []
    optional: set[str] = set()
    forbidden: set[str] = set()
    served = fixture_tools(mcp_valid_only=AGG_MCP_VALID_ONLY)
    either = {t.name for t in served if t.expect == "either"}
    for tool in [t.wire() for t in served] + list(RELAY_TOOLS):
        name = f"{server}__{tool['name']}"
        if not is_aggregate_name(name):
            forbidden.add(name)
        elif tool["name"] in either:
            optional.add(name)
        elif _tool_shape(tool):
            required.append(name)
    return required, optional, forbidden


def expected_prompts(server: str) -> list[str]:
    return [f"{server}__{p['name']}" for p in PROMPTS if p["name"] != BAD_PROMPT]


def expected_resources(server: str) -> list[str]:
    return [f"{server}+{r['uri']}" for r in RESOURCES if r["uri"] != NO_SCHEME_URI]


# ------------------------------------------------------------------ rules

_LISTED: Final = Rule(
    "an upstream entry is missing from the merged list, as server__name",
    ("AGG-TOOLS-LIST-UNIFIED", "AGG-TOOLS-LIST-BROADCAST", "ROUTE-DOUBLE-UNDERSCORE-NAMES"),
)
_UNNAMESPACED: Final = Rule(
    "a listed name carries no server__ prefix", ("ROUTE-DOUBLE-UNDERSCORE-NAMES",)
)
_UNSPLITTABLE: Final = Rule(
    "a name that cannot be split back is listed",
    ("AGG-UNOFFERED-NAMES-LISTED",),
    SPEC,
    amended_by=("AM-AGGREGATE-SEPARATOR",),
)
_TWICE: Final = Rule("a name is listed twice", ("AGG-SAME-NAME-DISAMBIGUATED",))
_SAME_NAME: Final = Rule(
    "one tool name of two servers is not listed under both server__ prefixes",
    ("AGG-SAME-NAME-DISAMBIGUATED", "ROUTE-DOUBLE-UNDERSCORE-NAMES"),
)
_NOT_ROUTED: Final = Rule(
    "the call did not reach the named server under its clean name",
    ("ROUTE-UNDERSCORE-PREFIX", "ROUTE-UPSTREAM-CLEAN-NAME"),
)
_NOT_REFUSED: Final = Rule("the request was not refused", ("ROUTE-NON-NAMESPACED-REJECTED",))
_CODE: Final = Rule(
    "the refusal does not carry the spec's code", levels=SPEC, amended_by=(_ERRORS,)
)
_LEAKED: Final = Rule("a refused request reached an upstream", ("ROUTE-NON-NAMESPACED-REJECTED",))


def names_of(entries: list[dict[str, Any]], key: str = "name") -> list[str]:
    return [str(e.get(key)) for e in entries]


async def list_entries(live: Live, method: str) -> list[dict[str, Any]]:
    return await live.session.list_all(method, live.options.timeout)


def _server_entries(log: list[dict[str, Any]], server: str) -> list[tuple[Any, Any]]:
    return [(e.get("name"), e.get("arguments")) for e in log if e.get("server") == server]


# ------------------------------------------------------------------ namespacing


async def _namespacing(live: Live, emit: Emit) -> None:
    names = names_of(await list_entries(live, "tools/list"))
    listed = set(names)
    for server in AGG_SERVERS:
        required, _, forbidden = expected_tools(server)
        findings = []
        missing = [n for n in required if n not in listed]
        if missing:
            # the example is what the IUT did list under this server (the report's "got")
            got = [n for n in names if n.startswith(f"{server}__")][:20]
            findings.append(Finding(_LISTED, f"{len(missing)} missing: {missing[:5]}", got))
        shown = sorted(forbidden & listed)
        if shown:
            findings.append(Finding(_UNSPLITTABLE, f"listed: {shown[:5]}", shown[:5]))
        emit.judge(server, findings, input="tools/list", expected=required[:20], got=names[:40])
    findings = []
    bare = [n for n in names if "__" not in n]
    if bare:
        findings.append(Finding(_UNNAMESPACED, f"{bare[:5]}", bare[:5]))
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        findings.append(Finding(_TWICE, f"{twice[:5]}", twice[:5]))
    if not {"alpha__echo", "beta__echo"} <= listed:
        echoes = sorted(n for n in listed if n.endswith("__echo"))
        findings.append(Finding(_SAME_NAME, f"alpha__echo and beta__echo: got {echoes}", echoes))
    emit.judge("one-list", findings, input="tools/list", got=names[:40])


# ------------------------------------------------------------------ routing


def refused(call: CallResult, code: str) -> list[Finding]:
    if call.result is not None and not call.result.is_error:
        return [Finding(_NOT_REFUSED, "it succeeded", call.shown())]
    if call.result is None and not call.rpc_error:
        return [Finding(_NOT_REFUSED, call.error or "no answer", call.shown())]
    payload, _ = payload_of(call) if call.result is not None else (None, [])
    got = payload.get("error") if isinstance(payload, dict) else None
    return [] if got == code else [Finding(_CODE, f"expected {code}, got {got}", call.shown())]


async def _routing(live: Live, emit: Emit) -> None:
    log = live.require_log()
    for server in AGG_SERVERS:
        mark = log.mark()
        args = {"text": f"to {server}", "times": 1}
        call = await live.call(f"{server}__echo", args)
        reached = _server_entries(await _settled(log, mark), server)
        problem = None
        if call.is_error or call.text != args["text"]:
            problem = [Finding(_NOT_ROUTED, f"answered {call.shown()}", call.shown())]
        elif ("echo", args) not in reached:
            problem = [Finding(_NOT_ROUTED, f"{server} logged {reached}", reached)]
        emit.judge(
            f"to-{server}", problem, input=f"{server}__echo", expected=("echo", args), got=reached
        )
    cases = (
        (
            "not-namespaced",
            "echo",
            ErrorCode.NOT_NAMESPACED.value,
            ("ROUTE-NON-NAMESPACED-REJECTED", "AGG-NO-SINGLE-SERVER-EXCEPTION"),
        ),
        (
            "unknown-server",
            f"{EXTRA_SERVER}__echo",
            ErrorCode.UNKNOWN_SERVER.value,
            ("ROUTE-UNKNOWN-SERVER",),
        ),
        (
            "invalid-format",
            "alpha__echo__twice",
            ErrorCode.NAME_INVALID.value,
            ("ROUTE-INVALID-NAMESPACE-FORMAT",),
        ),
        (
            "unknown-tool",
            "alpha__no_such_tool",
            ErrorCode.TOOL_NOT_FOUND.value,
            ("ROUTE-UNKNOWN-TOOL",),
        ),
    )
    for case, name, code, requirements in cases:
        mark = log.mark()
        call = await live.call(name, {"text": "x"})
        findings = [
            Finding(
                Rule(f.rule.cause, requirements, f.rule.levels, f.rule.amended_by),
                f.detail,
                f.example,
            )
            for f in refused(call, code)
        ]
        leaked = [e for e in await _settled(log, mark) if e.get("name") in ("echo", "no_such_tool")]
        if leaked:
            findings.append(Finding(Rule(_LEAKED.cause, requirements), f"{leaked}", leaked))
        emit.judge(case, findings, input=name, expected=code, got=call.shown())


async def _settled(log: Any, mark: int) -> list[dict[str, Any]]:
    """The log entries after `mark`, once the fixture has written them (it logs as it
    receives a call, before answering; a short grace covers the file write)."""
    await anyio.sleep(0.05)
    return log.since(mark)


# ------------------------------------------------------------------ prompts and resources

_PROMPTS: Final = Rule(
    "prompts/list is not every upstream's prompts, namespaced",
    ("AGG-PROMPTS-LIST-NAMESPACED", "AGG-RESOURCES-PROMPTS-NAMESPACED"),
)
_PROMPT_GET: Final = Rule(
    "prompts/get did not answer the named server's prompt", ("AGG-PROMPTS-GET-ROUTED",)
)
_RESOURCES: Final = Rule(
    "resources/list or resources/templates/list is not every upstream's, namespaced",
    ("AGG-RESOURCES-LIST", "AGG-RESOURCE-URI-NAMESPACED"),
    SPEC,
    amended_by=(_URI,),
)
_READ: Final = Rule(
    "resources/read did not answer the named server's resource under the URI asked for",
    ("AGG-RESOURCES-READ-ROUTED", "AGG-RESOURCE-URI-NAMESPACED"),
    SPEC,
    amended_by=(_URI,),
)


async def _prompts(live: Live, emit: Emit) -> None:
    names = names_of(await list_entries(live, "prompts/list"))
    want = [n for s in AGG_SERVERS for n in expected_prompts(s)]
    problem = None if sorted(names) == sorted(want) else [Finding(_PROMPTS, f"got {names}", names)]
    emit.judge("list", problem, input="prompts/list", expected=want, got=names)
    client = live.session.client
    assert client is not None
    try:
        got = await client.get_prompt("beta__greet", {"name": "Kit"})
        text = getattr(got.messages[0].content, "text", None) if got.messages else None
    except (MCPError, ValidationError) as exc:
        text = f"error: {exc}"
    problem = None if text == "Hello, Kit!" else [Finding(_PROMPT_GET, f"got {text!r}", text)]
    emit.judge("get", problem, input="beta__greet", expected="Hello, Kit!", got=text)


async def _resources(live: Live, emit: Emit) -> None:
    resources = names_of(await list_entries(live, "resources/list"), "uri")
    templates = names_of(await list_entries(live, "resources/templates/list"), "uriTemplate")
    want = [u for s in AGG_SERVERS for u in expected_resources(s)]
    want_templates = [f"{s}+{TEMPLATE['uriTemplate']}" for s in AGG_SERVERS]
    findings = []
    if sorted(resources) != sorted(want):
        findings.append(Finding(_RESOURCES, f"resources {resources}", resources))
    if sorted(templates) != sorted(want_templates):
        findings.append(Finding(_RESOURCES, f"templates {templates}", templates))
    if not all(is_resource_uri(u) for u in [*resources, *templates]):
        findings.append(Finding(_RESOURCES, "a URI is not server+uri", resources))
    emit.judge(
        "list",
        findings,
        input="resources/list",
        expected=want + want_templates,
        got=resources + templates,
    )
    client = live.session.client
    assert client is not None
    uri = "beta+fixture://item/9"
    try:
        read = await client.read_resource(uri)
        got = [(str(c.uri), getattr(c, "text", None)) for c in read.contents]
    except (MCPError, ValidationError) as exc:
        got = [("error", str(exc))]
    want_read = [(uri, "item 9")]
    problem = None if got == want_read else [Finding(_READ, f"got {got}", got)]
    emit.judge("read", problem, input=uri, expected=want_read, got=got)


# ------------------------------------------------------------------ pagination

_PAGES: Final = Rule(
    "an upstream's later pages are missing", ("AGG-LIST-PAGINATION", "REGISTRY-ADD-SERVER")
)
_CURSOR: Final = Rule(
    "a cursor the IUT never issued is not refused as invalid params",
    ("AGG-LIST-PAGINATION",),
    SPEC,
    amended_by=(_LISTING,),
)


async def _pagination(live: Live, emit: Emit) -> None:
    names = set(names_of(await list_entries(live, "tools/list")))
    for server in AGG_SERVERS:
        required, _, _ = expected_tools(server)
        last_page = required[-AGG_FIXTURE_PAGE:]  # on the fixture's last pages
        missing = [n for n in last_page if n not in names]
        # the example (the report's "got") is what the IUT listed under this server
        got = sorted(n for n in names if n.startswith(f"{server}__"))[:30]
        problem = [Finding(_PAGES, f"missing {missing}", got)] if missing else None
        emit.judge(f"upstream-cursors/{server}", problem, expected=last_page, got=got)
    try:
        await live.session.page("tools/list", "bm90LWEtY3Vyc29yLW9mLXlvdXJz")
        problem = [Finding(_CURSOR, "it answered a page", None)]
    except MCPError as exc:
        problem = None if exc.code == -32602 else [Finding(_CURSOR, f"code {exc.code}", exc.code)]
    emit.judge("unknown-cursor", problem, input="tools/list cursor=bm90...", expected=-32602)


# ------------------------------------------------------------------ broadcast partial failure

_PARTIAL: Final = Rule(
    "the answer is not the other upstreams' entries without the failing one",
    ("AGG-BROADCAST-PARTIAL-FAILURE",),
    SPEC,
    amended_by=(_LISTING,),
)
_REPORTED: Final = Rule(
    "the failing upstream is not reported to the client (notifications/message)",
    ("AGG-BROADCAST-PARTIAL-FAILURE",),
    SPEC,
    amended_by=(_LISTING,),
)


async def _partial(live: Live, emit: Emit) -> None:
    await live.call("beta__break_listing", {})
    seen = len(live.session.logs)
    try:
        names = names_of(await list_entries(live, "tools/list"))
    except (MCPError, ValidationError) as exc:
        names = [f"error: {exc}"]
    finally:
        await live.call("beta__fix_listing", {})
    required, _, _ = expected_tools("alpha")
    findings = []
    if not set(required) <= set(names) or any(n.startswith("beta__") for n in names):
        findings.append(Finding(_PARTIAL, f"got {names[:8]}", names[:8]))
    await anyio.sleep(0.1)
    reports = [str(m.data) for m in live.session.logs[seen:]]
    if not any("beta" in r for r in reports):
        findings.append(Finding(_REPORTED, f"log messages: {reports}", reports))
    emit.judge(
        "", findings, input="tools/list with beta failing", expected=required[:10], got=names[:20]
    )


# ------------------------------------------------------------------ cancellation

_CANCELLED: Final = Rule(
    "the upstream request was not cancelled",
    ("RELAY-CANCEL",),
    SPEC,
    amended_by=("AM-UPSTREAM-RELAY",),
)


async def _cancellation(live: Live, emit: Emit) -> None:
    log = live.require_log()
    mark = log.mark()
    call = await live.call("alpha__slow", {"seconds": 60}, timeout=1.0)  # the client gives up
    want = {"server": "alpha", "name": "slow", "arguments": {"cancelled": True}}
    found = False
    with anyio.move_on_after(10):
        while not found:
            found = any({k: e.get(k) for k in want} == want for e in log.since(mark))
            await anyio.sleep(0.1)
    problem = (
        None if found else [Finding(_CANCELLED, "alpha logged no cancellation", log.since(mark))]
    )
    emit.judge(
        "", problem, input="alpha__slow, cancelled after 1 s", expected=want, got=call.shown()
    )


# ------------------------------------------------------------------ capabilities

_PROMPTS_RESOURCES: Final = Rule(
    "prompts and resources are not advertised", ("TRANSPORT-ADVERTISE-CAPABILITIES",)
)
_OFFERED: Final = Rule(
    "a capability the upstreams offer together is not advertised",
    ("TRANSPORT-ADVERTISE-CAPABILITIES",),
    SPEC,
    amended_by=("AM-AGGREGATE-CAPABILITIES",),
)


async def _advertised(client: Any) -> Any:
    """The capabilities the IUT advertises. A 2026-07-28 client started in that mode (the
    kit's --protocol 2026-07-28: mcp.Client(mode="2026-07-28")) adopts a synthesized discover
    result without asking the server, so the kit asks server/discover itself; a handshake-era
    session has them from initialize."""
    import mcp_types as types
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
        raw = await client.session.send_discover(client.protocol_version)
        return types.DiscoverResult.model_validate(raw).capabilities
    return client.server_capabilities


async def _capabilities(live: Live, emit: Emit) -> None:
    client = live.session.client
    assert client is not None
    caps = await _advertised(client)
    got = caps.model_dump(by_alias=True, exclude_none=True) if caps is not None else {}
    findings = []
    if "prompts" not in got or "resources" not in got:
        findings.append(Finding(_PROMPTS_RESOURCES, f"{sorted(got)}", got))
    offered = {"completions", "logging", "tools"}
    if not offered <= set(got) or not got.get("resources", {}).get("subscribe"):
        findings.append(Finding(_OFFERED, f"{got}", got))
    emit.judge("", findings, expected=sorted(offered | {"prompts", "resources"}), got=got)


# ------------------------------------------------------------------ the families

_AGG: Final = ("aggregate",)


def aggregate_family(key: str, run: Any, **kw: Any) -> Family:
    check_id = "server.aggregate." + key.replace("/", ".").replace("-", "_")
    return Family(key, check_id, run, profiles=_AGG, **kw)


# The registry change (registry_change.py) runs after these: it changes the IUT's servers.
FAMILIES: Final[list[Family]] = [
    aggregate_family(
        "capabilities",
        _capabilities,
        via_requirements=("TRANSPORT-ADVERTISE-CAPABILITIES",),
        summary="prompts, resources and what the upstreams offer together are advertised",
    ),
    aggregate_family(
        "namespacing",
        _namespacing,
        via_requirements=(
            "AGG-TOOLS-LIST-UNIFIED",
            "AGG-TOOLS-LIST-BROADCAST",
            "AGG-SAME-NAME-DISAMBIGUATED",
            "ROUTE-DOUBLE-UNDERSCORE-NAMES",
            "AGG-UNOFFERED-NAMES-LISTED",
        ),
        summary="every upstream tool once, as server__tool; unsplittable names left out",
    ),
    aggregate_family(
        "routing",
        _routing,
        via_requirements=(
            "ROUTE-UNDERSCORE-PREFIX",
            "ROUTE-UPSTREAM-CLEAN-NAME",
            "ROUTE-NON-NAMESPACED-REJECTED",
            "AGG-NO-SINGLE-SERVER-EXCEPTION",
            "ROUTE-UNKNOWN-SERVER",
            "ROUTE-INVALID-NAMESPACE-FORMAT",
            "ROUTE-UNKNOWN-TOOL",
        ),
        amended_by=(_ERRORS,),
        summary="calls reach the named server under their clean names; bad names are refused",
    ),
    aggregate_family(
        "prompts",
        _prompts,
        via_requirements=(
            "AGG-PROMPTS-LIST-NAMESPACED",
            "AGG-PROMPTS-GET-ROUTED",
            "AGG-RESOURCES-PROMPTS-NAMESPACED",
        ),
    ),
    aggregate_family(
        "resources",
        _resources,
        via_requirements=(
            "AGG-RESOURCES-LIST",
            "AGG-RESOURCES-READ-ROUTED",
            "AGG-RESOURCE-URI-NAMESPACED",
        ),
        amended_by=(_URI,),
        seed="AM-RESOURCE-URI: no seed says how a URI carries its server",
    ),
    aggregate_family(
        "pagination",
        _pagination,
        via_requirements=("AGG-LIST-PAGINATION", "REGISTRY-ADD-SERVER"),
    ),
    aggregate_family(
        "broadcast-partial",
        _partial,
        via_requirements=("AGG-BROADCAST-PARTIAL-FAILURE",),
        amended_by=(_LISTING,),
        seed="AM-AGGREGATE-LISTING: the seeds do not say what a failing upstream does to a list",
    ),
    aggregate_family(
        "cancellation",
        _cancellation,
        via_requirements=("RELAY-CANCEL",),
        amended_by=("AM-UPSTREAM-RELAY",),
        seed="AM-UPSTREAM-RELAY: the seeds do not relay a client's cancel",
    ),
]
