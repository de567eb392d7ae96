"""Layer-2 family of the aggregate profile's registry: an upstream's tools/list_changed, then
a registry change (a server added and one removed by a config edit), must reach the client
(seed 004; AM-REGISTRY-RELOAD), and tools/list must show each change."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

import anyio

from gatespec_conformance.live.checks import Emit, Family
from gatespec_conformance.rules import SPEC, Finding, Rule, charged_to
from gatespec_surface.errors import ErrorCode

if TYPE_CHECKING:
    from gatespec_conformance.live.client import CallResult
    from gatespec_conformance.live.facts import Live

from gatespec_conformance.live.aggregate import (
    AGG_SERVERS,
    EXTRA_SERVER,
    aggregate_family,
    list_entries,
    names_of,
    refused,
)

__all__ = ["FAMILIES"]


_CHANGED: Final = Rule(
    "no list_changed reached the client", ("TRANSPORT-LIST-CHANGED-NOTIFY", "REGISTRY-CHANGE-EVENT")
)
_AFTER: Final = Rule("tools/list does not show the change", ("REGISTRY-REFRESH-ON-LIST-CHANGED",))
_REGISTRY: Final = Rule(
    "the registry change is not served",
    ("REGISTRY-RELOAD", "REGISTRY-REMOVE-SERVER"),
    SPEC,
    amended_by=("AM-REGISTRY-RELOAD",),
)


async def _list_changed(live: Live, emit: Emit) -> None:
    timeout = live.options.list_changed_timeout
    call, why = await live.session.expect_list_changed(
        lambda: live.call("alpha__add_tool", {}), timeout
    )
    names = names_of(await list_entries(live, "tools/list"))
    findings = [Finding(_CHANGED, why, None)] if why else []
    if not any(n.startswith("alpha__added_") for n in names):
        findings.append(Finding(_AFTER, "no alpha__added_N listed", names[-5:]))
    emit.judge("upstream", findings, input="alpha__add_tool", got=call.shown())
    path = live.options.config_file
    if live.level == "seed":
        emit.skip(
            "registry",
            "not judged at --level seed: AM-REGISTRY-RELOAD (seed 001 defines addServer and "
            "removeServer, not what drives them while serving; the kit rewrites the config)",
        )
        return
    if path is None:
        emit.skip(
            "registry",
            "the kit did not write the IUT's config file (give no COMMAND, or one using {mcp_config})",
        )
        return
    original = path.read_text()
    doc = json.loads(original)
    servers = doc["mcpServers"]
    added = copy.deepcopy(servers[AGG_SERVERS[0]])
    args = added.get("args", [])
    if "--name" in args:
        args[args.index("--name") + 1] = EXTRA_SERVER
    doc["mcpServers"] = {AGG_SERVERS[0]: servers[AGG_SERVERS[0]], EXTRA_SERVER: added}
    try:
        call, why = await live.session.expect_list_changed(_rewrite(live, path, doc), timeout)

        def is_served(names: list[str]) -> bool:
            return f"{EXTRA_SERVER}__echo" in names and not any(
                n.startswith(f"{AGG_SERVERS[1]}__") for n in names
            )

        # A gateway may announce the removal before the added server has listed: the change
        # is served once a list shows both, within the same timeout.
        deadline = time.monotonic() + timeout
        names = names_of(await list_entries(live, "tools/list"))
        while not is_served(names) and time.monotonic() < deadline:
            await anyio.sleep(0.25)
            names = names_of(await list_entries(live, "tools/list"))
        gone = await live.call(f"{AGG_SERVERS[1]}__echo", {"text": "x"})
        findings = [Finding(_CHANGED, why, None)] if why else []
        served = is_served(names)
        if not served:
            findings.append(
                Finding(_REGISTRY, f"tools after the change: {sorted(names)[:10]}", names[:10])
            )
        findings += refused(gone, ErrorCode.UNKNOWN_SERVER.value)
        findings = [charged_to(f, "AM-REGISTRY-RELOAD") for f in findings]
        emit.judge(
            "registry", findings, input=f"beta removed, {EXTRA_SERVER} added", got=names[:20]
        )
    finally:
        await live.session.expect_list_changed(_rewrite(live, path, json.loads(original)), timeout)


def _rewrite(live: Live, path: Any, doc: dict[str, Any]) -> Callable[[], Awaitable[CallResult]]:
    async def trigger() -> CallResult:
        path.write_text(json.dumps(doc, indent=1) + "\n")
        return await live.call("alpha__echo", {"text": "config rewritten"})

    return trigger


FAMILIES: Final[list[Family]] = [
    aggregate_family(
        "list-changed",
        _list_changed,
        via_requirements=(
            "TRANSPORT-LIST-CHANGED-NOTIFY",
            "REGISTRY-CHANGE-EVENT",
            "REGISTRY-REFRESH-ON-LIST-CHANGED",
            "REGISTRY-RELOAD",
            "REGISTRY-REMOVE-SERVER",
        ),
        summary="an upstream's list change, then a registry change, reach the client",
    ),
]
