// Copied from generator/templates/typescript/_support/ids.ts by `make generate`; do not edit.
/** Tool ids (§1.1-§1.6): parse and format, hash8 over the schema shape (§1.3), the name an
 * upstream tool gets (AM-NAME-MAPPING) and the id an adapter emits. */

import { createHash } from "node:crypto";

import type { ErrorFactory } from "./errors.js";
import type { GrammarInfo } from "./grammar.js";
import { codePoints, compareCodePoints, isObject, pyJsonDumps, pyStr, takeCodePoints } from "./text.js";

/** The four parts of a tool_id (the ToolIdParts model). */
export interface ToolIdParts {
  namespace: string;
  name: string;
  version: string | null;
  hash8: string | null;
}

/** §1.3: top-level property names and required names, sorted, as compact JSON (Python's
 * json.dumps with sort_keys, so non-ASCII names are \\u-escaped). A `properties` that is not
 * an object counts as none, a `required` that is not a list as empty. */
export function canonicalShape(inputSchema: unknown): string {
  const schema = isObject(inputSchema) ? inputSchema : {};
  const props = schema["properties"];
  const required = schema["required"];
  return pyJsonDumps({
    properties: isObject(props) ? Object.keys(props).sort(compareCodePoints) : [],
    required: Array.isArray(required) ? required.map(pyStr).sort(compareCodePoints) : [],
  });
}

/** §1.3: first 8 hex digits of sha256(upstream name + "\n" + canonical shape). */
export function hash8(upstreamName: string, inputSchema: unknown): string {
  const canonical = upstreamName + "\n" + canonicalShape(inputSchema);
  return createHash("sha256").update(canonical, "utf8").digest("hex").slice(0, 8);
}

/** AM-NAME-MAPPING: an upstream name the name grammar rejects gets `prefix`, and each of its
 * characters outside the grammar's alphabet becomes `replacement`, cut to the grammar's
 * longest name. */
export class NameMapping {
  private readonly alphabet: string;
  private readonly maxLength: number;

  constructor(
    readonly name: GrammarInfo,
    readonly prefix: string,
    readonly replacement: string,
  ) {
    if (name.alphabet === null || name.maxLength === null) {
      throw new Error(`${name.name} needs a finite alphabet and a length cap`);
    }
    this.alphabet = name.alphabet;
    this.maxLength = name.maxLength;
  }

  /** The name part of a tool_id for an upstream name: itself when the grammar admits it,
   * else the mapped form (never a dropped tool). */
  toolName(upstreamName: string): string {
    if (this.name.accepts(upstreamName)) return upstreamName;
    let mapped = this.prefix;
    for (const ch of upstreamName) mapped += this.alphabet.includes(ch) ? ch : this.replacement;
    return takeCodePoints(mapped, this.maxLength);
  }
}

export interface ToolIdGrammars {
  toolId: GrammarInfo;
  namespace: GrammarInfo;
  name: NameMapping;
  version: GrammarInfo;
  hash8: GrammarInfo;
  error: ErrorFactory;
}

/** §1.6 parse_tool_id / format_tool_id over the tool_id grammar, whose captures are the
 * parts, and the id an adapter emits (§1.2-§1.4, AM-NAMESPACE-FROM-CONFIG). */
export class ToolIds {
  constructor(private readonly g: ToolIdGrammars) {
    const fields = ["namespace", "name", "version", "hash8"];
    if ([...g.toolId.captures].sort().join() !== [...fields].sort().join()) {
      throw new Error(`${g.toolId.name} captures ${g.toolId.captures.join()}, not ${fields.join()}`);
    }
  }

  get names(): NameMapping {
    return this.g.name;
  }

  /** §1.6: split a tool_id into its parts; throws the tool_id grammar's error. */
  parse = (value: unknown): ToolIdParts => {
    const c = this.g.toolId.match(value, this.g.error);
    return { namespace: c["namespace"]!, name: c["name"]!, version: c["version"] ?? null, hash8: c["hash8"] ?? null };
  };

  /** §1.6: the inverse of parse; throws when a part is malformed. */
  format = (parts: ToolIdParts): string => {
    const { error } = this.g;
    this.g.namespace.match(parts.namespace, error);
    this.g.name.name.match(parts.name, error);
    let out = `${parts.namespace}:${parts.name}`;
    if (parts.version !== null && parts.version !== undefined) {
      this.g.version.match(parts.version, error);
      out += `@${parts.version}`;
    }
    if (parts.hash8 !== null && parts.hash8 !== undefined) {
      this.g.hash8.match(parts.hash8, error);
      out += `#${parts.hash8}`;
    }
    const max = this.g.toolId.maxLength;
    if (max !== null && codePoints(out) > max) {
      throw error(this.g.toolId.error, `tool_id is ${codePoints(out)} characters; the limit is ${max}`, out);
    }
    return out;
  };

  /** The tool_id an adapter emits: the declared version when it is valid, else the `digest`
   * (hash8) of the upstream name and schema. Throws when the namespace cannot be an id's. */
  make = (
    namespace: string,
    upstreamName: string,
    inputSchema: unknown,
    version: string | null = null,
    digest: (name: string, schema: unknown) => string = hash8,
  ): string => {
    const name = this.g.name.toolName(upstreamName);
    if (version !== null && this.g.version.accepts(version)) {
      return this.format({ namespace, name, version, hash8: null });
    }
    return this.format({ namespace, name, version: null, hash8: digest(upstreamName, inputSchema) });
  };
}
