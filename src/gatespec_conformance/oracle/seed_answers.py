"""What the seeds themselves state of an answer whose exact form rests on an amendment.

At ``--level seed`` such a case is judged by these properties instead of being skipped: the
seed still requires something there, and a crash or a broken statement must show.

* truncate_description (seed 000 §2.1 "single-line summary", §2.4): an answer at all (no
  crash); one line; within the budget; verbatim when the text fits; otherwise a prefix that
  ends at one of §2.4's own terminators (".", "!", "?"), or a prefix followed by "…" (the hard
  cut, at most budget - 1 tokens before it). Where the cut falls exactly (a character or a byte
  boundary: AM-TRUNC-CHAR-BOUNDARY; which characters end a sentence: AM-SENTENCE-ENDS) is the
  amendments', and the seed's "longest" is not judged here.
* annotation_fields (seed 002 "MCP annotations are untrusted hints"): an answer at all (no
  crash on any hint, `costHint: null` included); cost_hint a float, equal to a costHint that
  is a finite number of at least 0; readOnlyHint true gives side_effects false and the tag
  "read-only", destructiveHint true the tag "destructive". The default of side_effects without
  readOnlyHint (AM-SIDE-EFFECTS-DEFAULT) and a negative or non-number costHint
  (AM-COST-HINT-RANGE) are the amendments'.

Each function returns (what the property says, a judge: the ok value -> why it is wrong or
None), the two fields of families.Property.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any, Final

from gatespec_conformance.tokens import count_tokens

__all__ = ["annotation_property", "seed_property", "seed_stringified", "truncation_property"]

SEED_TERMINATORS: Final = (".", "!", "?")  # seed 000 §2.4, as written
ELLIPSIS: Final = "\u2026"
_BREAKS: Final = ("\n", "\r")

Judged = tuple[str, Callable[[Any], str | None]]


def seed_property(function: str, inp: Mapping[str, Any]) -> Judged | None:
    """The seed's own property of `function`'s answer to `inp`, for the functions above."""
    if function == "truncate_description":
        return truncation_property(str(inp.get("text", "")), int(inp.get("budget_tokens", 0)))
    if function == "annotation_fields" and isinstance(inp.get("annotations"), Mapping):
        return annotation_property(inp["annotations"])
    return None


def _bases(text: str) -> list[str]:
    """The description a truncation may start from: as given, or made one line (the seed says
    the summary is single-line, not how a line break becomes one)."""
    out = [text, " ".join(text.split()), text.replace("\r\n", " ").replace("\n", " ")]
    return list(dict.fromkeys(out))


def truncation_property(text: str, budget: int) -> Judged:
    says = (
        f"one line of at most {budget} tokens: the text verbatim when it fits, else a prefix "
        "ending at '.', '!' or '?', or a prefix and '…' (seed 000 §2.1, §2.4)"
    )

    def judge(got: Any) -> str | None:
        if not isinstance(got, str):
            return f"not a string: {type(got).__name__}"
        if any(b in got for b in _BREAKS):
            return "more than one line (§2.1: a single-line summary)"
        tokens = count_tokens(got)
        bases = _bases(text)
        fitting = [
            b for b in bases if count_tokens(b) <= budget and not any(x in b for x in _BREAKS)
        ]
        if fitting:
            return None if got in fitting else "the text fits the budget but is not verbatim"
        if got.endswith(ELLIPSIS):
            head = got[: -len(ELLIPSIS)]
            if not any(b.startswith(head) for b in bases):
                return "the hard cut is not a prefix of the text"
            if count_tokens(head) > max(budget - 1, 0):
                return f"{count_tokens(head)} tokens before the ellipsis; at most budget - 1"
            return None
        if tokens > budget:
            return f"{tokens} tokens, over the budget of {budget}"
        if not any(b.startswith(got) for b in bases):
            return "not a prefix of the text"
        if got and not got.endswith(SEED_TERMINATORS):
            return "a cut that ends at none of §2.4's terminators and has no ellipsis"
        return None

    return says, judge


def annotation_property(annotations: Mapping[str, Any]) -> Judged:
    cost = annotations.get("costHint")
    exact: float | None = None
    if isinstance(cost, int | float) and not isinstance(cost, bool):
        if math.isfinite(cost) and cost >= 0:
            exact = float(cost)
    says = "side_effects a bool, tags a list, cost_hint a float (seed 002's table)"

    def judge(got: Any) -> str | None:
        if not isinstance(got, dict):
            return "not an object"
        side, tags, hint = got.get("side_effects"), got.get("tags"), got.get("cost_hint")
        if not isinstance(side, bool):
            return "side_effects is not a bool"
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            return "tags is not a list of strings"
        if not isinstance(hint, int | float) or isinstance(hint, bool):
            return f"cost_hint is not a float: {hint!r}"
        if exact is not None and hint != exact:
            return f"cost_hint {hint!r} is not the costHint {cost!r}"
        if annotations.get("readOnlyHint") is True and (side or "read-only" not in tags):
            return "readOnlyHint true: side_effects false and the tag read-only"
        if annotations.get("destructiveHint") is True and "destructive" not in tags:
            return "destructiveHint true: the tag destructive"
        return None

    return says, judge


# ------------------------------------------------------------------ stringified banned content

# Seed 000 §2.2: "A ChoiceCard MUST NOT carry, in any form (including stringified or nested
# inside tags): args_schema / inputSchema; output_schema / outputSchema; Examples or sample
# invocations; Free-form metadata maps (annotations, _meta, etc.); Server URLs or transport
# identifiers". Read as written, text stringifies one of them when it names such a field and
# gives it a value of that kind (a schema or a metadata map is a JSON object, examples a JSON
# object or array, a server or transport field a URL or a transport name). A bare JSON object
# with a "properties" key, a field name with no such value ("args_schema: x",
# '"input_schema"={...}') or a banned name given a value of another kind ("server_url: {...}"
# carries no URL) is budgets.yaml banned.stringified's wider reading, not the seed's.
_SCHEMA_NAMES: Final = (
    "args_schema",
    "inputSchema",
    "input_schema",
    "output_schema",
    "outputSchema",
)
_MAP_NAMES: Final = ("annotations", "_meta", "metadata")
_EXAMPLE_NAMES: Final = ("examples", "example")
_NAMES: Final = "|".join(re.escape(n) for n in (*_SCHEMA_NAMES, *_MAP_NAMES, *_EXAMPLE_NAMES))
_NAMED: Final = re.compile(rf"""["']?({_NAMES})["']?\s*[:=]\s*""")
# a server URL or transport identifier given to a field that names one
_TRANSPORT: Final = re.compile(
    r"""["']?(server_url|url|transport|command)["']?\s*[:=]\s*["']?"""
    r"""([a-z][a-z0-9+.-]*://\S+|stdio|sse|streamable-http|websocket)""",
    re.IGNORECASE,
)


def seed_stringified(text: str) -> str | None:
    """The §2.2 field `text` carries stringified, as the seed itself words the ban (see above),
    or None."""
    decoder = json.JSONDecoder()
    for found in _NAMED.finditer(text):
        try:
            value, _end = decoder.raw_decode(text, found.end())
        except json.JSONDecodeError:
            continue
        name = found.group(1)
        if name in _EXAMPLE_NAMES and isinstance(value, dict | list):
            return name
        if isinstance(value, dict):
            return name
    found_transport = _TRANSPORT.search(text)
    return found_transport.group(1) if found_transport else None
