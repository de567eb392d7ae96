"""Layer 2: live MCP checks of a running gateway (the implementation under test, IUT).

    gatespec conformance server --profile gateway|transparent [options] [--url URL | -- COMMAND...]

The kit connects as an MCP client (official SDK) and checks the profile's live surface against
the generated package: meta-tools and schemas (`descriptors`), cards (`validators`,
`render`, budgets counted with cl100k_base), paths (`strategies`, vectors), tool ids
(`parsers.make_tool_id`), error payloads (`models.ErrorPayload`). The IUT fronts the fixture
upstream (`fixtures.upstream`), whose catalog the kit knows and whose call log proves what
reached upstream. docs/conformance.md ("Live MCP checks") describes how to run it.

A stdio COMMAND may hold placeholders, expanded before it starts (and exported as
environment variables): {fixture_command} (the fixture's command line, shell-quoted),
{call_log}, {mcp_config} (an mcpServers JSON file fronting the fixture) and {python}.
"""

from __future__ import annotations

import json
import shlex
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from gatespec_conformance.fixtures.catalog import MCP_VALID_ONLY_PROFILES
from gatespec_conformance.fixtures.upstream import ENV_TOOLS, ENV_WELL_FORMED_ONLY, fixture_argv
from gatespec_conformance.live import readings
from gatespec_conformance.live.access import FAMILIES as ACCESS
from gatespec_conformance.live.aggregate import (
    AGG_FIXTURE_PAGE,
    AGG_IUT_PAGE,
    AGG_MCP_VALID_ONLY,
    AGG_SERVERS,
)
from gatespec_conformance.live.aggregate import FAMILIES as AGGREGATE
from gatespec_conformance.live.browse import FAMILIES as BROWSE
from gatespec_conformance.live.cache_stable import FAMILIES as CACHE_STABLE
from gatespec_conformance.live.cards import FAMILIES as CARDS
from gatespec_conformance.live.checks import (
    SUITE,
    Emit,
    Family,
    family_requirements,
    rule_amendments,
    selected,
)
from gatespec_conformance.live.client import CallLog, IUTGone, LiveSession, Target
from gatespec_conformance.live.execute import FAMILIES as EXECUTE
from gatespec_conformance.live.facts import Live, LiveOptions, NoFact, NotGiven
from gatespec_conformance.live.registry_change import FAMILIES as REGISTRY_CHANGE
from gatespec_conformance.live.search import FAMILIES as SEARCH
from gatespec_conformance.live.surface import FAMILIES as SURFACE
from gatespec_conformance.report import (
    CheckResult,
    Example,
    Outcome,
    Progress,
    RequirementRef,
    Selector,
    amendments,
)
from gatespec_conformance.rules import foreign_seeds
from gatespec_surface import SPEC_HASH, SPEC_VERSION
from gatespec_surface.descriptors import PROFILES

__all__ = [
    "ENV_CALL_LOG",
    "ENV_FIXTURE_ARGV",
    "ENV_FIXTURE_COMMAND",
    "ENV_MCP_CONFIG",
    "PLACEHOLDERS",
    "SERVED",
    "ServerRun",
    "all_families",
    "expand_command",
    "fixture_files",
    "plan",
    "run_suite",
]

SERVED: Final = tuple(PROFILES)  # profiles layer 2 checks: every profile the spec defines
ENV_FIXTURE_COMMAND: Final = "GATESPEC_FIXTURE_COMMAND"
ENV_FIXTURE_ARGV: Final = "GATESPEC_FIXTURE_ARGV"
ENV_CALL_LOG: Final = "GATESPEC_CALL_LOG"
ENV_MCP_CONFIG: Final = "GATESPEC_MCP_CONFIG"
PLACEHOLDERS: Final = ("{fixture_command}", "{call_log}", "{mcp_config}", "{python}")
FIXTURE_KEY: Final = "fixture"  # the server key in the {mcp_config} file


