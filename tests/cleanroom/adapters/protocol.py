"""The kit's layer-1 adapter loop (docs/conformance.md, "The adapter protocol"): one JSON
request a line on stdin, one answer a line on stdout, flushed; `answer(function, input)` is
the adapter's own translation."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any


def serve(answer: Callable[[str, dict[str, Any]], dict[str, Any]]) -> None:
    for line in sys.stdin:
        request = json.loads(line)
        reply = {"id": request["id"], **answer(request["function"], request.get("input") or {})}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
