"""The search profile's operations (seed 003, ADR-041): search, schema, call and batch over the
caller's visible catalog, the same catalog, ranking and upstream path as the other profiles.

* search: ranked hits for a query (the browse ranker, restricted to a namespace when one is
  given), or every visible operation by name; names, types and card descriptions, never
  schemas (AM-SEARCH-HITS, AM-SEARCH-NO-SUBSCRIPTIONS).
* schema: the operation's HydrationResult (AM-SEARCH-SCHEMA-ERRORS).
* call: the upstream's own result, after the tool's input schema accepted the input
  (AM-SEARCH-CALL-RESULT).
* batch: each call as call would run it, independently, answered in order (AM-SEARCH-BATCH).

An operation a restricted caller may not see is FORBIDDEN whether or not it exists
(AM-ACCESS-NO-LEAK); nothing is sent upstream for it.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any, Final, Protocol

import anyio

from gatespec.access import Identity
from gatespec.catalog import Item, operation_of
from gatespec.runtime_contract import Caller, Relay, Reply
from gatespec.snapshot import Snapshot
from gatespec_surface.errors import ErrorCode, GatewayError
from gatespec_surface.operations import (
    BatchArgs,
    BatchCallsItem,
    CallArgs,
    SchemaArgs,
    SearchArgs,
)

__all__ = ["CatalogRuntime", "SearchProfile", "upstream_result"]

log = logging.getLogger(__name__)

QUERY: Final = "query"
MUTATION: Final = "mutation"
_NON_TEXT: Final = "({type} content)"


def upstream_result(raw: object) -> tuple[list[dict[str, Any]], dict[str, Any] | None, bool]:
    """(content blocks, structuredContent, isError) of an upstream result in wire form;
    UPSTREAM_ERROR when it is not one."""
    if not isinstance(raw, Mapping):
        raise GatewayError(ErrorCode.UPSTREAM_ERROR, "the upstream's result is not an object")
    content = raw.get("content", [])
    if not isinstance(content, list) or not all(
        isinstance(block, dict) and isinstance(block.get("type"), str) for block in content
    ):
        raise GatewayError(
            ErrorCode.UPSTREAM_ERROR, "the upstream's result content is not a list of blocks"
        )
    structured = raw.get("structuredContent")
    if structured is not None and not isinstance(structured, dict):
        raise GatewayError(
            ErrorCode.UPSTREAM_ERROR, "the upstream's structuredContent is not an object"
        )
    return content, structured, raw.get("isError") is True


def content_text(content: Sequence[Mapping[str, Any]]) -> str:
    """The text parts joined by newlines; other parts named by type."""
    parts = [
        str(block.get("text", "")) if block.get("type") == "text" else _NON_TEXT.format(**block)
        for block in content
    ]
    return "\n".join(parts)


def _hit(item: Item, description: str, score: float | None) -> dict[str, Any]:
    return {
        "operation": operation_of(item),
        "namespace": item.namespace,
        # AM-SEARCH-NO-SUBSCRIPTIONS: readOnlyHint true (side_effects false) is a query
        "type": QUERY if not item.side_effects else MUTATION,
        "description": description,
        "score": score,
    }


def _hit_line(hit: Mapping[str, Any]) -> str:
    return f"{hit['operation']} [{hit['type']}] {hit['description']}".rstrip()


class CatalogRuntime(Protocol):
    """What the search profile uses of the catalog runtime (gatespec.runtime.ProxyRuntime)."""

    async def snapshot_for(self, identity: Identity) -> Snapshot:
        """The current catalog snapshot as `identity` may see it."""
        ...

    def access(self, item: Item | None, name: str, identity: Identity) -> Item:
        """`item`, or FORBIDDEN / TOOL_NOT_FOUND for a name the caller cannot see."""
        ...

    def timed_ranking(self, started: float) -> None:
        """A query ranked since `started`, for the metrics."""
        ...

    async def invoke(
        self, item: Item, args: dict[str, Any], relay: Relay | None = None, session: str = ""
    ) -> dict[str, Any]:
        """The tool's raw upstream result, after its schema accepted `args`."""
        ...


