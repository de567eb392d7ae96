"""Diagnostic only, NOT the implementation: see what the kit checks behind its shape gates.

python -m tests.independent_gateway.kit_probe --config FILE [--profile ...] [--cache-stable]

Runs the same gateway with its presentation reshaped to gatespec's: no `retryable` in error
payloads, the JSON answer also sent as structuredContent (browse trimmed to {"cards"}),
artifact handles mapped to art_<16 hex> (and back in tool_view). Behaviour is unchanged, so a
check that still fails under the probe fails on substance. Used for KIT_FINDINGS.md.
"""

from __future__ import annotations

import hashlib
import json
import sys
from typing import Any

from . import errors, server
from .__main__ import main

_aliases: dict[str, str] = {}


def _alias(handle: str) -> str:
    alias = "art_" + hashlib.sha256(handle.encode()).hexdigest()[:16]
    _aliases[alias] = handle
    return alias


def _payload(self: errors.GatewayError) -> dict[str, Any]:
    return {"error": self.code, "message": self.message, "path": self.path, "details": self.details}


def _structured(document: dict[str, Any]) -> dict[str, Any]:
    copy = json.loads(json.dumps(document))
    if "cards" in copy:
        return {"cards": copy["cards"]}
    for ref in copy.get("artifacts", []):
        ref["handle"] = _alias(ref["handle"])
        ref.pop("uri", None)
    if "encoding" in copy:  # a tool_view answer
        keep = ("handle", "selector", "content", "truncated", "encoding")
        copy = {k: v for k, v in copy.items() if k in keep}
        copy["handle"] = _alias(copy["handle"])
    return copy


_text = server._text
_view = server.Gateway.tool_view


def _text_and_structured(document: dict[str, Any], is_error: bool = False) -> Any:
    result = _text(document, is_error)
    result.structured_content = _structured(document)
    return result


async def _tool_view(self: server.Gateway, arguments: dict[str, Any]) -> dict[str, Any]:
    handle = arguments.get("handle")
    if isinstance(handle, str) and handle in _aliases:
        arguments["handle"] = _aliases[handle]
    return await _view(self, arguments)


errors.GatewayError.payload = _payload  # type: ignore[method-assign]
server._text = _text_and_structured
server.Gateway.tool_view = _tool_view  # type: ignore[method-assign]

if __name__ == "__main__":
    sys.exit(main())
