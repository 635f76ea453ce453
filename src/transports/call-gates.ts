import { GATEWAY_ERROR_CODES } from "../registry/error-codes.js";
import { registries } from "../registry/index.js";
import { RpcError, rpcErrors } from "../shared/rpc-error.js";
import { secondsSince, type CallObserver, type JsonRpcDialect } from "./call-observer.js";
import type { TraceCarrier } from "../shared/tracing.js";
import { tracingGate } from "./call-spans.js";
import type { CallGate } from "./jsonrpc-envelope.js";

/**
 * Gates for the calls of one JSON-RPC connection, whatever its dialect: each wraps a call and may
 * refuse it with an RpcError of the gateway's own codes, which every dialect's registry lists, so
 * the client receives it as its dialect's JSON-RPC error. `connectionGate` is the one place that
 * decides which of them a connection's calls pass, in which order, for `serve` and every stdio
 * command alike.
 */

const gatewayError = rpcErrors(GATEWAY_ERROR_CODES);

/** What a connection's gates are made from: what the command or gateway serving it has. */
export interface GateSetup {
  /** Unanswered requests per connection. */
  maxInflight: number;
  /** The drain's gate (refuses new work once shutdown starts), when something drains the connection. */
  drain?: CallGate;
  /** Where each request's outcome is reported, when metrics are kept. */
  observe?: CallObserver;
  /** The trace context on the request that opened the connection (a WebSocket upgrade's `traceparent`). */
  upgrade?: TraceCarrier;
}

/**
 * The gates of one connection, outermost first: tracing, metrics, the per-connection in-flight
 * limit, drain. Tracing is outermost, so a call's span covers all of it; the drain is innermost,
 * so the metrics (and the in-flight limit) see its refusals too. Create one per connection: the
 * in-flight limit counts that connection's calls.
 */
export function connectionGate(dialect: JsonRpcDialect, setup: GateSetup): CallGate {
  return composeCallGates(tracingGate(dialect, setup.upgrade), setup.observe && observingGate(setup.observe, dialect), inflightLimitGate(setup.maxInflight), setup.drain);
}

/**
 * The answer to a request that arrives once its gateway or command has started stopping: nothing
 * of it was started, so a client may safely retry it elsewhere (-32012 with `retryable: true`).
 */
export function drainingRefusal(method: string): RpcError {
  return gatewayError("upstream_unavailable", `gateway shutting down: ${method} was not started; retry on another instance`, { reason: "draining", retryable: true });
}

/**
 * A stdio command's drain: once `stopping` aborts (the first SIGTERM), every new request is
 * answered with `drainingRefusal` instead of being left unread or unanswered; requests already
 * running go on.
 */
export function refuseOnceStopping(stopping: AbortSignal): CallGate {
  return (method, call) => (stopping.aborted ? Promise.reject(drainingRefusal(method)) : call());
}

/**
 * The gate of a drain that waits for the calls it let in (the gateway's, an Ask stdio command's):
 * every call that passes is open until it settles, and `settled` hears each one settle; once
 * `refuseNew` is called every new call gets `drainingRefusal`. `failOpen` answers the calls still
 * open at the drain's deadline with an error of the drain's (their own outcome, if it comes, is
 * then dropped). One per drain, shared by all its connections.
 */
export class DrainGate {
  private refusing = false;
  /** Fails one open call; present while it runs. */
  private readonly open = new Set<(error: RpcError) => void>();

  constructor(private readonly settled: () => void) {}

  /** Calls let in and not settled yet. */
  get size(): number {
    return this.open.size;
  }

  /** From now on every new call is refused. */
  refuseNew(): void {
    this.refusing = true;
  }

  /** Fails every call still open with `error`; how many there were. */
  failOpen(error: RpcError): number {
    const open = [...this.open];
    for (const fail of open) fail(error);
    return open.length;
  }

  readonly gate: CallGate = (method, call) => {
    if (this.refusing) return Promise.reject(drainingRefusal(method));
    return new Promise((resolve, reject) => {
      const finish = () => {
        this.open.delete(fail);
        this.settled();
      };
      const fail = (error: RpcError) => {
        finish();
        reject(error);
      };
      this.open.add(fail);
      call().then(
        (value) => {
          if (!this.open.has(fail)) return;
          finish();
          resolve(value);
        },
        (error: unknown) => {
          if (!this.open.has(fail)) return;
          finish();
          reject(error);
        },
      );
    });
  };
}

/** The gate of no gates: runs the call. */
const runCallOnly: CallGate = (_method, call) => call();

/** Runs a call through every gate, the first one outermost (the innermost runs the call itself). */
export function composeCallGates(...gates: Array<CallGate | undefined>): CallGate {
  const present = gates.filter((g): g is CallGate => g !== undefined);
  if (present.length === 0) return runCallOnly;
  return present.reduceRight((inner, outer) => (method, call, notification, request) => outer(method, () => inner(method, call, notification, request), notification, request));
}

/**
 * At most `limit` calls of the connection run at once; one more is answered at once with -32013
 * overloaded (a notification over the limit is dropped: it has no answer to carry the error).
 * Create one per connection.
 */
export function inflightLimitGate(limit: number): CallGate {
  let running = 0;
  return async (_method, call) => {
    if (running >= limit) {
      throw gatewayError("overloaded", `overloaded: this connection already has ${running} requests in flight (the gateway's limit is ${limit}); retry after some complete`, {
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

/** Each dialect's numeric codes by number, from its registry entries: the outcome a metric reports is the code's registry name. */
const CODE_NAMES = new Map(
  registries.map((registry) => [registry.dialect, new Map(registry.errors.flatMap((e) => (typeof e.code === "number" ? [[e.code, e.name] as const] : [])))]),
);

/** The registry name of the error a client of `dialect` received (the number itself for a code outside the registry). */
export function callOutcome(dialect: JsonRpcDialect, error: unknown): string {
  if (!(error instanceof RpcError)) return "internal_error";
  return CODE_NAMES.get(dialect)?.get(error.code) ?? String(error.code);
}

/**
 * Reports every request's method, outcome (ok or the error code's name) and duration, under the
 * dialect served. A notification runs unreported: nothing is answered (the metric counts requests
 * answered).
 */
export function observingGate(observe: CallObserver, dialect: JsonRpcDialect): CallGate {
  return async (method, call, notification) => {
    if (notification) return call();
    const startedAt = performance.now();
    let outcome = "ok";
    try {
      return await call();
    } catch (err) {
      outcome = callOutcome(dialect, err);
      throw err;
    } finally {
      observe({ dialect, method, outcome, seconds: secondsSince(startedAt) });
    }
  };
}
