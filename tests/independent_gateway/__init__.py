"""A second, independent MCP gateway built from the seeds' text (never from gatespec).

Run: python -m tests.independent_gateway --config FILE [--profile gateway|transparent|search|
aggregate] [--cache-stable] [--transport http --port N --access IDENTITIES.json]

Modules: ids (§1), cards (§2), upstream (config + SDK clients), catalog (ids, cards, collisions),
browse (§3 paths, query ranking, §5 order), envelope (seed 002 firewall + tool_view),
errors (seed 002 error shape), server (the profiles, the MCP boundary); search and
search_server (seed 003 with AM-ACCESS-CONTROL/AM-ACCESS-NO-LEAK), http_serve (bearer tokens,
one SDK app per identity), aggregate (seed 001's registry with seed 004's "__"). README.md
says how the search and aggregate profiles differ from gatespec and what the kit charged them;
the notes below are the gateway and transparent profiles' (seeds 000 and 002 only).

Choices where the seeds are silent (or leave the choice to the implementation):

- Namespaces come from the upstream tool name (§1.4 / infer_namespace): the first '.' or '/'
  splits namespace and name; else an '_' name of >= 3 segments lends its first segment and keeps
  the name verbatim; else `mcp`. A prefix that is not a valid namespace once lower-cased falls
  back to `mcp` with the name verbatim. The config key never enters the id.
- version is `_meta.version` when it is a string matching §1.1's version grammar; then no hash8
  is emitted (§1.2 requires hash8 only without a version). Otherwise hash8 per §1.3.
- A tool whose name cannot form a §1.1 id is left out of the catalog and logged on stderr. So is
  a listed tool that is not a valid MCP Tool (e.g. an inputSchema that is a list): the SDK
  validates tools/list as a whole, so a thin transport wrapper drops such entries first and
  keeps the raw tool dicts (the SDK models drop annotations.costHint).
- Collisions (§1.5): when two upstream tools resolve to one tool_id, every claimant is withheld,
  a CatalogError line naming both goes to stderr, the other tools are served normally, and any
  call naming that id answers HYDRATE_FAILED whose message names the colliding tools.
- A card over the 80-token hard cap after truncation (§2.3) is likewise a CatalogError: withheld,
  logged, and HYDRATE_FAILED on use.
- Card fields: name = the id's name part (cut to 64 chars with '…' if longer); tags from the
  untrusted hints readOnlyHint -> "read-only", destructiveHint -> "destructive"; side_effects =
  not readOnlyHint; cost_hint = annotations.costHint when positive (read from the raw
  listing); has_schema = the tool declared an inputSchema object.
- Rendering (what the §2.3 budgets are measured on): one line per card,
  `id | name | kind | ns=<namespace> | schema=yes|no [| tags=a,b] [| cost=x] [| side-effects]
  [| description]`; a browse renders a preamble line (<= 32 tokens) then one line per card.
  The description budget is 60 tokens (the target) minus the rest of the line, or what the
  80-token hard cap leaves when that is under 8. Descriptions are first folded to one line.
- §2.2 in descriptions: a stringified schema or metadata map (`args_schema: {...}`,
  `inputSchema=...`, `"_meta": {...}`, `annotations: {...}`) loses its key and value before
  truncation; other text is kept.
- §2.4 read literally: any '.', '!' or '?' ends a candidate prefix; the hard cut keeps the bytes
  of the first budget-1 tokens, backed off to a whole UTF-8 character, then appends '…'.
- Meta-tool answers are one TextContent holding a JSON document, never structuredContent.
  tool_browse answers {"path"|"query", "cards": [card JSON], "rendered": "<prompt text>"}.
- Path tree: '/' lists one internal card per namespace (id "/<ns>"); '/<ns>' lists its tool
  cards; '/<ns>/<leaf>' returns that one card, where leaf = the name lower-cased with characters
  outside [a-z0-9_-] turned into '-' (leading '_'/'-' dropped, cut to 64), and same-leaf
  siblings suffixed '-<8 hex of sha256(tool_id)>'. A trailing '*' equals leaving it out; '*'
  elsewhere is well-formed but addresses nothing: PATH_NOT_FOUND. A JSON null argument counts
  as absent; a blank query is ARGS_INVALID; unknown arguments are ARGS_INVALID.
- Query browse: Okapi BM25 (k1 1.2, b 0.75) over upstream name, namespace, tags and
  description, words split on case and punctuation; top 10 with a positive score; score rounded
  to 4 places. Path browses carry no score.
- Cache-stable (§5): per process (stdio serves one session). Every card id a browse emits, and
  every successfully hydrated tool (tool_hydrate, or the implicit hydration in tool_execute),
  enters the seen-set with its content frozen at first sighting. The marker's namespace is "".
- tool_execute: a missing/null args is {}; a %-encoded tool_id is decoded (ids never contain
  '%'); malformed id -> ARGS_INVALID, unknown id -> HYDRATE_FAILED; an upstream schema that is
  not valid JSON Schema -> HYDRATE_FAILED; args are validated with jsonschema (draft picked by
  $schema) before any upstream call. Transport failure or timeout -> UPSTREAM_ERROR with
  retryable true; an upstream isError result -> UPSTREAM_ERROR (retryable false) whose details
  carry the envelope.
- Envelope: {status, summary, facts, artifacts, provenance}. Text parts are joined by newlines;
  over 500 chars the summary is cut to 499 + '…' and the whole text kept as artifact
  "full_text". Images/audio/blobs are decoded into artifacts, embedded text resources add to
  the text and are kept, resource links keep their URI, structuredContent is a JSON artifact and
  its top-level keys become "key: value" facts (at most 32, each <= 200 chars). Part
  annotations go to provenance.content_annotations with their part_index.
- Artifact handles: `mcp:<upstream tool>:<label>.<n>`, n counting executions in this process.
  Kept in memory (512 items / 64 MiB, oldest evicted first).
- tool_view(handle, selector): '' or 'head' = start of a text artifact; 'chars:A-B' (0-based,
  end exclusive), 'lines:A-B' (1-based, inclusive), 'bytes:A-B' (base64, <= 3000 bytes),
  'json:/pointer' (RFC 6901; a pointer not starting with '/' or with '~' not followed by 0/1
  is malformed). Text is capped at 4000 chars with "truncated". Unknown handle,
  unresolvable pointer, or a text selector on a binary -> VIEW_FAILED; malformed selector ->
  ARGS_INVALID.
- Transparent profile: tools/list holds one stripped entry per tool (name = the tool_id as is,
  not URL-encoded; description = the card description; inputSchema {"type": "object"}), sorted
  by id, then tool_hydrate and tool_execute. Calling a stripped entry, or any unknown name,
  answers ARGS_INVALID. tool_hydrate answers {tool_id, description, inputSchema,
  [outputSchema], [annotations]}.
- Errors: {"error", "message", "path", "details", "retryable"}; an unexpected internal failure
  still answers (UPSTREAM_ERROR, or VIEW_FAILED / HYDRATE_FAILED inside those tools).
- Upstreams: stdio entries (command, args, env, cwd; `${VAR}` expanded; the gateway's own
  environment is passed through) and `url` entries (Streamable HTTP), one persistent SDK client
  each, listed once at start-up (the catalog is a snapshot: upstream list_changed is not
  followed). An upstream that fails to start is logged and left out. Upstream calls time out
  after 120 s (UPSTREAM_ERROR, retryable).
"""
