import type { TransportProfile } from "./outbound-policy.js";
import type { OutgoingText } from "./shared-text.js";

/**
 * One JSON-RPC connection of a dialect, as every wire sees it: text in, text out, closed when its
 * peer goes. Each dialect's attachment (`<dialect>-jsonrpc.ts`) returns one (with what else its
 * own callers need, such as ACP's `interruptTurns`), so one WebSocket server
 * (websocket-endpoint.ts) and one NDJSON server (ndjson-endpoint.ts: stdio, a Unix socket) serve
 * any dialect: a new wire is one file, and a new dialect one attachment.
 */
export interface JsonRpcEndpoint {
  /** Handles one incoming text message; resolves once it is dealt with (its answer, if any, written). */
  receive(text: string): Promise<void>;
  /** A message over the wire's length bound was skipped: the dialect answers it or not, in its own words. */
  skipOversized(maxBytes: number): void;
  /** The peer is gone: nothing more is received or sent (a promise: what the dialect still ends). */
  close(): unknown;
}

/**
 * Opens one endpoint of a dialect on a wire: `send` writes one message (a `SharedText`, the same
 * for many connections, may go out as its bytes), `transport` is the wire's profile (how a
 * message gets a read of its own). The dialect's descriptor binds the rest (its surface, the
 * connection's tenant and gates).
 */
export type OpenEndpoint<Endpoint extends JsonRpcEndpoint = JsonRpcEndpoint> = (send: (message: OutgoingText) => void, transport: TransportProfile) => Endpoint;
