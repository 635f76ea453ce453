import { ASK_ERROR_CODES } from "../registry/ask/index.js";

/**
 * What a transport reports about each client request it handled, for metrics: the dialect, the
 * method (a registry name, never free client text, so label values stay bounded), how it ended
 * and how long it took.
 */
/** The dialects whose client requests are counted. */
export type CallDialect = "ask" | "tau" | "codex" | "acp";

export interface CallRecord {
  dialect: CallDialect;
  method: string;
  /** "ok", or the name of the error code the client received (`overloaded`, `invalid_params`, `busy`, …). */
  outcome: string;
  seconds: number;
}

export type CallObserver = (call: CallRecord) => void;

const ASK_ERROR_NAMES = new Map<number, string>(Object.entries(ASK_ERROR_CODES).map(([name, code]) => [code, name]));

/**
 * The registry name of a JSON-RPC error code (the number itself for codes outside the registry).
 * The Ask and Codex surfaces share the JSON-RPC codes and the gateway's own (-32010, -32012, -32013).
 */
export function askOutcome(code: number): string {
  return ASK_ERROR_NAMES.get(code) ?? String(code);
}

/** Seconds since a `performance.now()` reading. */
export function secondsSince(startedAt: number): number {
  return (performance.now() - startedAt) / 1000;
}
