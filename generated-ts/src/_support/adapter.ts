// Copied from generator/templates/typescript/_support/adapter.ts by `make generate`; do not edit.
/** The conformance kit's layer-1 protocol (docs/conformance.md): one JSON request per line on
 * stdin, one JSON answer per line on stdout, flushed at once. A bug in the implementation is
 * answered ADAPTER_EXCEPTION on its own line and serving goes on. */

import { createInterface } from "node:readline";

export type Reply = Record<string, unknown>;
export type AnswerFn = (fn: string, input: Record<string, unknown>) => Reply;

export interface AdapterInfo {
  implementation: string;
  specVersion: string;
}

function reply(request: unknown, info: AdapterInfo, answer: AnswerFn): Reply {
  if (typeof request !== "object" || request === null || Array.isArray(request)) {
    return { id: null, error: "BAD_REQUEST", message: "expected an object with function" };
  }
  const r = request as Record<string, unknown>;
  const id = r["id"] ?? null;
  if (typeof r["function"] !== "string") {
    return { id: null, error: "BAD_REQUEST", message: "expected an object with function" };
  }
  if (r["function"] === "hello") {
    return { id, ok: { implementation: info.implementation, spec_version: info.specVersion } };
  }
  try {
    const input = r["input"];
    return { id, ...answer(r["function"], (input ?? {}) as Record<string, unknown>) };
  } catch (exc) {
    const message = exc instanceof Error ? `${exc.name}: ${exc.message}` : String(exc);
    return { id, error: "ADAPTER_EXCEPTION", message };
  }
}

/** Answer requests until stdin closes. */
export function serve(info: AdapterInfo, answer: AnswerFn): Promise<void> {
  // Lines end at "\n" only in the kit's framing; JSON text never holds a raw line break, so
  // readline's wider notion of a line end changes nothing.
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on("line", (line) => {
    if (line.trim() === "") return;
    let out: Reply;
    try {
      out = reply(JSON.parse(line), info, answer);
    } catch (exc) {
      out = { id: null, error: "BAD_REQUEST", message: String(exc) };
    }
    process.stdout.write(JSON.stringify(out) + "\n");
  });
  return new Promise((resolve) => lines.on("close", resolve));
}
