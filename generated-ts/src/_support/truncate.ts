// Copied from generator/templates/typescript/_support/truncate.ts by `make generate`; do not edit.
/** Description truncation (§2.4 under AM-TRUNC-CHAR-BOUNDARY and AM-SENTENCE-ENDS):
 *
 * 1. collapse white space, line breaks included, to single spaces: a card description is one
 *    line;
 * 2. within budget: emit verbatim;
 * 3. else the longest prefix ending at a sentence end whose own token count fits;
 * 4. else the longest prefix of whole characters with at most budget - 1 tokens, plus the
 *    ellipsis; while that still exceeds the budget, the prefix loses one character at a time.
 *
 * Positions are code points. Counting every prefix would be quadratic, so the search stops
 * where a prefix already holds budget + SLACK tokens, and a binary search is followed by a
 * window in which a count may dip as a word completes (gatespec's runtime bounds it the same
 * way; the conformance kit checks the answers against counting every prefix). */

import { PY_WHITESPACE, isPySpace } from "./text.js";

const SLACK = 8; // tokens past the budget still searched
const DIP_WINDOW = 8; // characters past a binary-search answer still searched

export interface TruncationRules {
  terminators: readonly string[];
  terminatorsNeedingSpace: readonly string[];
  ellipsis: string;
  collapseWhitespace: boolean;
  lineBreaks: readonly string[];
  count: (text: string) => number;
}

export class Truncation {
  private readonly terminators: ReadonlySet<string>;
  private readonly needSpace: ReadonlySet<string>;

  constructor(private readonly r: TruncationRules) {
    // A sentence ends at one terminator character.
    this.terminators = new Set(r.terminators.filter((t) => Array.from(t).length === 1));
    this.needSpace = new Set(r.terminatorsNeedingSpace);
  }

  /** One line: runs of white space become one space, ends trimmed (Python's str.split()). */
  collapse = (text: string): string => {
    if (this.r.collapseWhitespace) return text.split(PY_WHITESPACE).filter((w) => w !== "").join(" ");
    let out = text;
    for (const brk of this.r.lineBreaks) out = out.split(brk).join(" ");
    return out;
  };

  /** `text` as one line of at most `budget` tokens; a budget below one token gives "". */
  truncate = (text: string, budget: number): string => {
    const line = this.collapse(text);
    if (budget <= 0 || line === "") return "";
    if (this.r.count(line) <= budget) return line;
    const chars = Array.from(line);
    const fits = (k: number, n: number): boolean => this.r.count(chars.slice(0, k).join("")) <= n;
    const sentence = this.sentencePrefix(chars, budget, longestPrefix((k) => fits(k, budget + SLACK), chars.length));
    if (sentence !== null) return sentence;
    const limit = longestPrefix((k) => fits(k, budget - 1 + SLACK), chars.length);
    let keep = longestPrefix((k) => fits(k, budget - 1), limit);
    for (;;) {
      // the ellipsis may not merge as hoped: shrink until the result fits
      const result = chars.slice(0, keep).join("") + this.r.ellipsis;
      if (this.r.count(result) <= budget) return result;
      if (keep === 0) return "";
      keep -= 1;
    }
  };

  private sentencePrefix(chars: string[], budget: number, limit: number): string | null {
    for (let end = Math.min(limit + 1, chars.length); end > 0; end--) {
      if (this.endsSentence(chars, end)) {
        const prefix = chars.slice(0, end).join("");
        if (this.r.count(prefix) <= budget) return prefix;
      }
    }
    return null;
  }

  /** Does chars[:end] end at a sentence end (AM-SENTENCE-ENDS)? */
  private endsSentence(chars: string[], end: number): boolean {
    const ch = chars[end - 1]!;
    if (!this.terminators.has(ch)) return false;
    return !this.needSpace.has(ch) || end === chars.length || isPySpace(chars[end]!);
  }
}

/** The largest k in [0, hi] with fits(k), given fits(0) and counts that grow with k except
 * for dips inside one word. */
function longestPrefix(fits: (k: number) => boolean, hi: number): number {
  if (fits(hi)) return hi;
  let lo = 0;
  let up = hi; // fits(lo) and not fits(up)
  while (up - lo > 1) {
    const mid = Math.floor((lo + up) / 2);
    if (fits(mid)) lo = mid;
    else up = mid;
  }
  let best = lo;
  for (let k = lo + 2; k <= Math.min(hi, lo + DIP_WINDOW); k++) if (fits(k)) best = k;
  return best;
}
