// Copied from generator/templates/typescript/_support/wire.ts by `make generate`; do not edit.
/** Wire-safe names (AM-WIRE-NAME): a tool_id escaped into a name strict MCP clients accept,
 * reversibly, or shortened to a prefix plus a digest when the escaped id is too long (only the
 * catalog that issued a shortened name can resolve it). */

import { createHash } from "node:crypto";

import type { ErrorFactory } from "./errors.js";
import type { GrammarInfo } from "./grammar.js";
import { codePoints } from "./text.js";

export interface WireEncoding {
  toolId: GrammarInfo;
  wireName: GrammarInfo;
  escape: string;
  escapes: Readonly<Record<string, string>>;
  marker: string;
  digestChars: number;
  maxLength: number;
  error: ErrorFactory;
}

// Only syntax characters: unicode mode rejects identity escapes such as "\\-".
const escapeRegExp = (text: string): string => text.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");

export class WireNames {
  private readonly unescapes: Map<string, string>;
  private readonly prefixMax: number;
  private readonly short: RegExp;

  constructor(private readonly w: WireEncoding) {
    this.unescapes = new Map(Object.entries(w.escapes).map(([k, v]) => [v, k]));
    this.prefixMax = w.maxLength - codePoints(w.marker) - w.digestChars;
    this.short = new RegExp(`^(?<prefix>.*)${escapeRegExp(w.marker)}(?<digest>[0-9a-f]{${w.digestChars}})$`, "u");
  }

  /** A name strict MCP clients accept. Reversible by decode unless the escaped id is too
   * long, in which case it is a prefix plus a digest of the id. */
  encode = (toolId: string): string => {
    this.w.toolId.match(toolId, this.w.error);
    const pieces = Array.from(toolId, (ch) => this.w.escapes[ch] ?? ch);
    const full = pieces.join("");
    if (codePoints(full) <= this.w.maxLength) return full;
    let prefix = "";
    for (const piece of pieces) {
      // never split an escape sequence
      if (codePoints(prefix) + codePoints(piece) > this.prefixMax) break;
      prefix += piece;
    }
    const digest = createHash("sha256").update(toolId, "utf8").digest("hex").slice(0, this.w.digestChars);
    return prefix + this.w.marker + digest;
  };

  /** True for the prefix+digest form, which only the issuing catalog can resolve. */
  isShortened = (name: string): boolean => {
    const m = this.short.exec(name);
    return m !== null && this.unescape(m.groups?.["prefix"] ?? "") !== null;
  };

  private unescape(text: string): string | null {
    let out = "";
    let i = 0;
    while (i < text.length) {
      if (text[i] === this.w.escape) {
        const original = this.unescapes.get(text.slice(i, i + 2));
        if (original === undefined) return null;
        out += original;
        i += 2;
      } else {
        out += text[i];
        i += 1;
      }
    }
    return out;
  }

  /** The tool_id a full (not shortened) wire name stands for. Throws the wire-name grammar's
   * error (NAME_INVALID) when the name is malformed or shortened. */
  decode = (name: unknown): string => {
    this.w.wireName.match(name, this.w.error);
    const text = name as string;
    const code = this.w.wireName.error;
    if (this.isShortened(text)) {
      throw this.w.error(code, `wire name ${JSON.stringify(text)} is a shortened id; only the catalog that issued it can resolve it`, text);
    }
    const toolId = this.unescape(text);
    if (toolId === null) throw this.w.error(code, `wire name ${JSON.stringify(text)} has an unknown escape`, text);
    if (!this.w.toolId.accepts(toolId)) {
      throw this.w.error(code, `wire name ${JSON.stringify(text)} does not decode to a tool_id`, text);
    }
    return toolId;
  };
}
