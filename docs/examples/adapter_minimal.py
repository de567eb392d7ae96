#!/usr/bin/env python3
"""A minimal layer-1 adapter, written the way one would for another language: no gatespec
import, standard library only (json, re, hashlib), about an hour's work.

It answers `grammar_match` for the five tool_id grammars and `hash8`, and says
{"unsupported": true} for everything else, which the kit reports as skipped:

    gatespec-conformance functions -- python3 docs/examples/adapter_minimal.py

The patterns below are copied from the spec by hand. That is exactly what drifts when the spec
is amended, and exactly what the kit then reports.
"""

import hashlib
import json
import re
import sys

# grammar -> (pattern for a full match, error code when it does not match)
GRAMMARS = {
    "namespace": (r"[a-z][a-z0-9_-]{0,63}", "CATALOG_ERROR"),
    "name": (r"[A-Za-z_][A-Za-z0-9_.-]{0,127}", "CATALOG_ERROR"),
    "version": (r"[A-Za-z0-9._-]{1,32}", "CATALOG_ERROR"),
    "hash8": (r"[0-9a-f]{8}", "CATALOG_ERROR"),
    "tool_id": (
        r"[a-z][a-z0-9_-]{0,63}:[A-Za-z_][A-Za-z0-9_.-]{0,127}"
        r"(?:@[A-Za-z0-9._-]{1,32})?(?:#[0-9a-f]{8})?",
        "CATALOG_ERROR",
    ),
}


def grammar_match(inp):
    if inp["grammar"] not in GRAMMARS:
        return {"unsupported": True}
    pattern, code = GRAMMARS[inp["grammar"]]
    # fullmatch, never search/match with "$": "$" also matches before a trailing newline.
    return {"ok": True} if re.fullmatch(pattern, inp["value"]) else {"error": code}


def hash8(inp):
    schema = inp["input_schema"] if isinstance(inp["input_schema"], dict) else {}
    props = schema.get("properties")
    required = schema.get("required")
    shape = {
        "properties": sorted(props) if isinstance(props, dict) else [],
        "required": sorted(required) if isinstance(required, list) else [],
    }
    canonical = (
        inp["upstream_name"] + "\n" + json.dumps(shape, sort_keys=True, separators=(",", ":"))
    )
    return {"ok": hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:8]}


FUNCTIONS = {"grammar_match": grammar_match, "hash8": hash8}


def answer(request):
    if request["function"] == "hello":
        return {"ok": {"implementation": "adapter_minimal 0.1", "spec_version": "0.1.0"}}
    function = FUNCTIONS.get(request["function"])
    return function(request["input"]) if function else {"unsupported": True}


for line in sys.stdin:
    request = json.loads(line)
    reply = {"id": request["id"], **answer(request)}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()  # the runner waits for each answer