def all_families() -> list[Family]:
    """Every family, in run order: listing, tree and cards, sessions, invocation, then the
    ones that disturb the IUT (a hang, an added tool); the search profile's; access control
    (last: it adds a tool as well); the aggregate profile's have their own order (the
    registry change last)."""
    return [
        *SURFACE,
        *BROWSE,
        *CARDS,
        *CACHE_STABLE,
        *EXECUTE,
        *SEARCH,
        *ACCESS,
        *AGGREGATE,
        *REGISTRY_CHANGE,
    ]


def plan(profile: str, selector: Selector, notes: list[str] | None = None) -> list[Family]:
    mine = [f for f in all_families() if profile in f.profiles]
    names = [f.name(profile) for f in mine]
    out = []
    for family in mine:
        refs = family_requirements(family, profile, notes)
        behind = amendments(refs, (*family.amended_by, *rule_amendments(family)))
        if selected(selector, family.name(profile), [r.id for r in refs], names, behind):
            out.append(family)
    return out


# ------------------------------------------------------------------ the IUT's command


@dataclass(frozen=True)
class FixtureFiles:
    call_log: Path
    argv: list[str]
    mcp_config: Path
    tools: int | None = None
    well_formed_only: bool = False

    def env(self) -> dict[str, str]:
        return {
            ENV_FIXTURE_COMMAND: shlex.join(self.argv),
            ENV_FIXTURE_ARGV: json.dumps(self.argv),
            ENV_CALL_LOG: str(self.call_log),
            ENV_MCP_CONFIG: str(self.mcp_config),
            ENV_TOOLS: str(self.tools or ""),
            ENV_WELL_FORMED_ONLY: "1" if self.well_formed_only else "",
        }


