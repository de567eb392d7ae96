/** The prompt rendering of cards and browse responses (AM-CARD-RENDER): the exact text a
 * client receives, on which token budgets are measured (AM-BUDGET-TEXT).
 *
 * A card renders as the concatenation of its parts, in order; each part is a field, a format
 * and `when` the part appears. Parts are compiled once into small functions. */

import { formatG, truthy } from "./text.js";

export type Card = Readonly<Record<string, unknown>>;

export interface CardPart {
  field: string;
  format: string;
  when: string;
  join: string | null;
}

/** Numbers in their shortest form ("2.5", "3", as Python's "g" format); the rest as text. */
function shown(value: unknown): string {
  if (typeof value === "number") return formatG(value);
  return String(value);
}

/** The name an id already shows: a path's last segment, or a tool_id's name part. */
function idName(cardId: string): string {
  if (cardId.startsWith("/")) return cardId.replace(/[/*]+$/, "").split("/").pop() ?? "";
  const afterColon = cardId.includes(":") ? cardId.slice(cardId.indexOf(":") + 1) : cardId;
  return afterColon.split("@", 1)[0]!.split("#", 1)[0]!;
}

function compile(part: CardPart): (card: Card) => string {
  const { field: f, format: fmt, join } = part;
  const fill = (card: Card): string => {
    const value = card[f];
    const text = join !== null && Array.isArray(value) ? value.join(join) : shown(value);
    return fmt.split(`{${f}}`).join(text);
  };
  switch (part.when) {
    case "always":
      return fill;
    case "kind_not_tool":
      return (card) => (card["kind"] !== "tool" ? fill(card) : "");
    case "name_differs_from_id":
      return (card) => (card[f] !== idName(String(card["id"])) ? fill(card) : "");
    case "non_empty":
      return (card) => (truthy(card[f]) ? fill(card) : "");
    case "positive":
      return (card) => (Number(card[f] ?? 0) > 0 ? fill(card) : "");
    // A flag's format is its whole text.
    case "true":
      return (card) => (card[f] === true ? fmt : "");
    case "false":
      return (card) => (card[f] === false ? fmt : "");
    case "false_unless_internal":
      return (card) => (card[f] === false && card["kind"] !== "internal" ? fmt : "");
    default:
      throw new Error(`card part ${JSON.stringify(f)}: unknown \`when\` ${JSON.stringify(part.when)}`);
  }
}

export class Renderer {
  private readonly parts: ReadonlyArray<(card: Card) => string>;

  constructor(
    parts: readonly CardPart[],
    readonly separator: string,
    readonly preambleQuery: string,
    readonly preamblePath: string,
  ) {
    this.parts = parts.map(compile);
  }

  /** One card as one line. score is never rendered (§2.1). */
  renderCard = (card: Card): string => this.parts.map((part) => part(card)).join("");

  /** The first line of a tool_browse text result (counted in the preamble allowance). */
  renderPreamble = (count: number, total: number | null = null, path: string | null = null): string => {
    if (path !== null) return this.preamblePath.split("{count}").join(String(count));
    return this.preambleQuery
      .split("{count}")
      .join(String(count))
      .split("{total}")
      .join(String(total ?? count));
  };

  /** The whole text content of a tool_browse result: preamble line, then a line a card. */
  renderBrowseText = (preamble: string, cards: readonly Card[]): string =>
    [preamble, ...cards.map(this.renderCard)].join(this.separator);
}
