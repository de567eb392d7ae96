"""The independent gateway answering in other representations the seeds permit, and wrong
answers in those same representations (to prove the kit's readings accept the one and still
fail the other).

python -m tests.conformance.readings_variant VARIANT[,VARIANT...] --config FILE [--profile P]

Seed-permitted readings (the kit at --level seed must pass them):
  bare-list         tool_browse answers a bare JSON array of cards (seed 000 §4.2:
                    "returns list[ChoiceCard]") in one text item, then its prompt lines (§2.3's
                    "prompt-facing rendered form") in another
  sdk-result        tool_browse answers structuredContent {"result": [cards]} (an SDK's wrapping
                    of a list return) and one text item per prompt line
  args-schema       tool_hydrate gives the schema as args_schema / output_schema (seed 000 §2.2)
  hydration-result  tool_hydrate answers a whole HydrationResult: {"item": {..., "args_schema",
                    "output_schema"}, "args_schema", "examples", "constraints"} (§4.3)
  object-selector   tool_view declares its selector as an object {"kind", "start", "end",
                    "pointer"} (seed 000 §4.2 leaves tool_view's selector to #34)
Wrong answers in those representations (the kit must still fail them):
  bare-list-banned  the bare list's cards carry inputSchema (§2.2 bans it)
  args-schema-wrong args_schema is the sentinel {"type": "object"}, not the upstream's schema
  schema-unnamed    the schema under a field no seed names ("schema_json")
  object-selector-broken  the object selector declared, every selector refused
"""

from __future__ import annotations

import json
import sys
from typing import Any

import mcp.types as types

from tests.independent_gateway import server
from tests.independent_gateway.__main__ import main
from tests.independent_gateway.errors import GatewayError

VARIANTS = frozenset(
    {
        "bare-list",
        "sdk-result",
        "args-schema",
        "hydration-result",
        "object-selector",
        "bare-list-banned",
        "args-schema-wrong",
        "schema-unnamed",
        "object-selector-broken",
    }
)
OBJECT_SELECTOR = {
    "type": "object",
    "properties": {
        "kind": {"type": "string", "enum": ["all", "lines", "bytes", "json"]},
        "start": {"type": "integer", "minimum": 0},
        "end": {"type": "integer", "minimum": 0},
        "pointer": {"type": "string"},
    },
    "required": ["kind"],
    "additionalProperties": False,
}

_browse = server.Gateway.tool_browse
_hydrate = server.Gateway.tool_hydrate
_view = server.Gateway.tool_view
_call = server.Gateway.call


def install(variants: set[str]) -> None:
    def answer(document: Any, is_error: bool = False) -> types.CallToolResult:
        if isinstance(document, dict) and "__result__" in document:
            return document["__result__"]  # type: ignore[no-any-return]
        return server_text(document, is_error)

    server_text = server._text
    server._text = answer

    async def tool_browse(self: server.Gateway, arguments: dict[str, Any]) -> dict[str, Any]:
        answered = await _browse(self, arguments)
        cards = answered["cards"]
        if "bare-list-banned" in variants:
            cards = [{**c, "inputSchema": {"type": "object"}} for c in cards]
        body = json.dumps(cards, ensure_ascii=False)
        result = types.CallToolResult(
            content=[
                types.TextContent(type="text", text=body),
                types.TextContent(type="text", text=answered["rendered"]),
            ]
        )
        if "sdk-result" in variants:
            texts = answered["rendered"].split("\n")
            result = types.CallToolResult(
                content=[types.TextContent(type="text", text=t) for t in texts],
                structured_content={"result": cards},
            )
        return {"__result__": result}

    async def tool_hydrate(self: server.Gateway, arguments: dict[str, Any]) -> dict[str, Any]:
        got = await _hydrate(self, arguments)
        schema, output = got.pop("inputSchema"), got.pop("outputSchema", None)
        if "args-schema-wrong" in variants:
            schema = {"type": "object"}
        if "schema-unnamed" in variants:
            return {**got, "schema_json": schema}
        fields = {"args_schema": schema}
        if output is not None:
            fields["output_schema"] = output
        if "hydration-result" in variants:
            item = {"id": got["tool_id"], "description": got["description"], **fields}
            return {"item": item, "args_schema": schema, "examples": [], "constraints": {}}
        return {**got, **fields}

    async def tool_view(self: server.Gateway, arguments: dict[str, Any]) -> dict[str, Any]:
        selector = arguments.get("selector")
        if "object-selector-broken" in variants:
            raise GatewayError("VIEW_FAILED", "no selector works here", "")
        if not isinstance(selector, dict):
            raise GatewayError("ARGS_INVALID", "selector must be an object", "")
        kind, start, end = selector["kind"], selector.get("start"), selector.get("end")
        span = f"{start if start is not None else 0}-{end if end is not None else ''}"
        text = {
            "all": "",
            "lines": f"lines:{max(start or 1, 1)}-{end if end is not None else ''}",
            "bytes": f"bytes:{span}",
            "json": "json:" + str(selector.get("pointer", "")),
        }[kind]
        return await _view(self, {"handle": arguments.get("handle"), "selector": text})

    if variants & {"bare-list", "sdk-result", "bare-list-banned"}:
        server.Gateway.tool_browse = tool_browse  # type: ignore[method-assign]
    if variants & {"args-schema", "hydration-result", "args-schema-wrong", "schema-unnamed"}:
        server.Gateway.tool_hydrate = tool_hydrate  # type: ignore[method-assign]
    if variants & {"object-selector", "object-selector-broken"}:
        schema = json.loads(json.dumps(server.VIEW.input_schema))
        schema["properties"]["selector"] = OBJECT_SELECTOR
        schema["required"] = ["handle", "selector"]
        view = types.Tool(
            name="tool_view", description=server.VIEW.description, input_schema=schema
        )
        server.PROFILES["gateway"] = (server.BROWSE, server.EXECUTE, view)
        server.Gateway.tool_view = tool_view  # type: ignore[method-assign]


if __name__ == "__main__":
    chosen = set(sys.argv[1].split(","))
    unknown = chosen - VARIANTS
    if unknown:
        sys.exit(f"unknown variants {sorted(unknown)}; choose from {sorted(VARIANTS)}")
    install(chosen)
    sys.exit(main(sys.argv[2:]))
