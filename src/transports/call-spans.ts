import { carrierIn, inSpan, tracingActive, type SpanAttributes, type SpanRequest, type TraceCarrier } from "../shared/tracing.js";
import type { CallDialect } from "./call-observer.js";
import type { CallGate, CallRequest } from "./jsonrpc-envelope.js";

/**
 * The span of each client call (see src/shared/tracing.ts): one per request a client sends in any
 * dialect, named `DIALECT METHOD`, the parent of the calls to Tau it makes. Its parent is the
 * trace context the client sent with the request (Codex's envelope `trace`, ACP's
 * `params._meta`), else the one on the HTTP request or WebSocket upgrade that carries it.
 */

/** The span of one client call; `parent`: the client's trace context, if it sent one. */
export function clientCallSpan(dialect: CallDialect, method: string, params: unknown, parent: TraceCarrier | undefined): SpanRequest {
  return {
    name: `${dialect} ${method}`,
    kind: "server",
    attributes: { "rpc.system": dialect === "tau" ? "tau" : "jsonrpc", "rpc.method": method, dialect, "session.id": sessionIdOf(params) },
    parent,
  };
}

/**
 * A gate that runs each request of a JSON-RPC connection in its client call span; `upgrade`: the
 * trace context of the HTTP request or WebSocket upgrade the connection arrived on. Notifications
 * run untraced, as they run unmetered: nothing is answered. None while tracing is off (it starts
 * with the process, before any connection), so an untraced connection holds no gate for it.
 */
export function tracingGate(dialect: CallDialect, upgrade?: TraceCarrier): CallGate | undefined {
  if (!tracingActive()) return undefined;
  return (method, call, notification, request) => {
    if (notification) return call();
    return inSpan(() => clientCallSpan(dialect, method, request?.params, requestCarrier(request) ?? upgrade), call, jsonRpcFailure);
  };
}

/** The trace context a request carries itself: Codex's envelope `trace`, or ACP's reserved `_meta` keys. */
function requestCarrier(request: CallRequest | undefined): TraceCarrier | undefined {
  return carrierIn(request?.trace) ?? carrierIn(request?.params?._meta);
}

/** The session a call is about, where its params name one (Ask and ACP `sessionId`, Codex `threadId`). */
function sessionIdOf(params: unknown): string | undefined {
  if (typeof params !== "object" || params === null) return undefined;
  const { sessionId, threadId } = params as { sessionId?: unknown; threadId?: unknown };
  if (typeof sessionId === "string") return sessionId;
  return typeof threadId === "string" ? threadId : undefined;
}

/** A failed call's attributes: the JSON-RPC error code the client received. */
function jsonRpcFailure(error: unknown): SpanAttributes {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "number" ? { "rpc.jsonrpc.error_code": code } : { "error.type": error instanceof Error ? error.name : "error" };
}
