/** Seed 002's mapping of MCP tool annotations to card fields. Hints are untrusted and
 * informational: a hint that is not the expected type is ignored. */

import { compareCodePoints, isObject } from "./text.js";

/** When annotation `hint` is `when`, the card gets `tag` and/or `sideEffects`; a hint with
 * `field` set is a number copied to that field (the cost hint) when positive. */
export interface HintRule {
  hint: string;
  when: boolean | null;
  sideEffects: boolean | null;
  tag: string | null;
  field: string | null;
}

export interface AnnotationFields {
  side_effects: boolean;
  tags: string[];
  cost_hint: number;
}

export class AnnotationMapping {
  private readonly flags: readonly HintRule[];
  private readonly cost: HintRule;

  constructor(
    rules: readonly HintRule[],
    private readonly sideEffectsDefault: boolean,
  ) {
    this.flags = rules.filter((r) => r.field === null);
    const numbers = rules.filter((r) => r.field !== null);
    if (numbers.length !== 1 || this.flags.some((r) => r.when === null)) {
      throw new Error("expected one number hint (the cost) and a `when` on every flag");
    }
    this.cost = numbers[0]!;
  }

  fields = (annotations: unknown): AnnotationFields => {
    const ann = isObject(annotations) ? annotations : {};
    let sideEffects = this.sideEffectsDefault;
    const tags = new Set<string>();
    for (const rule of this.flags) {
      if (ann[rule.hint] === rule.when) {
        if (rule.tag !== null) tags.add(rule.tag);
        if (rule.sideEffects !== null) sideEffects = rule.sideEffects;
      }
    }
    const cost = ann[this.cost.hint];
    const costHint = typeof cost === "number" && Number.isFinite(cost) && cost > 0 ? cost : 0;
    return { side_effects: sideEffects, tags: [...tags].sort(compareCodePoints), cost_hint: costHint };
  };
}