class SearchProfile:
    """search, schema, call and batch over a catalog runtime's snapshots, access policy and
    upstream path (the runtime serves them as its meta-tools)."""

    def __init__(self, runtime: CatalogRuntime) -> None:
        self.runtime = runtime

    # ------------------------------------------------------------ search

    async def search(self, caller: Caller, args: SearchArgs) -> Reply:
        snapshot = await self.runtime.snapshot_for(caller.identity)
        catalog, cards = snapshot.catalog, snapshot.browser.cards
        items = catalog.items() if args.namespace is None else catalog.by_namespace(args.namespace)
        if args.query is None:
            chosen = sorted(items, key=operation_of)[: args.limit]
            hits = [_hit(item, cards[item.id]["description"], None) for item in chosen]
        else:
            only = None if args.namespace is None else {item.id for item in items}
            started = time.perf_counter()
            ranked, _ = snapshot.browser.ranker.search_counted(args.query, args.limit, only)
            self.runtime.timed_ranking(started)
            found = [(catalog.get(tool_id), score) for tool_id, score in ranked]
            hits = [_hit(i, cards[i.id]["description"], s) for i, s in found if i is not None]
            hits.sort(key=lambda h: (-h["score"], h["operation"]))
        text = "\n".join(_hit_line(h) for h in hits) if hits else "no operations match"
        return Reply(text, {"hits": hits})

    # ------------------------------------------------------------ schema

    async def _operation(self, caller: Caller, operation: str) -> Item:
        """The visible item `operation` names (FORBIDDEN or TOOL_NOT_FOUND otherwise)."""
        catalog = (await self.runtime.snapshot_for(caller.identity)).catalog
        return self.runtime.access(catalog.by_operation(operation), operation, caller.identity)

    async def schema(self, caller: Caller, args: SchemaArgs) -> Reply:
        item = await self._operation(caller, args.operation)
        catalog = (await self.runtime.snapshot_for(caller.identity)).catalog
        result = catalog.hydrate(item.id)
        return Reply(json.dumps(result, ensure_ascii=False, indent=1), result)

    # ------------------------------------------------------------ call, batch

    async def _run(
        self, caller: Caller, operation: str, input: dict[str, Any], relay: Relay | None = None
    ) -> dict[str, Any]:
        item = await self._operation(caller, operation)  # before anything reaches upstream
        return await self.runtime.invoke(item, input, relay, caller.session)

    async def call(self, caller: Caller, args: CallArgs) -> Reply:
        # What the upstream sends meanwhile reaches the client (AM-UPSTREAM-RELAY); a batch's
        # items run in parallel and would interleave under one progress token, so they do not.
        content, structured, is_error = upstream_result(
            await self._run(caller, args.operation, args.input, caller.relay)
        )
        return Reply(content_text(content), structured, content=tuple(content), is_error=is_error)

    async def batch(self, caller: Caller, args: BatchArgs) -> Reply:
        results: list[dict[str, Any]] = [{} for _ in args.calls]

        async def one(index: int, call: BatchCallsItem) -> None:
            results[index] = await self._batch_item(caller, call)

        async with anyio.create_task_group() as tg:
            for index, call in enumerate(args.calls):
                tg.start_soon(one, index, call)
        text = "\n".join(_item_text(n, r) for n, r in enumerate(results, 1))
        return Reply(text, {"results": results})

    async def _batch_item(self, caller: Caller, call: BatchCallsItem) -> dict[str, Any]:
        """One BatchItemResult; never raises (one failure does not fail the others)."""
        item: dict[str, Any] = {"operation": call.operation, "is_error": True, "content": []}
        try:
            raw = await self._run(caller, call.operation, call.input)
            content, structured, is_error = upstream_result(raw)
        except GatewayError as exc:
            return {**item, "structured_content": None, "error": exc.to_payload()}
        except Exception as exc:  # a bug must cost this item only
            log.exception("batch item %s failed unexpectedly", call.operation)
            error = GatewayError(
                ErrorCode.UPSTREAM_ERROR,
                f"the call failed inside the gateway: {type(exc).__name__}",
                call.operation,
            )
            return {**item, "structured_content": None, "error": error.to_payload()}
        return {
            **item,
            "is_error": is_error,
            "content": content,
            "structured_content": structured,
            "error": None,
        }


def _item_text(n: int, result: Mapping[str, Any]) -> str:
    head = f"[{n}] {result['operation']}"
    error = result.get("error")
    if error is not None:
        return f"{head}: {error['error']}: {error['message']}"
    status = "error" if result["is_error"] else "ok"
    return f"{head}: {status}\n{content_text(result['content'])}".rstrip()
