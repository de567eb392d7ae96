"""The official conformance suite's reference server, built from the suite's own words.

npm @modelcontextprotocol/conformance 0.1.16 ships no server (its package holds dist/ only);
each server scenario states, in its description (`**Server Implementation Requirements:**`),
the tool, prompt or resource it calls and what that must answer. This is those requirements,
one entry each, on the official `mcp` SDK's low-level server: the suite run against it directly
shows what a plain server passes, and the same server behind gatespec's unprefixed aggregate
profile must pass the same. Serves stdio (`stdio`) or Streamable HTTP (`http PORT`); with
`stdio legacy` it serves the handshake era only, so a client in auto mode falls back to it.
"""

from __future__ import annotations

import base64
import json
import sys
import warnings
from typing import Any

import anyio
import mcp_types as types
from mcp.server.caching import CacheHint
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.runner import serve_loop
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.methods import CACHEABLE_METHODS
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

# A 1x1 red PNG and a 44-byte silent WAV ("a minimal test image / audio file").
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV = base64.b64encode(
    b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00D\xac\x00\x00\x88X\x01\x00"
    b"\x02\x00\x10\x00data\x00\x00\x00\x00"
).decode()
OBJECT: dict[str, Any] = {"type": "object", "properties": {}}


def _tool(name: str, description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "description": description, "inputSchema": schema or OBJECT}


def _string_args(*names: str) -> dict[str, Any]:
    props = {n: {"type": "string"} for n in names}
    return {"type": "object", "properties": props, "required": list(names)}


TOOLS = [
    _tool("test_simple_text", "Returns simple text"),
    _tool("test_image_content", "Returns an image"),
    _tool("test_audio_content", "Returns audio"),
    _tool("test_embedded_resource", "Returns an embedded resource"),
    _tool("test_multiple_content_types", "Returns text, image and a resource"),
    _tool("test_tool_with_logging", "Logs three messages"),
    _tool("test_tool_with_progress", "Reports progress"),
    _tool("test_error_handling", "Always fails"),
    _tool("test_sampling", "Asks the client to sample", _string_args("prompt")),
    _tool("test_elicitation", "Asks the user", _string_args("message")),
    _tool("test_elicitation_sep1034_defaults", "Elicits with defaults"),
    _tool("test_elicitation_sep1330_enums", "Elicits enums"),
    {
        "name": "json_schema_2020_12_tool",
        "description": "Tool with JSON Schema 2020-12 features",
        "inputSchema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                }
            },
            "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
            "additionalProperties": False,
        },
    },
]
PROMPTS = [
    {"name": "test_simple_prompt", "description": "A simple prompt"},
    {
        "name": "test_prompt_with_arguments",
        "description": "A prompt with arguments",
        "arguments": [
            {"name": "arg1", "description": "First test argument", "required": True},
            {"name": "arg2", "description": "Second test argument", "required": True},
        ],
    },
    {
        "name": "test_prompt_with_embedded_resource",
        "description": "A prompt embedding a resource",
        "arguments": [{"name": "resourceUri", "description": "URI to embed", "required": True}],
    },
    {"name": "test_prompt_with_image", "description": "A prompt with an image"},
]
TEXT = "This is the content of the static text resource."
RESOURCES = [
    {
        "uri": "test://static-text",
        "name": "static-text",
        "description": "Text",
        "mimeType": "text/plain",
    },
    {
        "uri": "test://static-binary",
        "name": "static-binary",
        "description": "PNG",
        "mimeType": "image/png",
    },
    {
        "uri": "test://watched-resource",
        "name": "watched",
        "description": "Subscribable",
        "mimeType": "text/plain",
    },
]
TEMPLATE = {
    "uriTemplate": "test://template/{id}/data",
    "name": "template",
    "description": "Data by id",
    "mimeType": "application/json",
}


# tool -> (message, requested properties) of its elicitation (the suite's wording)
ELICITATIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "test_elicitation": (
        "",  # the caller's message argument
        {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
    ),
    "test_elicitation_sep1034_defaults": (
        "Please review and update the form fields with defaults",
        {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {
                "type": "string",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "default": True},
        },
    ),
    "test_elicitation_sep1330_enums": (
        "Please select options from the enum fields",
        {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {
                "type": "string",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"},
                ],
            },
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
            },
            "titledMulti": {
                "type": "array",
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"},
                    ]
                },
            },
        },
    ),
}


