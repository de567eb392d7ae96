// Copied from generator/templates/typescript/_support/text.ts by `make generate`; do not edit.
/** Text that reaches a client: one way to make it encodable, one way to cut it, one way to
 * name a JSON value's type, and Python's string rules where the surface's answers depend on
 * them (code-point lengths and order, `str.lower`, JSON with ensure_ascii). */

import { PY_SPACE_CLASS } from "./pyspace.js";

/** Lone UTF-16 surrogates cannot be encoded as UTF-8; text quoted back is scrubbed first. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** `text` with each lone surrogate replaced by U+FFFD, so it always encodes as UTF-8. */
export function scrub(text: string): string {
  return text.replace(LONE_SURROGATE, "\uFFFD");
}

/** Python's white space (str.isspace()), written by the generator from Python itself:
 * ECMAScript's \s differs (U+001C-U+001F and U+0085 are Python's, U+FEFF is not). */
export const PY_WHITESPACE = new RegExp(`[${PY_SPACE_CLASS}]+`, "u");
const ONE_PY_SPACE = new RegExp(`^[${PY_SPACE_CLASS}]$`, "u");

/** Python's str.isspace() of one character. */
export function isPySpace(ch: string): boolean {
  return ONE_PY_SPACE.test(ch);
}

/** Length in code points (what the spec's length bounds count, as Python's len does). */
export function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** The first `n` code points of `text`. */
export function takeCodePoints(text: string, n: number): string {
  return Array.from(text).slice(0, Math.max(n, 0)).join("");
}

/** Code-point order (Python's string order); JavaScript's default compares UTF-16 units. */
export function compareCodePoints(a: string, b: string): number {
  const x = Array.from(a);
  const y = Array.from(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = (x[i] as string).codePointAt(0)! - (y[i] as string).codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** `text` scrubbed and cut to at most `limit` code points ending in `ellipsis` when anything
 * was cut. atWord: cut at the last white space when that keeps four fifths of the room. */
export function clip(text: string, limit: number, ellipsis: string, atWord = false): string {
  const chars = Array.from(scrub(text));
  if (chars.length <= limit) return chars.join("");
  const room = limit - codePoints(ellipsis);
  let cut = chars.slice(0, Math.max(room, 0)).join("");
  if (atWord) {
    const space = Math.max(cut.lastIndexOf(" "), cut.lastIndexOf("\n"), cut.lastIndexOf("\t"));
    if (space >= Math.floor((room * 4) / 5)) cut = cut.slice(0, space).trimEnd();
  }
  return cut + ellipsis;
}

/** The JSON Schema type name of a decoded JSON value (every number is "number"). */
export function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  switch (typeof value) {
    case "boolean":
      return "boolean";
    case "number":
      return "number";
    case "string":
      return "string";
    case "object":
      return "object";
    default:
      return typeof value;
  }
}

/** A plain JSON object (what Python's json gives as a dict). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Python's truth value of a decoded JSON value. */
export function truthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (isObject(value)) return Object.keys(value).length > 0;
  return Boolean(value);
}

/** Python's str() of a decoded JSON value (for a schema's non-string `required` entries).
 * JSON integers and floats are one type here, so 1.0 prints as "1" where Python says "1.0". */
export function pyStr(value: unknown): string {
  if (typeof value === "string") return value;
  return pyRepr(value);
}

function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "number") return String(value);
  if (typeof value === "string") {
    const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
    const body = value.replace(/\\/g, "\\\\").replace(new RegExp(quote, "g"), "\\" + quote);
    return quote + body + quote;
  }
  if (Array.isArray(value)) return "[" + value.map(pyRepr).join(", ") + "]";
  if (isObject(value)) {
    return "{" + Object.entries(value).map(([k, v]) => `${pyRepr(k)}: ${pyRepr(v)}`).join(", ") + "}";
  }
  return String(value);
}

/** Python's json.dumps(value, sort_keys=True, separators=(",", ":")) with its default
 * ensure_ascii: every character outside printable ASCII as a \\uXXXX escape. */
export function pyJsonDumps(value: unknown): string {
  const text = JSON.stringify(sortKeys(value));
  return text.replace(
    /[\u007f-\uffff]/g,
    (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"),
  );
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (isObject(value)) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort(compareCodePoints)) out[k] = sortKeys(value[k]);
    return out;
  }
  return value;
}

/** Python's format(value, "g"): six significant digits, trailing zeros dropped, exponent
 * form below 1e-4 and from 1e6. Rounded half to even on the exact binary value, as Python
 * does (ECMAScript's toExponential rounds an exact tie up: 1234565 would be 1.23457e+06). */
export function formatG(value: number): string {
  if (Number.isNaN(value)) return "nan";
  if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
  const sign = value < 0 || Object.is(value, -0) ? "-" : "";
  if (value === 0) return sign + "0";
  const [digits, e] = roundSignificant(Math.abs(value), 6);
  if (e >= -4 && e < 6) {
    const text = e >= 0 ? `${digits.slice(0, e + 1)}.${digits.slice(e + 1)}` : `0.${"0".repeat(-e - 1)}${digits}`;
    return sign + stripZeros(text);
  }
  const mantissa = stripZeros(`${digits[0]}.${digits.slice(1)}`);
  return `${sign}${mantissa}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
}

/** The first `n` significant digits of a positive finite number, rounded half to even on its
 * exact decimal expansion, and the decimal exponent of the first. */
function roundSignificant(value: number, n: number): [string, number] {
  if (value < 2 ** -47) {
    // toFixed(100) would lose it; a value this small cannot tie at six digits.
    const [mantissa, exp] = value.toExponential(n - 1).split("e") as [string, string];
    return [mantissa.replace(".", ""), Number(exp)];
  }
  // Exact: an integral double's digits, or a fraction's (exact to 100 places from 2^-47 on).
  const text = Number.isInteger(value) ? BigInt(value).toString() : value.toFixed(100);
  const [whole, fraction = ""] = text.split(".") as [string, string?];
  const all = whole + fraction;
  const lead = all.search(/[1-9]/);
  let exponent = whole.length - lead - 1;
  const significant = all.slice(lead);
  let kept = significant.slice(0, n).padEnd(n, "0");
  const rest = significant.slice(n);
  const next = rest[0] ?? "0";
  const odd = Number(kept[n - 1]) % 2 === 1;
  if (next > "5" || (next === "5" && (/[1-9]/.test(rest.slice(1)) || odd))) {
    kept = (BigInt(kept) + 1n).toString();
    if (kept.length > n) {
      kept = kept.slice(0, n);
      exponent += 1;
    }
  }
  return [kept, exponent];
}

function stripZeros(text: string): string {
  return text.includes(".") ? text.replace(/0+$/, "").replace(/\.$/, "") : text;
}
