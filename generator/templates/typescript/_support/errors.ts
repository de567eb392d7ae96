/** Typed surface errors: a code, a message naming what was wrong, the offending path or id,
 * and details. The generated errors module binds the codes' summaries and the ErrorPayload
 * bounds (§3.4); code here raises through an ErrorFactory, so callers catch the generated
 * class. Errors are values inside the process and never cross the MCP boundary as throws. */

import { clip } from "./text.js";

/** (code, message, path) -> the error to throw. */
export type ErrorFactory = (code: string, message: string, path?: string) => Error;

/** What a subclass binds: each code's summary, the payload bounds, the clipping ellipsis. */
export interface ErrorBounds {
  readonly summaries: Readonly<Record<string, string>>;
  readonly messageMax: number;
  readonly pathMax: number;
  readonly ellipsis: string;
}

/** The §3.4 wire shape of an error. */
export interface ErrorPayloadShape<C extends string = string> {
  error: C;
  message: string;
  path: string;
  details: Record<string, unknown>;
}

export class SurfaceError<C extends string = string> extends Error {
  readonly code: C;
  readonly path: string;
  readonly details: Record<string, unknown>;

  constructor(
    code: C,
    message: string,
    path: string,
    details: Record<string, unknown> | undefined,
    bounds: ErrorBounds,
  ) {
    const summary = bounds.summaries[code];
    if (summary === undefined) throw new TypeError(`unknown error code ${JSON.stringify(code)}`);
    // Clipped so that any thrown error still makes a valid payload, whatever the input.
    super(clip(message || summary, bounds.messageMax, bounds.ellipsis));
    this.name = new.target.name;
    this.code = code;
    this.path = clip(path, bounds.pathMax, bounds.ellipsis);
    this.details = { ...(details ?? {}) };
  }

  toPayload(): ErrorPayloadShape<C> {
    return { error: this.code, message: this.message, path: this.path, details: this.details };
  }
}
