// Copied from generator/templates/typescript/_support/paths.ts by `make generate`; do not edit.
/** Browse paths (§3.2, AM-PATH-BOUNDS): "/" or "/ns/segment/...", optionally ending in "*". */

import type { ErrorFactory } from "./errors.js";
import type { GrammarInfo } from "./grammar.js";

/** A parsed browse path: its segments below the root and whether it ends in "*". */
export interface PathParts {
  segments: string[];
  star: boolean;
}

export class Paths {
  constructor(
    private readonly grammar: GrammarInfo,
    private readonly error: ErrorFactory,
  ) {}

  /** Throws the path grammar's error (PATH_INVALID) naming what was wrong. */
  parse = (value: unknown): PathParts => {
    this.grammar.match(value, this.error);
    const segments = (value as string).split("/").filter((s) => s !== "");
    const star = segments.length > 0 && segments[segments.length - 1] === "*";
    if (star) segments.pop();
    return { segments, star };
  };

  format = (parts: PathParts): string => {
    const text = "/" + [...parts.segments, ...(parts.star ? ["*"] : [])].join("/");
    this.grammar.match(text, this.error);
    return text;
  };
}
