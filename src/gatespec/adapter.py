"""The reference adapter: gatespec itself, speaking the layer-1 protocol on stdin/stdout.

    python -m gatespec.adapter

One JSON request per line in, one JSON answer per line out (docs/conformance.md). The runner
also computes its expected answers with `reference_answer`, so the kit and this adapter can
never disagree about what gatespec says.

`serve(answer)` is the loop without the answers: tests wrap `reference_answer` to build
deliberately broken adapters.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from typing import Any, Final, TextIO

from gatespec import __version__
from gatespec.tokens import count_tokens
from gatespec.truncate import truncate_description
from gatespec_surface import SPEC_VERSION
from gatespec_surface.errors import GatewayError
from gatespec_surface.vectors import FUNCTIONS, run_case

__all__ = [
    "IMPLEMENTATION",
    "KIT_FUNCTIONS",
    "Answer",
    "all_functions",
    "main",
    "reference_answer",
    "serve",
]

IMPLEMENTATION: Final = f"gatespec {__version__}"

Answer = dict[str, Any]  # {"ok": value} | {"error": CODE} | {"unsupported": True}

# Functions the kit adds to the generated FUNCTIONS: runtime algorithms with no vector file,
# whose answers only gatespec's own code can give (exact cl100k_base counts, §2.4 truncation).
KIT_FUNCTIONS: Final[Mapping[str, Callable[[dict[str, Any]], Any]]] = {
    "truncate_description": lambda inp: truncate_description(inp["text"], inp["budget_tokens"]),
    "count_tokens": lambda inp: count_tokens(inp["text"]),
}


def all_functions() -> list[str]:
    """Every function the protocol may send: the generated ones, then the kit's."""
    return [*FUNCTIONS, *KIT_FUNCTIONS]


def reference_answer(function: str, inp: dict[str, Any]) -> Answer:
    """gatespec's answer. Raises only for a bug (a non-GatewayError exception)."""
    if function in KIT_FUNCTIONS:
        try:
            return {"ok": KIT_FUNCTIONS[function](inp)}
        except GatewayError as exc:
            return {"error": exc.code.value}
    if function in FUNCTIONS:
        return run_case({"function": function, "input": inp})
    return {"unsupported": True}


def _reply(request: Any, answer: Callable[[str, dict[str, Any]], Answer]) -> dict[str, Any]:
    if not isinstance(request, dict) or not isinstance(request.get("function"), str):
        return {"id": None, "error": "BAD_REQUEST", "message": "expected an object with function"}
    rid = request.get("id")
    if request["function"] == "hello":
        return {"id": rid, "ok": {"implementation": IMPLEMENTATION, "spec_version": SPEC_VERSION}}
    try:
        return {"id": rid, **answer(request["function"], request.get("input") or {})}
    except Exception as exc:  # a bug in the implementation: say so on this line, keep serving
        return {"id": rid, "error": "ADAPTER_EXCEPTION", "message": f"{type(exc).__name__}: {exc}"}


def serve(
    answer: Callable[[str, dict[str, Any]], Answer] = reference_answer,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
) -> int:
    """Answer requests until stdin closes. Output is ASCII JSON, one line per request,
    flushed at once (the runner waits for each answer)."""
    src = stdin or sys.stdin
    out = stdout or sys.stdout
    for line in src:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except json.JSONDecodeError as exc:
            reply: dict[str, Any] = {"id": None, "error": "BAD_REQUEST", "message": str(exc)}
        else:
            reply = _reply(request, answer)
        out.write(json.dumps(reply, ensure_ascii=True, allow_nan=False) + "\n")
        out.flush()
    return 0


def main() -> int:
    # Newline-only line splitting: U+2028 inside a value must not end a request.
    stdin = open(sys.stdin.fileno(), encoding="utf-8", newline="\n", closefd=False)
    return serve(reference_answer, stdin=stdin, stdout=sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
