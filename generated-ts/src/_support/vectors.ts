// Copied from generator/templates/typescript/_support/vectors.ts by `make generate`; do not edit.
/** The dispatcher of the language-neutral test vectors: each vector function takes the case's
 * JSON input and answers with the surface's own code, {ok: value} or {error: CODE}. The same
 * functions answer the conformance kit's layer-1 protocol (the package's adapter). */

import { readFileSync } from "node:fs";

import type { AnnotationFields } from "./annotations.js";
import { SurfaceError } from "./errors.js";
import type { Matcher } from "./grammar.js";
import type { ToolIdParts } from "./ids.js";
import type { PathParts } from "./paths.js";
import type { ViewSelector } from "./selectors.js";

// The input of a case is whatever JSON the vector file holds; each function reads its keys.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Input = Record<string, any>;
export type VectorFunction = (input: Input) => unknown;
export type Answer = { ok: unknown } | { error: string };

export interface VectorCase {
  name: string;
  function: string;
  input: Input;
  expect: Answer;
  requirements?: string[];
  amended_by?: string[];
  [key: string]: unknown;
}

/** The functions of the surface the vectors exercise. */
export interface Surface {
  matchers: Readonly<Record<string, Matcher>>;
  parseToolId: (value: unknown) => ToolIdParts;
  formatToolId: (parts: ToolIdParts) => string;
  hash8: (upstreamName: string, inputSchema: unknown) => string;
  makeToolId: (namespace: string, upstreamName: string, inputSchema: unknown, version?: string | null) => string;
  parsePath: (value: unknown) => PathParts;
  encodeWireName: (toolId: string) => string;
  decodeWireName: (name: unknown) => string;
  parseAggregateName: (value: unknown) => [string, string];
  formatAggregateName: (server: string, tool: string) => string;
  parseResourceUri: (value: unknown) => [string, string];
  formatResourceUri: (server: string, uri: string) => string;
  parseSearchOperation: (value: unknown) => [string, string];
  parseViewSelector: (value: unknown) => ViewSelector;
  serverKey: (configKey: string) => string;
  annotationFields: (annotations: unknown) => AnnotationFields;
  renderCard: (card: Record<string, unknown>) => string;
  validateCard: (card: unknown) => void;
}

/** Vector function name -> how the surface answers it. */
export function functions(s: Surface): Record<string, VectorFunction> {
  return {
    grammar_match: (inp) => {
      const matcher = s.matchers[inp["grammar"]];
      if (matcher === undefined) throw new TypeError(`no grammar ${JSON.stringify(inp["grammar"])}`);
      matcher(inp["value"]);
      return true;
    },
    parse_tool_id: (inp) => s.parseToolId(inp["value"]),
    format_tool_id: (inp) => {
      const p = inp["parts"];
      return s.formatToolId({ namespace: p.namespace, name: p.name, version: p.version ?? null, hash8: p.hash8 ?? null });
    },
    hash8: (inp) => s.hash8(inp["upstream_name"], inp["input_schema"]),
    make_tool_id: (inp) => s.makeToolId(inp["namespace"], inp["upstream_name"], inp["input_schema"], inp["version"] ?? null),
    parse_path: (inp) => s.parsePath(inp["value"]),
    encode_wire_name: (inp) => s.encodeWireName(inp["tool_id"]),
    decode_wire_name: (inp) => s.decodeWireName(inp["name"]),
    parse_aggregate_name: (inp) => {
      const [server, tool] = s.parseAggregateName(inp["value"]);
      return { server, tool };
    },
    format_aggregate_name: (inp) => s.formatAggregateName(inp["server"], inp["name"]),
    parse_resource_uri: (inp) => {
      const [server, uri] = s.parseResourceUri(inp["value"]);
      return { server, uri };
    },
    format_resource_uri: (inp) => s.formatResourceUri(inp["server"], inp["uri"]),
    parse_search_operation: (inp) => {
      const [namespace, name] = s.parseSearchOperation(inp["value"]);
      return { namespace, name };
    },
    parse_view_selector: (inp) => s.parseViewSelector(inp["value"]),
    server_key: (inp) => s.serverKey(inp["config_key"]),
    annotation_fields: (inp) => s.annotationFields(inp["annotations"]),
    render_card: (inp) => s.renderCard(inp["card"]),
    validate_card: (inp) => {
      s.validateCard(inp["card"]);
      return true;
    },
  };
}

/** Answer one case: {ok: value} or {error: CODE}; anything but a surface error is a bug and
 * propagates. */
export function runCase(table: Readonly<Record<string, VectorFunction>>, c: { function: string; input: Input }): Answer {
  const fn = table[c.function];
  if (fn === undefined) throw new TypeError(`no vector function ${JSON.stringify(c.function)}`);
  try {
    return { ok: fn(c.input) };
  } catch (exc) {
    if (exc instanceof SurfaceError) return { error: exc.code };
    throw exc;
  }
}

/** Every case of the vector files in `folder`, in file order. */
export function loadCases(folder: URL, files: readonly string[]): VectorCase[] {
  const out: VectorCase[] = [];
  for (const name of files) {
    const doc = JSON.parse(readFileSync(new URL(name, folder), "utf8")) as { cases: VectorCase[] };
    out.push(...doc.cases);
  }
  return out;
}
