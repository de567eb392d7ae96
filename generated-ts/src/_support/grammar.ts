// Copied from generator/templates/typescript/_support/grammar.ts by `make generate`; do not edit.
/** A compiled grammar of the surface: full-match acceptance within the length cap, and errors
 * that say what was wrong with a rejected value.
 *
 * The pattern is the generator's portable regex (named captures in ECMAScript spelling),
 * anchored as ^(?:...)$ with the `u` flag: without the `m` flag `$` matches only at the end of
 * the input, so "/github\n" is refused as Python's fullmatch refuses it, and character classes
 * match code points. Lengths count code points, as the spec's bounds do. */

import type { ErrorFactory } from "./errors.js";
import { codePoints, takeCodePoints } from "./text.js";

export type Captures = Record<string, string | null>;
export type Matcher = (value: unknown) => Captures;

const SHOWN_MAX = 80;

export interface GrammarSpec {
  readonly name: string;
  readonly summary: string;
  readonly syntax: string;
  /** ECMAScript regex source with named captures; matched in full. */
  readonly pattern: string;
  /** The portable JSON-Schema pattern. */
  readonly jsonPattern: string;
  readonly minLength: number;
  readonly maxLength: number | null;
  readonly error: string;
  readonly captures: readonly string[];
  /** Every character the grammar can use (null when a negated class makes it open). */
  readonly alphabet: string | null;
}

// The class carries the spec's fields as they are (declaration merging), plus the compiled regex.
export interface GrammarInfo extends GrammarSpec {}

export class GrammarInfo {
  readonly regex: RegExp;

  constructor(spec: GrammarSpec) {
    Object.assign(this, spec);
    this.regex = new RegExp(`^(?:${spec.pattern})$`, "u");
  }

  private withinCap(value: string): boolean {
    return this.maxLength === null || codePoints(value) <= this.maxLength;
  }

  /** True when `value` is a string the grammar matches in full, within its length cap. */
  accepts(value: unknown): boolean {
    return typeof value === "string" && this.withinCap(value) && this.regex.test(value);
  }

  /** The named captures of a full match; throws the grammar's error naming what was wrong. */
  match(value: unknown, error: ErrorFactory): Captures {
    if (typeof value !== "string") {
      const type = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
      const shown = takeCodePoints(String(JSON.stringify(value)), SHOWN_MAX);
      throw error(this.error, `${this.name} must be a string, not ${type}`, shown);
    }
    const m = this.withinCap(value) ? this.regex.exec(value) : null;
    if (m === null) throw error(this.error, this.explain(value), value);
    const out: Captures = {};
    for (const name of this.captures) out[name] = m.groups?.[name] ?? null;
    return out;
  }

  /** `match` bound to an error factory: the generated `matchNAME` functions. */
  matcher(error: ErrorFactory): Matcher {
    return (value: unknown) => this.match(value, error);
  }

  /** What is wrong with a value the grammar rejects, as precisely as is cheap. */
  explain(value: string): string {
    const length = codePoints(value);
    const shown = JSON.stringify(
      length <= SHOWN_MAX ? value : takeCodePoints(value, SHOWN_MAX - 3) + "...",
    );
    if (value === "") return `${this.name} is empty; expected ${this.syntax}`;
    if (this.maxLength !== null && length > this.maxLength) {
      return `${this.name} ${shown} is ${length} characters; the limit is ${this.maxLength}`;
    }
    if (length < this.minLength) {
      return `${this.name} ${shown} is ${length} characters; the minimum is ${this.minLength}`;
    }
    if (value.endsWith("\n") || value.endsWith("\r")) return `${this.name} ${shown} ends with a line break`;
    if (this.alphabet !== null) {
      let i = 0;
      for (const ch of value) {
        if (!this.alphabet.includes(ch)) {
          return `${this.name} ${shown} has ${JSON.stringify(ch)} at position ${i}, which it never allows`;
        }
        i++;
      }
    }
    return `${this.name} ${shown} does not match ${this.syntax}`;
  }
}
