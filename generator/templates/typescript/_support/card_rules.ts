/** The ChoiceCard validator (§2.1-§2.2): the model's JSON Schema (ajv, draft 2020-12), then
 * the rules JSON Schema cannot state, each a small function named after its rule in
 * models.yaml. A rule returns its problems as "rule: what is wrong" strings; the validator
 * lists them all, schema problems first. */

import { Ajv2020 } from "ajv/dist/2020.js";

import { compareCodePoints, isObject } from "./text.js";

export const LINE_BREAKS = ["\n", "\r", "\u2028", "\u2029"] as const;
// Grammar-bound identity fields, and score, are not content that could smuggle a field.
const NOT_SCANNED = new Set(["id", "namespace", "score"]);

type Card = Record<string, unknown>;
type Accepts = (value: unknown) => boolean;

/** How a field name is compared with the banned ones: "input-Schema" is "inputschema". */
export function normaliseKey(key: string): string {
  return key.replace(/[_-]/g, "").toLowerCase();
}

/** Every string inside `value` (keys included), depth first. */
function strings(value: unknown, out: string[]): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const v of value) strings(v, out);
  else if (isObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      strings(v, out);
    }
  }
  return out;
}

export interface CardRulesOptions {
  schema: Record<string, unknown>;
  bannedFields: Iterable<string>;
  bannedStringified: readonly RegExp[];
  toolIds: Accepts;
  internalIds: readonly Accepts[];
  error: (message: string, path: string, details: Record<string, unknown>) => Error;
}

export class CardRules {
  static readonly RULES = [
    "single_line_description",
    "tags_sorted",
    "internal_ids",
    "namespace_matches_id",
    "no_banned_content",
  ] as const;

  private readonly validateSchema;
  private readonly permitted: ReadonlySet<string>;
  private readonly banned: ReadonlySet<string>;
  private readonly bannedText: RegExp;

  constructor(private readonly o: CardRulesOptions) {
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    this.validateSchema = ajv.compile(o.schema);
    this.permitted = new Set(Object.keys((o.schema["properties"] ?? {}) as object));
    this.banned = new Set([...o.bannedFields].map(normaliseKey));
    // One pass over all of a card's lower-cased text instead of one search per pattern.
    this.bannedText = new RegExp(o.bannedStringified.map((p) => `(?:${p.source})`).join("|"), "u");
  }

  /** Where the first stringified banned field starts in `text` (AM-BANNED-IN-DESCRIPTION),
   * or null: card builders cut an upstream description there. */
  bannedContentAt = (text: string): number | null => {
    const starts = this.o.bannedStringified.map((p) => text.search(p)).filter((i) => i >= 0);
    return starts.length > 0 ? Math.min(...starts) : null;
  };

  /** Every way `card` breaks §2.1-§2.2 (schema bounds first, then the rules). */
  violations = (card: unknown): string[] => {
    if (!isObject(card)) return [`a card is an object, not ${card === null ? "null" : Array.isArray(card) ? "array" : typeof card}`];
    return [
      ...this.schema(card),
      ...this.singleLineDescription(card),
      ...this.tagsSorted(card),
      ...this.internalIds(card),
      ...this.namespaceMatchesId(card),
      ...this.noBannedContent(card),
    ];
  };

  /** Throw the card error listing every violation; return for a valid card. */
  validate = (card: unknown): void => {
    const problems = this.violations(card);
    if (problems.length > 0) {
      const id = isObject(card) ? card["id"] : "";
      throw this.o.error("invalid ChoiceCard: " + problems.join("; "), String(id ?? ""), { violations: problems });
    }
  };

  private schema(card: Card): string[] {
    const problems: string[] = [];
    for (const key of Object.keys(card)) {
      if (!this.permitted.has(key) && this.banned.has(normaliseKey(key))) {
        problems.push(`no_banned_content: banned field ${JSON.stringify(key)}`);
      }
    }
    if (!this.validateSchema(card)) {
      for (const err of this.validateSchema.errors ?? []) {
        const extra = err.keyword === "additionalProperties" ? String(err.params["additionalProperty"]) : null;
        if (extra !== null && this.banned.has(normaliseKey(extra))) continue; // reported as banned
        const loc = extra ?? (err.instancePath.replace(/^\//, "").replace(/\//g, ".") || "card");
        problems.push(`${loc}: ${extra !== null ? "is not a permitted field" : err.message}`);
      }
    }
    return problems;
  }

  private singleLineDescription(card: Card): string[] {
    const d = card["description"];
    if (typeof d === "string" && LINE_BREAKS.some((b) => d.includes(b))) {
      return ["single_line_description: the description holds a line break"];
    }
    return [];
  }

  private tagsSorted(card: Card): string[] {
    const tags = card["tags"];
    if (!Array.isArray(tags) || !tags.every((t) => typeof t === "string")) return []; // the schema reports it
    const problems: string[] = [];
    const sorted = [...(tags as string[])].sort(compareCodePoints);
    if (sorted.some((t, i) => t !== tags[i])) problems.push("tags_sorted: tags are not in ascending order");
    if (new Set(tags).size !== tags.length) problems.push("tags_sorted: tags repeat (they are de-duplicated)");
    return problems;
  }

  private internalIds(card: Card): string[] {
    const id = card["id"];
    const kind = card["kind"];
    if (typeof id !== "string" || typeof kind !== "string") return [];
    if (kind === "internal") {
      if (this.o.internalIds.some((accepts) => accepts(id))) return [];
      return ["internal_ids: an internal card's id is a path or the cache marker"];
    }
    return this.o.toolIds(id) ? [] : [`internal_ids: a ${kind} card's id must be a tool_id`];
  }

  private namespaceMatchesId(card: Card): string[] {
    const id = card["id"];
    const kind = card["kind"];
    if (typeof id !== "string" || typeof kind !== "string" || kind === "internal") return [];
    if (this.o.toolIds(id) && card["namespace"] !== id.split(":", 1)[0]) {
      return ["namespace_matches_id: namespace differs from the id's namespace"];
    }
    return [];
  }

  private noBannedContent(card: Card): string[] {
    const texts: string[] = [];
    for (const [key, value] of Object.entries(card)) if (!NOT_SCANNED.has(key)) strings(value, texts);
    const found = this.bannedText.exec(texts.join("\u0000").toLowerCase());
    return found ? [`no_banned_content: ${JSON.stringify(found[0])} stringifies a banned field`] : [];
  }
}
