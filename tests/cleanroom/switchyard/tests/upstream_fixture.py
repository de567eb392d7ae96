"""A tiny upstream MCP server used by the switchyard tests.

Run: python upstream_fixture.py [--variant main|alt] [--startup-delay SECONDS]

Serves over stdio by default, or Streamable HTTP with --http HOST:PORT.
Written against the low-level mcp 2.x `Server` API.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import anyio
import mcp.types as types
from mcp.server import NotificationOptions, Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError


def build_server(variant: str) -> Server:
    notes: dict[str, str] = {"hello": "Hello from " + variant}
    state = {"extra": False}

    def tools() -> list[types.Tool]:
        ro = types.ToolAnnotations(read_only_hint=True)
        out = [
            types.Tool(
                name="echo",
                description=f"Echo the given text back ({variant}).\nSecond line of the description.",
                input_schema={
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"],
                },
                annotations=ro,
            ),
            types.Tool(
                name="fail",
                description="Always returns a tool-level error (isError).",
                input_schema={"type": "object", "properties": {}},
                annotations=ro,
            ),
            types.Tool(
                name="boom",
                description="Always answers with a JSON-RPC error.",
                input_schema={"type": "object", "properties": {}},
                annotations=ro,
            ),
            types.Tool(
                name="sleep",
                description="Sleep for the given number of seconds.",
                input_schema={
                    "type": "object",
                    "properties": {"seconds": {"type": "number"}},
                    "required": ["seconds"],
                },
                annotations=ro,
            ),
            types.Tool(
                name="meta_probe",
                description="Report the _meta the upstream received.",
                input_schema={"type": "object", "properties": {}},
                annotations=ro,
            ),
        ]
        if variant == "main":
            out += [
                types.Tool(
                    name="add",
                    description="Add two integers.",
                    input_schema={
                        "type": "object",
                        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                        "required": ["a", "b"],
                    },
                    output_schema={
                        "type": "object",
                        "properties": {"sum": {"type": "integer"}},
                        "required": ["sum"],
                    },
                    annotations=ro,
                ),
                types.Tool(
                    name="write_note",
                    description="Store a note under a key.",
                    input_schema={
                        "type": "object",
                        "properties": {"key": {"type": "string"}, "value": {"type": "string"}},
                        "required": ["key", "value"],
                    },
                    annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=False),
                ),
                types.Tool(
                    name="toggle_extra",
                    description="Add/remove the 'extra' tool and notify list_changed.",
                    input_schema={"type": "object", "properties": {}},
                ),
                types.Tool(
                    name="crash",
                    description="Terminate the upstream process abruptly.",
                    input_schema={"type": "object", "properties": {}},
                ),
                types.Tool(
                    name="bad__name",
                    description="A tool whose name contains the namespace separator.",
                    input_schema={"type": "object", "properties": {}},
                ),
            ]
            if state["extra"]:
                out.append(
                    types.Tool(
                        name="extra",
                        description="Appears after toggle_extra.",
                        input_schema={"type": "object", "properties": {}},
                    )
                )
        return out

    def text(s: str) -> list[types.ContentBlock]:
        return [types.TextContent(type="text", text=s)]

    async def on_list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools())

    async def on_call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        args: dict[str, Any] = params.arguments or {}
        name = params.name
        known = {t.name for t in tools()}
        if name not in known:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {name}")
        if name == "echo":
            return types.CallToolResult(content=text(str(args.get("text"))), structured_content={"text": args.get("text"), "server": variant})
        if name == "add":
            s = int(args["a"]) + int(args["b"])
            return types.CallToolResult(content=text(json.dumps({"sum": s})), structured_content={"sum": s})
        if name == "write_note":
            notes[str(args["key"])] = str(args["value"])
            await ctx.session.send_resource_list_changed()
            return types.CallToolResult(content=text("stored"))
        if name == "fail":
            return types.CallToolResult(content=text("it failed"), is_error=True)
        if name == "boom":
            raise MCPError(-32050, "boom happened", {"why": "because"})
        if name == "sleep":
            await anyio.sleep(float(args.get("seconds", 0)))
            return types.CallToolResult(content=text("slept"))
        if name == "meta_probe":
            meta = params.meta.model_dump(by_alias=True, exclude_none=True) if params.meta else None
            return types.CallToolResult(content=text(json.dumps(meta)), structured_content={"meta": meta})
        if name == "toggle_extra":
            state["extra"] = not state["extra"]
            await ctx.session.send_tool_list_changed()
            return types.CallToolResult(content=text(f"extra={state['extra']}"))
        if name == "extra":
            return types.CallToolResult(content=text("extra!"))
        if name == "crash":
            import os

            os._exit(3)
        if name == "bad__name":
            return types.CallToolResult(content=text("bad name called"))
        raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {name}")

    async def on_list_prompts(ctx, params) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name="greet",
                    description="Greet someone.",
                    arguments=[types.PromptArgument(name="who", required=True)],
                )
            ]
        )

    async def on_get_prompt(ctx, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name != "greet":
            raise MCPError(types.INVALID_PARAMS, f"Unknown prompt: {params.name}")
        who = (params.arguments or {}).get("who", "world")
        return types.GetPromptResult(
            description="A greeting",
            messages=[
                types.PromptMessage(role="user", content=types.TextContent(type="text", text=f"Hello, {who}! ({variant})"))
            ],
        )

    async def on_list_resources(ctx, params) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(uri=f"note://{k}", name=f"note-{k}", mime_type="text/plain") for k in sorted(notes)
            ]
        )

    async def on_list_resource_templates(ctx, params) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[types.ResourceTemplate(uri_template="note://{key}", name="note", mime_type="text/plain")]
        )

    async def on_read_resource(ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        if not uri.startswith("note://"):
            raise MCPError(types.INVALID_PARAMS, f"Unknown resource: {uri}")
        key = uri[len("note://"):]
        if key not in notes:
            raise MCPError(types.INVALID_PARAMS, f"Unknown resource: {uri}")
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="text/plain", text=notes[key])]
        )

    return Server(
        f"fixture-{variant}",
        version="0.0.1",
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        on_list_prompts=on_list_prompts,
        on_get_prompt=on_get_prompt,
        on_list_resources=on_list_resources,
        on_list_resource_templates=on_list_resource_templates,
        on_read_resource=on_read_resource,
    )


NOTIFY = NotificationOptions(tools_changed=True, prompts_changed=True, resources_changed=True)


async def _run_stdio(server: Server) -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options(NOTIFY))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--variant", default="main", choices=["main", "alt"])
    p.add_argument("--startup-delay", type=float, default=0.0)
    p.add_argument("--http", default=None)
    a = p.parse_args(argv)
    if a.startup_delay:
        time.sleep(a.startup_delay)
    server = build_server(a.variant)
    if a.http:
        import uvicorn

        host, _, port = a.http.rpartition(":")
        app = server.streamable_http_app(host=host)
        uvicorn.run(app, host=host, port=int(port), log_level="warning")
    else:
        anyio.run(_run_stdio, server)


if __name__ == "__main__":
    main(sys.argv[1:])