def fixture_env() -> dict[str, str]:
    """The environment a fixture entry of {mcp_config} carries: PYTHONPATH naming the folders
    this kit's own packages were imported from, so that an IUT starting its upstreams with a
    clean environment (the MCP SDK's default: PATH, HOME, …) runs the fixture the kit reads its
    expectations from, not another installed copy."""
    import os

    import gatespec_surface

    roots = [
        str(Path(module.__file__).resolve().parents[1])
        for module in (sys.modules["gatespec_conformance"], gatespec_surface)
        if module.__file__
    ]
    roots += [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {"PYTHONPATH": os.pathsep.join(dict.fromkeys(roots))}


def fixture_servers(
    call_log: str | Path, profile: str, tools: int | None = None, well_formed_only: bool = False
) -> dict[str, dict[str, Any]]:
    """The mcpServers entries fronting the fixture: one (key "fixture"), or for the aggregate
    profile two rich ones (AGG_SERVERS) sharing one call log, each naming itself in it and
    serving only tools MCP's Tool schema allows (MCP_VALID_ONLY_PROFILES, as the search
    profile's fixture does)."""
    if profile != "aggregate":
        argv = fixture_argv(
            call_log,
            tools=tools,
            well_formed_only=well_formed_only,
            mcp_valid_only=profile in MCP_VALID_ONLY_PROFILES,
        )
        return {FIXTURE_KEY: {"command": argv[0], "args": argv[1:], "env": fixture_env()}}
    out = {}
    for key in AGG_SERVERS:
        argv = fixture_argv(
            call_log,
            tools=tools,
            rich=True,
            page_size=AGG_FIXTURE_PAGE,
            name=key,
            mcp_valid_only=AGG_MCP_VALID_ONLY,
        )
        out[key] = {"command": argv[0], "args": argv[1:], "env": fixture_env()}
    return out


def fixture_files(
    directory: Path,
    call_log: Path | None = None,
    tools: int | None = None,
    well_formed_only: bool = False,
    profile: str = "gateway",
) -> FixtureFiles:
    """The call log path, the fixture's command and an mcpServers file fronting it."""
    directory.mkdir(parents=True, exist_ok=True)
    log = call_log or directory / "calls.jsonl"
    argv = fixture_argv(
        log,
        tools=tools,
        well_formed_only=well_formed_only,
        mcp_valid_only=profile in MCP_VALID_ONLY_PROFILES,
    )
    config = directory / "mcp.json"
    servers = fixture_servers(log, profile, tools, well_formed_only)
    config.write_text(json.dumps({"mcpServers": servers}, indent=1) + "\n")
    return FixtureFiles(log, argv, config, tools, well_formed_only)


def expand_command(command: Sequence[str], files: FixtureFiles) -> list[str]:
    """COMMAND with the placeholders replaced (plain replacement: other braces stay)."""
    values = {
        "{fixture_command}": shlex.join(files.argv),
        "{call_log}": str(files.call_log),
        "{mcp_config}": str(files.mcp_config),
        "{python}": sys.executable,
    }
    out = []
    for arg in command:
        for key, value in values.items():
            arg = arg.replace(key, value)
        out.append(arg)
    return out


# ------------------------------------------------------------------ running


@dataclass
class ServerRun:
    results: list[CheckResult] = field(default_factory=list)
    names: list[str] = field(default_factory=list)  # every name the run defines
    ran: list[Family] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Sized:
    """The IUT again, fronting a fixture of `tools` well-formed tools (--sizes)."""

    tools: int
    target: Target
    log: CallLog | None


async def run_suite(
    target: Target,
    options: LiveOptions,
    log: CallLog | None,
    selector: Selector,
    *,
    restarts: int = 2,
    progress_enabled: bool = True,
    sized: Sequence[Sized] = (),
) -> ServerRun:
    """Run the selected families against the IUT, then the size-dependent ones against it
    fronting fixtures of other sizes; never raises for IUT misbehaviour."""
    run = ServerRun()
    families = plan(options.profile, selector, run.notes)
    run.ran = families
    resized = [f for f in families if f.sized] if sized else []
    total = len(families) + len(resized) * len(sized)
    progress = Progress(f"{SUITE}/{options.profile}", total, enabled=progress_enabled)
    live: Live | None = None
    session: LiveSession | None = None
    gone = ""  # once set, the IUT is not asked again
    try:
        for family in families:
            refs = family_requirements(family, options.profile)
            emit = Emit(family, options.profile, refs, selector, run.results, options.level)
            start = len(run.results)
            skip = seed_skip(family, refs, options)
            if skip:
                emit.skip("", skip)
                _advance(progress, emit, start)
                continue
            if not gone and live is not None and live.session.gone:
                why = live.session.gone
                await _close(session)
                live = session = None
                if restarts <= 0:
                    gone = f"the IUT's connection ended ({why}); --restarts is used up"
                else:
                    restarts -= 1
                    run.notes.append(f"restarted the IUT before {family.key}: {why}")
            if not gone and live is None:
                try:
                    session = LiveSession(target, connect_timeout=options.connect_timeout)
                    await session.__aenter__()
                except IUTGone as exc:  # never retried: a restart would fail the same way
                    session = None
                    gone = str(exc)
                    run.results.append(start_failure(options.profile, "", target, gone))
                else:
                    live = Live(target, options, session, log)
                    if "implementation" not in run.info:  # the first start: say it once
                        await _note_profile(live, run)
                    run.info.setdefault("implementation", _implementation(session))
                    run.info.setdefault("protocol", session.protocol_version)
            if gone or live is None:
                emit.skip("", f"not run: {gone}")
            else:
                await _run_family(family, live, emit)
            _advance(progress, emit, start)
        _keep_stderr(session, run, "")
        await _close(session)
        session = None
        for size in sized if resized else ():
            await _run_sized(size, resized, options, selector, run, progress)
    finally:
        progress.close()
        await _close(session)
    for family in families:
        name = family.name(options.profile)
        run.names += [name, name + "/*"]  # "/*": any case of it, for expected-failure globs
        if family.draw is not None:
            drawn = family.draw(options.seed, options.max_examples)
            run.names += [f"{name}/{d.case}" for d in drawn]
    run.names += [r.name for r in run.results]
    return run


def profile_hint(profile: str, listed: Sequence[str]) -> str | None:
    """When the tools an IUT lists are another profile's surface, one line saying so: every
    family of the expected profile would fail with no word of why (issue 24)."""
    names = set(listed)
    expected = PROFILES[profile].meta_tools
    if expected and set(expected) <= names:
        return None
    served = [p for p in PROFILES.values() if p.meta_tools and set(p.meta_tools) <= names]
    if not served and (not expected or not names or names & set(expected)):
        return None  # no other surface recognised, or a partial one: the families say what
    want = (
        f"the {profile} profile's meta-tools are {', '.join(expected)}"
        if expected
        else f"the {profile} profile lists the upstream tools namespaced (server__tool), "
        "no meta-tools"
    )
    if served:
        other = served[0]
        seen = f"it lists {', '.join(other.meta_tools)}: the {other.name} profile's meta-tools"
    else:
        more = ", …" if len(names) > 5 else ""
        seen = f"it lists none of them ({', '.join(sorted(names)[:5])}{more})"
    return (
        f"the IUT does not serve the {profile} profile: {want}; {seen}. Compare its tool "
        f"surface with the {profile} profile's: is it started with that profile (for gatespec: "
        f"--profile {profile} or gateway.profile in its config)?"
    )


async def _note_profile(live: Live, run: ServerRun) -> None:
    """The profile hint as the run's first note, and on stderr (it explains every failure)."""
    try:
        listed = [t.name for t in await live.tools()]
    except Exception:  # noqa: BLE001 - a family reports a listing that fails, with its reason
        return
    hint = profile_hint(live.options.profile, listed)
    if hint is not None:
        run.notes.insert(0, hint)
        print(f"gatespec-conformance: {hint}", file=sys.stderr, flush=True)


async def _run_sized(
    size: Sized,
    families: Sequence[Family],
    options: LiveOptions,
    selector: Selector,
    run: ServerRun,
    progress: Progress,
) -> None:
    """The size-dependent families on one more IUT session; cases are named tools=N."""
    resized = replace(options, tools=size.tools, well_formed_only=True, namespace=options.namespace)
    gone = ""
    session: LiveSession | None = None
    try:
        try:
            opened = LiveSession(size.target, connect_timeout=options.connect_timeout)
            await opened.__aenter__()
            session = opened
        except IUTGone as exc:
            gone = str(exc)
            run.results.append(
                start_failure(options.profile, f"tools={size.tools}", size.target, gone)
            )
        live = Live(size.target, resized, session, size.log) if session is not None else None
        for family in families:
            refs = family_requirements(family, options.profile)
            emit = Emit(family, options.profile, refs, selector, run.results, options.level)
            emit.prefix = f"tools={size.tools}"
            start = len(run.results)
            skip = seed_skip(family, refs, options)
            if skip:
                emit.skip("", skip)
            elif live is None:
                emit.skip("", f"not run: {gone}")
            else:
                await _run_family(family, live, emit)
            _advance(progress, emit, start)
    finally:
        _keep_stderr(session, run, f" (tools={size.tools})")
        await _close(session)


def _keep_stderr(session: LiveSession | None, run: ServerRun, where: str) -> None:
    """A note with the tail of the IUT's stderr on a run it finished (warnings such as a
    tokenizer fallback; a crash's tail is in the failure that saw it)."""
    tail = session.stderr_tail() if session is not None else ""
    if tail:
        run.notes.append(f"the IUT's stderr{where} ends: {tail}")


def start_failure(profile: str, prefix: str, target: Target, why: str) -> CheckResult:
    """The one failure of an IUT that cannot be started or reached: charged to no requirement
    (nothing was judged); every family is then skipped as "not run"."""
    name = "/".join(p for p in (SUITE, profile, prefix, "start") if p)
    return CheckResult(
        name,
        Outcome.FAIL,
        reason=f"the IUT could not be reached: {why}",
        example=Example({"target": target.describe()}, "an MCP handshake", why),
        group=name,
        blocking=True,
    )


def seed_skip(family: Family, refs: Sequence[RequirementRef], options: LiveOptions) -> str:
    """Why --level seed leaves a family out ("" when it runs it)."""
    if options.level != "seed":
        return ""
    if family.seed:
        return f"not judged at --level seed: {family.seed}"
    foreign = foreign_seeds([r.id for r in refs], options.profile)
    if foreign:
        return (
            f"not judged at --level seed: a requirement of seed {', '.join(foreign)}, which the "
            f"spec applies to the {options.profile} profile"
        )
    return ""


async def _run_family(family: Family, live: Live, emit: Emit) -> None:
    try:
        await family.run(live, emit)
    except NotGiven as exc:  # no call log, no tokens: not checkable here
        emit.skip("", str(exc))
    except NoFact as exc:  # quote what the IUT sent instead of it
        call = exc.call
        emit.result(
            "",
            Outcome.FAIL,
            f"could not run: {exc}",
            input={call.name: call.arguments} if call is not None else None,
            expected=None,
            got=readings.sent(call) if call is not None else str(exc)[: readings.SENT_MAX],
            unjudged=True,
        )
    except IUTGone as exc:
        emit.result("", Outcome.FAIL, f"the IUT's connection ended: {exc}", unjudged=True)
    except Exception as exc:  # one broken family must not end the run
        emit.result("", Outcome.FAIL, f"the check crashed: {type(exc).__name__}: {exc}")


def _advance(progress: Progress, emit: Emit, start: int) -> None:
    progress.advance_family(emit.sink[start:])


async def _close(session: LiveSession | None) -> None:
    if session is not None:
        await session.__aexit__(None, None, None)


def _implementation(session: LiveSession) -> str:
    client = session.client
    info = client.server_info if client is not None else None
    return f"{info.name} {info.version}".strip() if info is not None else "(anonymous)"


# ------------------------------------------------------------------ expected failures


def entry_filter(profile: str, ran: Sequence[Family]) -> Callable[[str], bool]:
    """Which expected-failure entries this run judges: those of this profile whose checks
    could have run. An entry for another profile, or for families that were deselected, is
    left alone (neither confirmed nor stale); one matching no family at all is judged, and
    reported stale."""
    ran_names = {f.name(profile) for f in ran}
    every = {f.name(p): f for f in all_families() for p in SERVED if p in f.profiles}

    def keep(pattern: str) -> bool:
        parts = pattern.split("/")
        if len(parts) > 1 and not _glob(profile, parts[1]):
            return False
        one = Selector([pattern])
        touched = [name for name in every if selected(one, name, (), every)]
        return not touched or any(name in ran_names for name in touched)

    return keep


def _glob(name: str, pattern: str) -> bool:
    import fnmatch

    return fnmatch.fnmatchcase(name, pattern)


def default_gatespec_command(
    profile: str,
    cache_stable: bool,
    directory: Path,
    tools: int | None = None,
    well_formed_only: bool = False,
) -> list[str]:
    """No COMMAND given: gatespec itself, fronting the fixture (short call timeout), started
    by its command line (the kit never imports it)."""
    config = directory / "gatespec.json"
    # gatespec expands ${VAR} in its config
    log = "${" + ENV_CALL_LOG + "}"
    gateway: dict[str, Any] = {
        "profile": profile,
        "call_timeout": 5,
        "refresh_interval": 0,
        "cache_stable": cache_stable,
    }
    if profile == "aggregate":  # pages smaller than the merged lists, so pagination shows
        gateway["page_size"] = AGG_IUT_PAGE
    body = {
        "mcpServers": fixture_servers(log, profile, tools, well_formed_only),
        "gateway": gateway,
    }
    config.write_text(json.dumps(body, indent=1) + "\n")
    return ["{python}", "-m", "gatespec.cli", "serve", "--config", str(config)]


def make_workdir() -> Path:
    return Path(tempfile.mkdtemp(prefix="gatespec-server-"))


def describe_run(run: ServerRun, options: LiveOptions, target: Target, started: float) -> None:
    run.info.update(
        {
            "profile": options.profile,
            "spec_version": SPEC_VERSION,
            "spec_hash": SPEC_HASH[:16],
            "seed": options.seed,
            "max_examples": options.max_examples,
            "cache_stable": options.cache_stable,
            "target": target.describe(),
            "seconds": round(time.monotonic() - started, 1),
        }
    )
    unbound = sorted({f.key for f in run.ran if not family_requirements(f, options.profile)})
    if unbound:
        run.notes.append(
            f"{len(unbound)} families evidence no requirement of the {options.profile} "
            f"profile: {', '.join(unbound)}"
        )
    run.notes.append(
        "requirement ids come from the kit's family mapping until requirements.yaml lists "
        "the server.* check ids (then from the spec alone)"
    )


assert set(SERVED) <= set(PROFILES)
