"""Handshake-era client sessions that every replica can serve (AM-SHARED-SESSIONS; the redis
state backend only: with the memory backend a session stays in the replica that opened it).

"Forward" here is replica traffic: a POST one replica receives and another serves. It is not
the spec's relay (AM-UPSTREAM-RELAY: what an upstream sends, passed to the client, in
server.relay and upstream.relay).

- registry: the sessions in the shared store (one record each) and this replica's
  subscriptions to their channels
- event_store: a Streamable HTTP session's resumable events in the shared store
- http_sessions: /mcp sessions opened on one replica and adopted on another
- answer_forward: a client's answer or cancellation reaching the replica that waits for it
- sse_forward: legacy /messages POSTs reaching the replica that holds the /sse stream
- forwarded_posts: how a POST crosses the store and is served on the other side

server.transports wires them in front of the SDK's apps when the backend is shared.
"""
