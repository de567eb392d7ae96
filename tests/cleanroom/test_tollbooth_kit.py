"""The kit at --level seed on tollbooth, a clean-room implementation of seeds 000/002
(tests/cleanroom/README.md): every failure it reports is a breach of a seed sentence, listed
below with that sentence; everything else passes, through our layer-1 adapter and over the
implementation's own MCP server in both of its profiles."""

from __future__ import annotations

from pathlib import Path

import pytest

from gatespec_conformance import DEFAULT_MAX_EXAMPLES, DEFAULT_SIZES
from tests.cleanroom.harness import failures, run_functions, run_server

# The whole kit, as an author of another implementation runs it: every drawn case and every
# fixture size.
WHOLE = ["--max-examples", str(DEFAULT_MAX_EXAMPLES), "--sizes", ",".join(map(str, DEFAULT_SIZES))]

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

# Seed 000 §2.2: "A ChoiceCard MUST NOT carry, in any form (including stringified or nested
# inside tags): args_schema / inputSchema ... Free-form metadata maps (annotations, _meta,
# etc.) ... Server URLs or transport identifiers". Tollbooth's card validator never reads the
# description, and its cards copy the upstream's description: a description that spells out a
# schema, a metadata map or a server URL reaches the client.
STRINGIFIED = """\
functions/validate_card/*stringified* :: expected error CATALOG_ERROR, got success
"""
LEAKY = {
    "gateway": "server/gateway/cards/banned/*leaky_description* :: banned content\n",
    "transparent": "server/transparent/stripped/description/*leaky_description* :: banned content\n",
}
# Seed 000 §2.3: "Single card | ≤ 60 tokens" (the target; a SHOULD). Tollbooth's own prompt
# line repeats a long tool name, so one card is over the target even with its description cut
# to "…".
TARGET = {
    "gateway": "server/gateway/cards/target/summarise:* :: the target is 60\n",
    "transparent": "",  # no cards: stripped entries carry a description only
}


def _unexpected(report: dict) -> list[tuple[str, str, tuple[str, ...]]]:
    return failures(report)


def test_layer1_functions(tmp_path: Path) -> None:
    status, report = run_functions(
        tmp_path,
        "tollbooth",
        "seed",
        expected_failures=STRINGIFIED,
        max_examples=str(DEFAULT_MAX_EXAMPLES),
    )
    assert _unexpected(report) == [] and report["stale"] == []
    assert status == 0
    passed = [c for c in report["checks"] if c["outcome"] == "pass"]
    assert len(passed) > 500  # the adapter answers most functions: this is no empty run


@pytest.mark.parametrize(
    ("profile", "extra"),
    [("gateway", ()), ("gateway", ("--cache-stable",)), ("transparent", ())],
    ids=["gateway", "gateway-cache-stable", "transparent"],
)
def test_layer2_profiles(tmp_path: Path, profile: str, extra: tuple[str, ...]) -> None:
    options = [*WHOLE, "--cache-stable"] if extra else WHOLE
    status, report = run_server(
        tmp_path,
        "tollbooth",
        profile,
        "seed",
        extra=extra,
        options=options,
        expected_failures=LEAKY[profile] + TARGET[profile],
    )
    assert _unexpected(report) == [] and report["stale"] == []
    assert status == 0
    ran = {c["name"].split("/")[2] for c in report["checks"] if c["outcome"] == "pass"}
    assert {"surface", "catalog", "execute", "errors"} <= ran
