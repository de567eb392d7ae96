// Copied from generator/templates/typescript/_support/selectors.ts by `make generate`; do not edit.
/** tool_view selectors: "all", "lines:A-B", "bytes:A-B" and "json:POINTER". */

import type { ErrorFactory } from "./errors.js";
import type { GrammarInfo } from "./grammar.js";

/** A parsed selector. Line numbers are 1-based and inclusive; byte offsets 0-based and
 * inclusive; end null means "to the end". */
export interface ViewSelector {
  kind: "all" | "lines" | "bytes" | "json";
  start: number | null;
  end: number | null;
  pointer: string | null;
}

export class ViewSelectors {
  constructor(
    private readonly grammar: GrammarInfo,
    private readonly error: ErrorFactory,
  ) {}

  /** Throws the grammar's error (ARGS_INVALID) for a malformed selector, a line 0 or a range
   * that ends before it starts. */
  parse = (value: unknown): ViewSelector => {
    const groups = this.grammar.match(value, this.error);
    const text = value as string;
    if (text === "all") return { kind: "all", start: null, end: null, pointer: null };
    const pointer = groups["pointer"] ?? null;
    if (pointer !== null) return { kind: "json", start: null, end: null, pointer };
    const [kind, unit] = groups["line_start"] != null ? (["lines", "line"] as const) : (["bytes", "byte"] as const);
    const start = Number(groups[`${unit}_start`]);
    const endText = groups[`${unit}_end`];
    const end = text.endsWith("-") ? null : endText ? Number(endText) : start;
    if (kind === "lines" && start < 1) {
      throw this.error(this.grammar.error, `selector ${JSON.stringify(text)}: lines start at 1`, text);
    }
    if (end !== null && end < start) {
      throw this.error(this.grammar.error, `selector ${JSON.stringify(text)}: the range ends before it starts`, text);
    }
    return { kind, start, end, pointer: null };
  };
}
