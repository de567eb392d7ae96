/** Server keys (AM-NAMESPACE-FROM-CONFIG), aggregate names server__tool (seed 004), aggregate
 * resource URIs server+uri (AM-RESOURCE-URI) and search operations "/namespace/name" (seed 003). */

import type { ErrorFactory } from "./errors.js";
import type { Captures, GrammarInfo } from "./grammar.js";
import { takeCodePoints } from "./text.js";

const OUTSIDE_KEY = /[^a-z0-9]+/gu;
const DIGIT_PREFIX = "s-";
export const SEPARATOR = "__";

function pair(groups: Captures, first: string, second: string): [string, string] {
  return [groups[first]!, groups[second]!];
}

export class ServerKeys {
  private readonly maxLength: number;

  constructor(
    private readonly grammar: GrammarInfo,
    private readonly error: ErrorFactory,
  ) {
    if (grammar.maxLength === null) throw new Error(`${grammar.name} needs a length cap`);
    this.maxLength = grammar.maxLength;
  }

  /** Lower-case, runs outside [a-z0-9] become "-", no leading or trailing "-", "s-" before a
   * leading digit, at most the grammar's longest. Throws the grammar's error (UNKNOWN_SERVER)
   * for a key with no letter or digit. */
  fromConfigKey = (configKey: string): string => {
    let key = configKey.toLowerCase().replace(OUTSIDE_KEY, "-").replace(/^-+|-+$/g, "");
    if (key === "") {
      const message = `config key ${JSON.stringify(configKey)} has no letters or digits to make a server key from`;
      throw this.error(this.grammar.error, message, configKey);
    }
    if (!/^[a-z]/.test(key)) key = DIGIT_PREFIX + key;
    key = takeCodePoints(key, this.maxLength).replace(/-+$/, "");
    this.grammar.match(key, this.error);
    return key;
  };
}

/** server__tool, split once at the boundary. `notNamespaced` is the code for a name with no
 * separator at all; every other malformation throws the grammar's error. */
export class AggregateNames {
  constructor(
    private readonly grammar: GrammarInfo,
    private readonly notNamespaced: string,
    private readonly error: ErrorFactory,
  ) {}

  parse = (value: unknown): [string, string] => {
    if (typeof value === "string" && !value.includes(SEPARATOR)) {
      throw this.error(this.notNamespaced, `tool ${JSON.stringify(value)} is not namespaced; expected server${SEPARATOR}tool`, value);
    }
    return pair(this.grammar.match(value, this.error), "server", "tool");
  };

  /** Egress: server__tool; throws the grammar's error when the result is malformed. */
  format = (serverKey: string, toolName: string): string => {
    const name = `${serverKey}${SEPARATOR}${toolName}`;
    this.grammar.match(name, this.error);
    return name;
  };
}

/** server_key + "+" + the upstream URI (AM-RESOURCE-URI), split at the first "+". */
export class ResourceUris {
  static readonly MARK = "+";

  constructor(
    private readonly grammar: GrammarInfo,
    private readonly notNamespaced: string,
    private readonly error: ErrorFactory,
  ) {}

  /** Ingress: [server key, the upstream's URI]. */
  parse = (value: unknown): [string, string] => {
    if (typeof value === "string" && !(value.split(":", 1)[0] ?? "").includes(ResourceUris.MARK)) {
      throw this.error(this.notNamespaced, `resource URI ${JSON.stringify(value)} is not namespaced; expected server${ResourceUris.MARK}uri`, value);
    }
    return pair(this.grammar.match(value, this.error), "server", "uri");
  };

  /** Egress: server+uri; throws the grammar's error when the URI cannot be namespaced. */
  format = (serverKey: string, uri: string): string => {
    const namespaced = `${serverKey}${ResourceUris.MARK}${uri}`;
    this.grammar.match(namespaced, this.error);
    return namespaced;
  };
}

export class SearchOperations {
  constructor(
    private readonly grammar: GrammarInfo,
    private readonly error: ErrorFactory,
  ) {}

  /** "/namespace/name" -> [namespace, name]. */
  parse = (value: unknown): [string, string] => pair(this.grammar.match(value, this.error), "namespace", "name");

  format = (namespace: string, name: string): string => {
    const op = `/${namespace}/${name}`;
    this.grammar.match(op, this.error);
    return op;
  };
}
