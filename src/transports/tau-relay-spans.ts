import { tauFailure, tauRequestSpan } from "../tau/tau-span.js";
import { inSpan, tracingActive, type TraceCarrier } from "../shared/tracing.js";
import { clientCallSpan } from "./call-spans.js";

/**
 * The spans of one request the /tau passthrough relays: the client's call (a server span, under
 * the trace context of the WebSocket upgrade) and, under it, the relayed request to Tau (a client
 * span). The relay is driven by messages, not by a promise, so the spans are ended by calling
 * what this returns with the request's outcome (`ok` or Tau's error code); undefined when tracing
 * is off, so an untraced relay keeps nothing per request.
 */
export type RelayedRequestEnd = (outcome: string) => void;

export function traceRelayedRequest(method: string, params: unknown, upgrade: TraceCarrier | undefined): RelayedRequestEnd | undefined {
  if (!tracingActive()) return undefined;
  let end!: RelayedRequestEnd;
  const outcome = new Promise<string>((resolve) => (end = resolve));
  const relayed = async () => {
    const code = await outcome;
    if (code !== "ok") throw new RelayedRequestError(code);
  };
  void inSpan(() => clientCallSpan("tau", method, params, upgrade), () => inSpan(() => tauRequestSpan(method, params), relayed, tauFailure), tauFailure).catch(() => undefined);
  return end;
}

/** A relayed request the client got an error for; `code` is Tau's (or the gateway's, when it answered). */
class RelayedRequestError extends Error {
  override readonly name = "RelayedRequestError";
  constructor(readonly code: string) {
    super(`answered with ${code}`);
  }
}
