"""The aggregate profile (seeds 001 and 004): one namespaced MCP server in front of many.

    runtime = AggregateRuntime.from_config(config)      # registry, routing, plugins (runtime)
    server = build_aggregate_server(runtime)            # its MCP server (server)

Modules: naming (the boundary translation server__name / server+uri), routing (the single
parse point), plugins (the chain, tool_filter, audit_log), pages (paged snapshots of merged
lists), broadcast (one list merged from every upstream), policy (what the access policy decides
about), subscriptions (the sessions of each subscribed resource), client_upstreams, runtime,
server. Imported on use: the other profiles need none of it.
"""

from gatespec.profiles.aggregate.runtime import AggregateRuntime

__all__ = ["AggregateRuntime"]
