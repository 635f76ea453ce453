import type { SpanAttributes, SpanRequest } from "../shared/tracing.js";

/**
 * The span of one request the gateway sends to Tau (the upstream client's, or one the /tau
 * passthrough relays). Tau's envelope has no member for a trace context, so the context stays
 * here: the span is the child of the client call that caused it, and the trace ends at it.
 */
export function tauRequestSpan(method: string, params: unknown): SpanRequest {
  const sessionId = (params as { sessionId?: unknown } | undefined)?.sessionId;
  return {
    name: `tau ${method}`,
    kind: "client",
    attributes: { "rpc.system": "tau", "rpc.method": method, "tau.session.id": typeof sessionId === "string" ? sessionId : undefined },
  };
}

/** A failed Tau request's attributes: Tau's error code when it answered with one. */
export function tauFailure(error: unknown): SpanAttributes {
  const code = (error as { code?: unknown } | undefined)?.code;
  return { "error.type": typeof code === "string" ? code : error instanceof Error ? error.name : "error" };
}
