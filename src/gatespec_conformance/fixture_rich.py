"""The fixture upstream's rich mode (``--rich``): prompts, resources, resource templates,
completion, resource subscriptions and logging, plus tools that make the server talk back
during a request. The aggregate profile's checks (and the relay checks of every profile) use it.

Everything is known to the kit, which computes what a gateway must show from these tables:

- prompts `PROMPTS`, one with a name a server__name split cannot take back (`bad__prompt`);
- resources `RESOURCES`, one whose URI has no scheme (it cannot be namespaced), and the
  template `TEMPLATE` (reading fixture://item/ID answers "item ID");
- completion of greet's `name` and the template's `id` (`COMPLETIONS`);
- tools `RELAY_TOOLS`: progress(steps), log(level, text), sample(prompt), elicit(message),
  roots(), slow(seconds) (logs {"name": "slow", "cancelled": true} when cancelled),
  touch(uri) (announces notifications/resources/updated for a subscribed URI),
  break_listing() / fix_listing() (every list request fails in between);
- with ``--page-size N`` every list answers in pages of N.

Requests of the client (sample, elicit, roots) go back on the request's own channel in the
handshake era, and as an input_required result in 2026-07-28.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Final

import anyio

__all__ = [
    "BAD_PROMPT",
    "COMPLETIONS",
    "NO_SCHEME_URI",
    "PROMPTS",
    "RELAY_TOOLS",
    "RESOURCES",
    "SAMPLE_REPLY_PREFIX",
    "TEMPLATE",
    "Rich",
]

BAD_PROMPT: Final = "bad__prompt"
NO_SCHEME_URI: Final = "readme-without-scheme"
PROMPTS: Final[tuple[dict[str, Any], ...]] = (
    {
        "name": "greet",
        "description": "Greet someone by name.",
        "arguments": [{"name": "name", "description": "Who to greet.", "required": True}],
    },
    {"name": "with-resource", "description": "A prompt that embeds the readme resource."},
    {"name": BAD_PROMPT, "description": "A name the aggregate split cannot take back."},
)
RESOURCES: Final[tuple[dict[str, Any], ...]] = (
    {
        "uri": "fixture://doc/readme",
        "name": "readme",
        "description": "The fixture's readme.",
        "mimeType": "text/plain",
    },
    {
        "uri": "fixture://doc/data.bin",
        "name": "data",
        "description": "Four bytes of binary data.",
        "mimeType": "application/octet-stream",
    },
    {"uri": NO_SCHEME_URI, "name": "no-scheme", "description": "A URI with no scheme."},
)
TEXTS: Final = {"fixture://doc/readme": "the fixture readme", NO_SCHEME_URI: "no scheme"}
BLOBS: Final = {"fixture://doc/data.bin": "AAECAw=="}  # base64 of bytes 0-3
TEMPLATE: Final[dict[str, Any]] = {
    "uriTemplate": "fixture://item/{id}",
    "name": "item",
    "description": "One item by id.",
    "mimeType": "text/plain",
}
COMPLETIONS: Final = {"name": ("alice", "albert", "bob"), "id": ("1", "2", "3")}
SAMPLE_REPLY_PREFIX: Final = "the client sampled: "

_EMPTY: Final = {"type": "object"}
RELAY_TOOLS: Final[tuple[dict[str, Any], ...]] = (
    {
        "name": "progress",
        "description": "Report progress in steps, then finish.",
        "inputSchema": {"type": "object", "properties": {"steps": {"type": "integer"}}},
    },
    {
        "name": "log",
        "description": "Send one log message during the call.",
        "inputSchema": {
            "type": "object",
            "properties": {"level": {"type": "string"}, "text": {"type": "string"}},
        },
    },
    {
        "name": "sample",
        "description": "Ask the client to sample a reply.",
        "inputSchema": {"type": "object", "properties": {"prompt": {"type": "string"}}},
    },
    {
        "name": "elicit",
        "description": "Ask the client's user for a name.",
        "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}},
    },
    {"name": "roots", "description": "Ask the client for its roots.", "inputSchema": _EMPTY},
    {
        "name": "slow",
        "description": "Sleep, and log a cancellation.",
        "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
    },
    {
        "name": "touch",
        "description": "Announce that a subscribed resource changed.",
        "inputSchema": {"type": "object", "properties": {"uri": {"type": "string"}}},
    },
    {"name": "break_listing", "description": "Make every list fail.", "inputSchema": _EMPTY},
    {"name": "fix_listing", "description": "Make lists work again.", "inputSchema": _EMPTY},
)
RELAY_TOOL_NAMES: Final = frozenset(t["name"] for t in RELAY_TOOLS)
LISTS: Final = frozenset(
    {"tools/list", "prompts/list", "resources/list", "resources/templates/list"}
)


def _text(value: str, is_error: bool = False) -> dict[str, Any]:
    return _done({"content": [{"type": "text", "text": value}], "isError": is_error})


def _done(result: dict[str, Any]) -> dict[str, Any]:
    """A plain result of either era: 2026-07-28 requires resultType, which the SDK strips
    again for a handshake-era client."""
    return {**result, "resultType": "complete"}


def _page(entries: list[Any], cursor: str | None, size: int | None) -> tuple[list[Any], str | None]:
    start = int(cursor) if cursor and cursor.isdigit() else 0
    if not size:
        return entries, None
    end = start + size
    return entries[start:end], (str(end) if end < len(entries) else None)


@dataclass
class Rich:
    """The rich mode's state and handlers (see the module docstring)."""

    log_call: Any  # (name, arguments) -> None: the fixture's call log
    page_size: int | None = None
    broken: bool = False
    subscribed: set[str] = field(default_factory=set)

    # ------------------------------------------------------------ lists and reads

    def page(self, method: str, params: Any, entries: list[Any]) -> tuple[list[Any], str | None]:
        if self.broken:
            from mcp.shared.exceptions import MCPError

            raise MCPError(code=-32603, message=f"{method} is broken on purpose (break_listing)")
        cursor = getattr(params, "cursor", None) if params is not None else None
        return _page(entries, cursor, self.page_size)

    async def list_prompts(self, ctx: Any, params: Any) -> dict[str, Any]:
        prompts, cursor = self.page("prompts/list", params, list(PROMPTS))
        return _done({"prompts": prompts, **({"nextCursor": cursor} if cursor else {})})

    async def get_prompt(self, ctx: Any, params: Any) -> dict[str, Any]:
        from mcp.shared.exceptions import MCPError

        args = dict(params.arguments or {})
        self.log_call(f"prompts/get:{params.name}", args)
        if params.name == "greet":
            text = {"type": "text", "text": f"Hello, {args.get('name', 'nobody')}!"}
            return _done({"messages": [{"role": "user", "content": text}]})
        if params.name == "with-resource":
            resource = {
                "uri": RESOURCES[0]["uri"],
                "mimeType": "text/plain",
                "text": TEXTS[RESOURCES[0]["uri"]],
            }
            content = {"type": "resource", "resource": resource}
            return _done({"messages": [{"role": "user", "content": content}]})
        if params.name == BAD_PROMPT:
            return _done(
                {"messages": [{"role": "user", "content": {"type": "text", "text": "bad"}}]}
            )
        raise MCPError(code=-32602, message=f"no prompt named {params.name!r}")

    async def list_resources(self, ctx: Any, params: Any) -> dict[str, Any]:
        resources, cursor = self.page("resources/list", params, list(RESOURCES))
        return _done({"resources": resources, **({"nextCursor": cursor} if cursor else {})})

    async def list_templates(self, ctx: Any, params: Any) -> dict[str, Any]:
        templates, cursor = self.page("resources/templates/list", params, [TEMPLATE])
        return _done({"resourceTemplates": templates, **({"nextCursor": cursor} if cursor else {})})

    async def read_resource(self, ctx: Any, params: Any) -> dict[str, Any]:
        from mcp.shared.exceptions import MCPError

        uri = str(params.uri)
        self.log_call("resources/read", {"uri": uri})
        if uri in TEXTS:
            return _done({"contents": [{"uri": uri, "mimeType": "text/plain", "text": TEXTS[uri]}]})
        if uri in BLOBS:
            blob = {"uri": uri, "mimeType": "application/octet-stream", "blob": BLOBS[uri]}
            return _done({"contents": [blob]})
        prefix = TEMPLATE["uriTemplate"].split("{")[0]
        if uri.startswith(prefix) and uri[len(prefix) :]:
            item = uri[len(prefix) :]
            text = f"item {item}"
            return _done({"contents": [{"uri": uri, "mimeType": "text/plain", "text": text}]})
        raise MCPError(code=-32002, message=f"Resource not found: {uri}")

    async def complete(self, ctx: Any, params: Any) -> dict[str, Any]:
        argument = params.argument
        self.log_call(
            "completion/complete",
            {"ref": params.ref.model_dump(by_alias=True), "argument": argument.name},
        )
        values = [v for v in COMPLETIONS.get(argument.name, ()) if v.startswith(argument.value)]
        return _done({"completion": {"values": values, "total": len(values), "hasMore": False}})

    async def subscribe(self, ctx: Any, params: Any) -> dict[str, Any]:
        self.subscribed.add(str(params.uri))
        self.log_call("resources/subscribe", {"uri": str(params.uri)})
        return {}

    async def unsubscribe(self, ctx: Any, params: Any) -> dict[str, Any]:
        self.subscribed.discard(str(params.uri))
        self.log_call("resources/unsubscribe", {"uri": str(params.uri)})
        return {}

    async def set_level(self, ctx: Any, params: Any) -> dict[str, Any]:
        self.log_call("logging/setLevel", {"level": params.level})
        return {}

    # ------------------------------------------------------------ tools that talk back

    async def call(self, ctx: Any, params: Any, bus: Any) -> Any:
        """The result of a relay tool (the call is already logged)."""
        import mcp_types as types
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        name, args = params.name, dict(params.arguments or {})
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        session = ctx.session
        with warnings.catch_warnings():  # logging, sampling, roots: deprecated in 2026-07-28
            warnings.simplefilter("ignore")
            if name == "progress":
                steps = int(args.get("steps", 3))
                token = ((ctx.params or {}).get("_meta") or {}).get("progressToken")
                for step in range(1, steps + 1):
                    if token is not None:
                        note = types.ProgressNotification(
                            params=types.ProgressNotificationParams(
                                progress_token=token,
                                progress=step,
                                total=steps,
                                message=f"step {step}",
                            )
                        )
                        await session.send_notification(note, related_request_id=ctx.request_id)
                    await anyio.sleep(0.01)
                return _text(f"done in {steps} steps")
            if name == "log":
                level, text = args.get("level", "info"), str(args.get("text", "hello"))
                await session.send_log_message(
                    level, text, logger="fixture", related_request_id=ctx.request_id
                )
                return _text("logged")
            if name in ("sample", "elicit", "roots"):
                return await self._ask(ctx, name, args, modern)
            if name == "slow":
                try:
                    await anyio.sleep(float(args.get("seconds", 30)))
                except anyio.get_cancelled_exc_class():
                    self.log_call("slow", {"cancelled": True})
                    raise
                return _text("slept")
            if name == "touch":
                uri = str(args.get("uri", ""))
                if uri not in self.subscribed:
                    return _text(f"{uri} is not subscribed", is_error=True)
                if modern:
                    from mcp.server.subscriptions import ResourceUpdated

                    await bus.publish(ResourceUpdated(uri=uri))
                else:
                    await session.send_resource_updated(uri)
                return _text(f"touched {uri}")
            if name in ("break_listing", "fix_listing"):
                self.broken = name == "break_listing"
                return _text("lists broken" if self.broken else "lists fixed")
        return _text(f"no relay tool {name!r}", is_error=True)

    async def _ask(self, ctx: Any, name: str, args: dict[str, Any], modern: bool) -> Any:
        """sample / elicit / roots: back on the request's channel, or input_required."""
        import mcp_types as types
        from mcp.shared.exceptions import MCPError

        params = ctx.params or {}
        if modern and "inputResponses" not in params:
            request = self._input_request(name, args)
            return {"resultType": "input_required", "inputRequests": {name: request}}
        try:
            if modern:
                answer = params["inputResponses"][name]
            elif name == "sample":
                message = types.SamplingMessage(
                    role="user",
                    content=types.TextContent(type="text", text=str(args.get("prompt", "hi"))),
                )
                result = await ctx.session.create_message(
                    [message], max_tokens=20, related_request_id=ctx.request_id
                )
                answer = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            elif name == "elicit":
                result = await ctx.session.elicit_form(
                    str(args.get("message", "Your name?")),
                    {"type": "object", "properties": {"name": {"type": "string"}}},
                    related_request_id=ctx.request_id,
                )
                answer = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            else:
                result = await ctx.session.send_request(
                    types.ListRootsRequest(),
                    types.ListRootsResult,
                    metadata=_related(ctx),
                )
                answer = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        except MCPError as exc:
            return _text(f"the client refused {name}: {exc.message}", is_error=True)
        return _text(_describe(name, answer))

    @staticmethod
    def _input_request(name: str, args: dict[str, Any]) -> dict[str, Any]:
        if name == "sample":
            message = {
                "role": "user",
                "content": {"type": "text", "text": str(args.get("prompt", "hi"))},
            }
            return {
                "method": "sampling/createMessage",
                "params": {"messages": [message], "maxTokens": 20},
            }
        if name == "elicit":
            schema = {"type": "object", "properties": {"name": {"type": "string"}}}
            question = str(args.get("message", "Your name?"))
            return {
                "method": "elicitation/create",
                "params": {"mode": "form", "message": question, "requestedSchema": schema},
            }
        return {"method": "roots/list", "params": {}}

    def listing_guard(self, method: str) -> None:
        """tools/list fails too while lists are broken."""
        if self.broken and method in LISTS:
            from mcp.shared.exceptions import MCPError

            raise MCPError(code=-32603, message=f"{method} is broken on purpose (break_listing)")


def _related(ctx: Any) -> Any:
    from mcp.shared.message import ServerMessageMetadata

    return ServerMessageMetadata(related_request_id=ctx.request_id)


def _describe(name: str, answer: dict[str, Any]) -> str:
    """What a talk-back tool returns: the client's answer, in words the kit can check."""
    if name == "sample":
        content = answer.get("content")
        text = content.get("text") if isinstance(content, dict) else str(content)
        return f"{SAMPLE_REPLY_PREFIX}{text}"
    if name == "elicit":
        return f"the client answered {answer.get('action')}: {answer.get('content')}"
    roots = answer.get("roots") or []
    return "roots: " + ", ".join(str(r.get("uri")) for r in roots)
