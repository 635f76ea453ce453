import { AskError } from "../ask/ask-bridge.js";
import type { AskCallGate } from "./ask-jsonrpc.js";
import { askOutcome, secondsSince, type CallDialect, type CallObserver } from "./call-observer.js";

/**
 * Gates for the calls of one Ask connection (see `AskJsonRpcOptions.gate`): each wraps a bridge
 * call and may refuse it with an AskError, which the client receives as the JSON-RPC error. These
 * are the building blocks; which of them a surface puts around its calls, in which order, is
 * decided in one place by whoever serves the surface.
 */

/** Runs a call through every gate, the first one outermost. */
export function composeAskGates(...gates: Array<AskCallGate | undefined>): AskCallGate {
  const present = gates.filter((g): g is AskCallGate => g !== undefined);
  return present.reduceRight<AskCallGate>(
    (inner, outer) => (method, call, notification) => outer(method, () => inner(method, call, notification), notification),
    (_method, call) => call(),
  );
}

/**
 * At most `limit` calls of the connection run at once; one more is answered at once with -32013
 * overloaded (a notification over the limit is dropped: it has no answer to carry the error).
 * Create one per connection.
 */
export function inflightLimitGate(limit: number): AskCallGate {
  let running = 0;
  return async (_method, call) => {
    if (running >= limit) {
      throw AskError.of("overloaded", `overloaded: this connection already has ${running} requests in flight (the gateway's limit is ${limit}); retry after some complete`, {
        limit,
      });
    }
    running++;
    try {
      return await call();
    } finally {
      running--;
    }
  };
}

/**
 * Reports every request's method, outcome (ok or the error code's name) and duration, under the
 * dialect served; `outcomeOf` names a failure's code in the dialect's registry. A notification
 * runs unreported: nothing is answered (the metric counts requests answered).
 */
export function observingGate(observe: CallObserver, dialect: CallDialect = "ask", outcomeOf: (error: unknown) => string = jsonRpcOutcome): AskCallGate {
  return async (method, call, notification) => {
    if (notification) return call();
    const startedAt = performance.now();
    let outcome = "ok";
    try {
      return await call();
    } catch (err) {
      outcome = outcomeOf(err);
      throw err;
    } finally {
      observe({ dialect, method, outcome, seconds: secondsSince(startedAt) });
    }
  };
}

/** The Ask and Codex outcome of a failure: the name of the code the client received. */
function jsonRpcOutcome(err: unknown): string {
  return hasNumericCode(err) ? askOutcome(err.code) : "internal_error";
}

/** A JSON-RPC error of any dialect (AskError, CodexError): its code is the one the client received. */
function hasNumericCode(err: unknown): err is { code: number } {
  return err instanceof Error && typeof (err as { code?: unknown }).code === "number";
}
