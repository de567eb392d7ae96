"""Generated invalid inputs against every meta-tool of every served profile (issue 12).

Each input comes from the generated strategies (gatespec_surface.strategies.invalid_args:
arguments the meta-tool's input schema rejects, one defect at a time), with extra properties
the schema does not know added (names and values built from the generated HOSTILE characters
and arbitrary JSON): that keeps the input invalid (it fixes no defect) and makes the space of
inputs large enough for 100,000 distinct ones per meta-tool. Each goes through the server layer's dispatch (MetaToolHandlers.call) of a runtime over the
embedded demo catalog. An answer is counted as:
- typed: an isError result whose error code is one the spec lets that meta-tool return
  (descriptors.META_TOOL_ERRORS);
- crash: anything else (an internal failure, an untyped or unlisted code, a success);
- unanswered: no answer within UNANSWERED_AFTER seconds.
The fast suite runs a few hundred per meta-tool; bench/fuzz.py runs 100,000.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Final

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from gatespec.cli.demo import default_config
from gatespec.runtime import ProxyRuntime
from gatespec.server import MetaToolHandlers
from gatespec_surface.descriptors import META_TOOL_ERRORS, PROFILES
from gatespec_surface.schemas import META_TOOL_INPUT_SCHEMAS
from gatespec_surface.strategies import HOSTILE, invalid_args

SERVED: Final = ("gateway", "transparent", "search")
UNANSWERED_AFTER: Final = 10.0


@dataclass
class Tally:
    inputs: int = 0
    typed: int = 0
    crashes: list[str] = field(default_factory=list)
    unanswered: int = 0
    codes: Counter[str] = field(default_factory=Counter)


def meta_tools() -> list[tuple[str, str]]:
    """(profile, meta-tool) for every served profile."""
    return [(p, tool) for p in SERVED for tool in PROFILES[p].meta_tools]


_TEXT: Final = st.text(st.sampled_from(HOSTILE) | st.characters(), max_size=24)
_SCALAR: Final = st.none() | st.booleans() | st.integers() | st.floats() | _TEXT
_JSON: Final = _SCALAR | st.lists(_SCALAR, max_size=3) | st.dictionaries(_TEXT, _SCALAR, max_size=2)


def inputs(tool: str) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """Invalid arguments for `tool`: a generated defect plus unknown extra properties."""
    known = set(META_TOOL_INPUT_SCHEMAS[tool].get("properties", {}))
    extra = st.dictionaries(_TEXT.filter(lambda k: k not in known), _JSON, max_size=2)
    return st.tuples(invalid_args(tool), extra).map(
        lambda pair: (pair[0][0], {**pair[1], **pair[0][1]})
    )


def _code(result: Any) -> str | None:
    payload = result.structured_content
    if payload is None:
        try:
            payload = json.loads(result.content[0].text)
        except (ValueError, IndexError, AttributeError):
            return None
    code = payload.get("error") if isinstance(payload, dict) else None
    return code if isinstance(code, str) else None


def run(profile: str, tool: str, count: int) -> Tally:
    """Send `count` generated invalid inputs to `tool` of `profile`; tally the answers."""
    loop = asyncio.new_event_loop()
    runtime = ProxyRuntime.from_config(default_config(), profile=profile)
    loop.run_until_complete(runtime.start())
    handlers = MetaToolHandlers(runtime)
    allowed = {code.value for code in META_TOOL_ERRORS[tool]}
    tally = Tally()

    async def answer(args: dict[str, Any]) -> Any:
        return await asyncio.wait_for(handlers.call("fuzz", tool, args), UNANSWERED_AFTER)

    @settings(
        max_examples=count,
        database=None,
        deadline=None,
        derandomize=True,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(inputs(tool))
    def one(case: tuple[str, dict[str, Any]]) -> None:
        what, args = case
        tally.inputs += 1
        try:
            result = loop.run_until_complete(answer(args))
        except TimeoutError:
            tally.unanswered += 1
            return
        code = _code(result)
        if result.is_error and code in allowed:
            tally.typed += 1
            tally.codes[code] += 1
        else:
            tally.crashes.append(f"{what}: {args!r:.200} -> {code} {result!r:.300}")

    try:
        one()
    finally:
        loop.run_until_complete(runtime.aclose())
        loop.close()
    return tally