def _text(text: str, is_error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def _image() -> dict[str, Any]:
    return {"type": "image", "data": PNG, "mimeType": "image/png"}


def _related(ctx: Any) -> ServerMessageMetadata:
    return ServerMessageMetadata(related_request_id=ctx.request_id)


async def call_tool(ctx: Any, params: Any) -> dict[str, Any]:
    name, args = params.name, dict(params.arguments or {})
    session = ctx.session
    with warnings.catch_warnings():  # logging, sampling: deprecated in 2026-07-28
        warnings.simplefilter("ignore")
        if name == "test_simple_text":
            return _text("This is a simple text response for testing.")
        if name == "test_image_content":
            return {"content": [_image()]}
        if name == "test_audio_content":
            return {"content": [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]}
        if name == "test_embedded_resource":
            resource = {
                "uri": "test://embedded-resource",
                "mimeType": "text/plain",
                "text": "This is an embedded resource content.",
            }
            return {"content": [{"type": "resource", "resource": resource}]}
        if name == "test_multiple_content_types":
            resource = {
                "uri": "test://mixed-content-resource",
                "mimeType": "application/json",
                "text": json.dumps({"test": "data", "value": 123}),
            }
            return {
                "content": [
                    {"type": "text", "text": "Multiple content types test:"},
                    _image(),
                    {"type": "resource", "resource": resource},
                ]
            }
        if name == "test_tool_with_logging":
            for i, text in enumerate(
                ("Tool execution started", "Tool processing data", "Tool execution completed")
            ):
                if i:
                    await anyio.sleep(0.05)
                await session.send_log_message("info", text, related_request_id=ctx.request_id)
            return _text("Tool with logging executed successfully")
        if name == "test_tool_with_progress":
            token = ((ctx.params or {}).get("_meta") or {}).get("progressToken")
            meta = (getattr(params, "meta", None) or {}) if token is None else {}
            token = token if token is not None else getattr(meta, "progress_token", None)
            for i, progress in enumerate((0, 50, 100)):
                if i:
                    await anyio.sleep(0.05)
                if token is not None:
                    note = types.ProgressNotification(
                        params=types.ProgressNotificationParams(
                            progress_token=token, progress=progress, total=100
                        )
                    )
                    await session.send_notification(note, related_request_id=ctx.request_id)
            return _text("Tool with progress executed successfully")
        if name == "test_error_handling":
            return _text("This tool intentionally returns an error for testing", is_error=True)
        if name == "json_schema_2020_12_tool":
            return _text(f"received {json.dumps(args, sort_keys=True)}")
        try:
            return await _ask(ctx, name, args)
        except MCPError as exc:
            return _text(f"the client refused: {exc.message}", is_error=True)


# method -> (request, params, result) models of what a tool asks of its client
SENT: dict[str, tuple[Any, Any, Any]] = {
    "sampling/createMessage": (
        types.CreateMessageRequest,
        types.CreateMessageRequestParams,
        types.CreateMessageResult,
    ),
    "elicitation/create": (types.ElicitRequest, types.ElicitRequestFormParams, types.ElicitResult),
}


def _request(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """The sampling or elicitation request a tool makes of the client, as the suite words it."""
    if name == "test_sampling":
        text = {"type": "text", "text": str(args.get("prompt", ""))}
        params = {"messages": [{"role": "user", "content": text}], "maxTokens": 100}
        return {"method": "sampling/createMessage", "params": params}
    if name not in ELICITATIONS:
        raise MCPError(code=-32602, message=f"Unknown tool: {name}")
    message, properties = ELICITATIONS[name]
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if name == "test_elicitation":
        message = str(args.get("message", ""))
        schema["required"] = ["username", "email"]
    params = {"mode": "form", "message": message, "requestedSchema": schema}
    return {"method": "elicitation/create", "params": params}


async def _ask(ctx: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """Sampling or elicitation: on the request's own channel (handshake era), or an
    input_required result answered by the client's retry (2026-07-28, SEP-2322)."""
    request = _request(name, args)
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        responses = (ctx.params or {}).get("inputResponses")
        if not responses:
            return {"resultType": "input_required", "inputRequests": {"ask": request}}
        answer = responses["ask"]
    else:
        request_type, params_type, result_type = SENT[request["method"]]
        sent = await ctx.session.send_request(
            request_type(params=params_type.model_validate(request["params"])),
            result_type,
            metadata=_related(ctx),
        )
        answer = sent.model_dump(by_alias=True, mode="json", exclude_none=True)
    if name == "test_sampling":
        content = answer.get("content")
        text = content.get("text") if isinstance(content, dict) else str(content)
        return _text(f"LLM response: {text}")
    content_json = json.dumps(answer.get("content") or {})
    said = f"action={answer.get('action')}, content={content_json}"
    if name == "test_elicitation":
        return _text(f"User response: {said}")
    return _text(f"Elicitation completed: {said}")


async def get_prompt(ctx: Any, params: Any) -> dict[str, Any]:
    args = dict(params.arguments or {})
    if params.name == "test_simple_prompt":
        return _user("This is a simple prompt for testing.")
    if params.name == "test_prompt_with_arguments":
        text = f"Prompt with arguments: arg1='{args.get('arg1')}', arg2='{args.get('arg2')}'"
        return _user(text)
    if params.name == "test_prompt_with_embedded_resource":
        resource = {
            "uri": args.get("resourceUri", ""),
            "mimeType": "text/plain",
            "text": "Embedded resource content for testing.",
        }
        first = {"role": "user", "content": {"type": "resource", "resource": resource}}
        return {
            "messages": [first, *_user("Please process the embedded resource above.")["messages"]]
        }
    if params.name == "test_prompt_with_image":
        first = {"role": "user", "content": _image()}
        return {"messages": [first, *_user("Please analyze the image above.")["messages"]]}
    raise MCPError(code=-32602, message=f"Unknown prompt: {params.name}")


def _user(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": {"type": "text", "text": text}}]}


async def read_resource(ctx: Any, params: Any) -> dict[str, Any]:
    uri = str(params.uri)
    if uri == "test://static-text":
        return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": TEXT}]}
    if uri == "test://static-binary":
        return {"contents": [{"uri": uri, "mimeType": "image/png", "blob": PNG}]}
    if uri == "test://watched-resource":
        return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": "watched"}]}
    prefix, suffix = "test://template/", "/data"
    if uri.startswith(prefix) and uri.endswith(suffix):
        id_ = uri[len(prefix) : -len(suffix)]
        data = {"id": id_, "templateTest": True, "data": f"Data for ID: {id_}"}
        return {
            "contents": [{"uri": uri, "mimeType": "application/json", "text": json.dumps(data)}]
        }
    raise MCPError(code=-32002, message=f"Resource not found: {uri}")


async def complete(ctx: Any, params: Any) -> dict[str, Any]:
    value = str(params.argument.value)
    words = [w for w in ("paris", "park", "party") if w.startswith(value)]
    return {"completion": {"values": words, "total": len(words), "hasMore": False}}


def build() -> Server[Any]:
    subscribed: set[str] = set()

    def lister(key: str, entries: list[dict[str, Any]]) -> Any:
        async def handler(ctx: Any, params: Any) -> dict[str, Any]:
            return {key: entries}

        return handler

    async def subscribe(ctx: Any, params: Any) -> dict[str, Any]:
        subscribed.add(str(params.uri))
        return {}

    async def unsubscribe(ctx: Any, params: Any) -> dict[str, Any]:
        subscribed.discard(str(params.uri))
        return {}

    async def set_level(ctx: Any, params: Any) -> dict[str, Any]:
        return {}

    server: Server[Any] = Server(
        "conformance-reference",
        version="1",
        on_list_tools=_complete(lister("tools", TOOLS)),
        on_call_tool=_complete(call_tool),
        on_list_prompts=_complete(lister("prompts", PROMPTS)),
        on_get_prompt=_complete(get_prompt),
        on_list_resources=_complete(lister("resources", RESOURCES)),
        on_list_resource_templates=_complete(lister("resourceTemplates", [TEMPLATE])),
        on_read_resource=_complete(read_resource),
        on_subscribe_resource=_complete(subscribe),
        on_unsubscribe_resource=_complete(unsubscribe),
        on_completion=_complete(complete),
        on_set_logging_level=set_level,
        # 2026-07-28 list and read results carry freshness hints; these handlers answer plain
        # dicts, so the server fills "stale at once, this client only".
        cache_hints={m: CacheHint() for m in CACHEABLE_METHODS},  # type: ignore[misc]
    )
    return server


def _complete(handler: Any) -> Any:
    """A 2026-07-28 result names its type (an earlier one must not: strict clients refuse it)."""

    async def typed(ctx: Any, params: Any) -> Any:
        result = await handler(ctx, params)
        if isinstance(result, dict) and ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return {"resultType": "complete", **result}
        return result

    return typed


def main(argv: list[str]) -> None:
    server = build()
    if argv[:1] == ["http"]:
        import uvicorn

        app = server.streamable_http_app()
        uvicorn.run(app, host="127.0.0.1", port=int(argv[1]), log_level="warning")
        return
    from mcp.server.stdio import stdio_server

    async def serve() -> None:
        options = server.create_initialization_options(NotificationOptions())
        async with stdio_server() as (read, write):
            if "legacy" not in argv:
                await server.run(read, write, options)
                return
            async with server.lifespan(server) as state:  # the handshake era only
                await serve_loop(server, read, write, lifespan_state=state, init_options=options)

    anyio.run(serve)


if __name__ == "__main__":
    main(sys.argv[1:])
