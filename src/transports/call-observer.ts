/**
 * What a transport reports about each client request it handled, for metrics: the dialect, the
 * method (a registry name, never free client text, so label values stay bounded), how it ended
 * and how long it took.
 */
import type { Dialect } from "../registry/index.js";

/** The dialects whose client requests are counted: every dialect of the registry. */
export type CallDialect = Dialect;
/** The dialects that speak JSON-RPC (and so answer with its error codes). */
export type JsonRpcDialect = Exclude<CallDialect, "tau">;

export interface CallRecord {
  dialect: CallDialect;
  method: string;
  /** "ok", or the name of the error code the client received (`overloaded`, `invalid_params`, `busy`, …). */
  outcome: string;
  seconds: number;
}

export type CallObserver = (call: CallRecord) => void;

/** Seconds since a `performance.now()` reading. */
export function secondsSince(startedAt: number): number {
  return (performance.now() - startedAt) / 1000;
}
