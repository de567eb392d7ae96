/** Exact token counts with the encoder the budgets name (§2.3, AM-BUDGET-TEXT), from
 * js-tiktoken, which ships the cl100k_base ranks inside the package (nothing is fetched).
 * There is deliberately no estimate: a budget counted with one is not a bound. */

import { getEncoding, type Tiktoken, type TiktokenEncoding } from "js-tiktoken";

// tiktoken's published example for cl100k_base: a wrong rank file or pattern cannot pass it.
const KNOWN_ANSWER: readonly [string, readonly number[]] = ["tiktoken is great!", [83, 1609, 5963, 374, 2294, 0]];

export class TokenCounter {
  private encoder: Tiktoken | null = null;

  constructor(readonly encoding: string) {}

  private load(): Tiktoken {
    const enc = getEncoding(this.encoding as TiktokenEncoding);
    const [text, expected] = KNOWN_ANSWER;
    if (enc.encode(text, [], []).join() !== expected.join()) {
      throw new Error(`encoding ${this.encoding} does not reproduce its known answer; refusing to count`);
    }
    return enc;
  }

  /** Token ids of `text`. Special-token spellings ("<|endoftext|>") are plain text here:
   * upstream descriptions are data, never control tokens. */
  encode = (text: string): number[] => {
    this.encoder ??= this.load();
    return this.encoder.encode(text, [], []);
  };

  /** The exact number of tokens the client's model sees for `text`. */
  count = (text: string): number => this.encode(text).length;
}
