"""The floor for a second MCP hop in Python: a pass-through proxy on the same SDK, nothing else.

One persistent client to the upstream, a low-level server that forwards tools/list and
tools/call. Any Python proxy pays at least this; gatespec's own cost is measured against it.

With no upstream command it serves an empty tool list: the start-up floor of any server on this
SDK (interpreter start and the SDK's imports), which bench/startup.py sets beside gatespec's.

Run: `python bench/floor_proxy.py [--http PORT] [-- UPSTREAM_COMMAND ARGS...]`
"""

import argparse
from contextlib import AsyncExitStack

import anyio
from mcp import Client, StdioServerParameters, types
from mcp.server import Server
from mcp.server.stdio import stdio_server


async def main(command: list[str], http_port: int | None) -> None:
    async with AsyncExitStack() as stack:
        if command:
            params = StdioServerParameters(command=command[0], args=command[1:])
            upstream = await stack.enter_async_context(Client(params, cache=None))

            async def list_tools(ctx, params):  # type: ignore[no-untyped-def]
                return await upstream.list_tools()

            async def call_tool(ctx, params):  # type: ignore[no-untyped-def]
                return await upstream.call_tool(params.name, params.arguments)

            server = Server("floor", on_list_tools=list_tools, on_call_tool=call_tool)
        else:

            async def no_tools(ctx, params):  # type: ignore[no-untyped-def]
                return types.ListToolsResult(tools=[])

            server = Server("floor", on_list_tools=no_tools)
        if http_port is None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())
        else:
            import uvicorn  # only the HTTP floor pays for it

            app = server.streamable_http_app(streamable_http_path="/mcp")
            config = uvicorn.Config(app, host="127.0.0.1", port=http_port, log_level="warning")
            await uvicorn.Server(config).serve()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, metavar="PORT")
    parser.add_argument("command", nargs="*")
    args = parser.parse_args()
    anyio.run(main, args.command, args.http)
