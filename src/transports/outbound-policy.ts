/**
 * How a JSON-RPC dialect wants a connection's writes ordered, as data: every connection's
 * outbound sequencer (outbound-sequencer.ts) follows its dialect's policy, with the transport's
 * profile filling in what depends on the wire.
 */

/** When a message caused by a request (see RequestCause) is written, relative to that request's response. */
export type Release =
  /** Right after the response, in the same event-loop turn (a client may read both at once). */
  | "with-response"
  /** In a later event-loop turn: the client has handled the response before the message comes. */
  | "next-tick"
  /** This long after the response. */
  | { delayMs: number };

export interface OutboundPolicy {
  /**
   * `arrival`: responses are written in the order their requests arrived, however long each takes;
   * `completion`: each response as soon as it is made.
   */
  answers: "arrival" | "completion";
  /**
   * When a message caused by a request follows the request's response; `own-read`: so that the
   * client reads it apart from the response, however the transport achieves that
   * (TransportProfile.ownRead).
   */
  caused: Release | "own-read";
  /**
   * A message sent without a cause: `unrelated`, written at once (passing caused messages still
   * held); `caused-by-open-requests`, taken as a possible consequence of every request whose
   * response is still open when it is sent, and held until their responses are written.
   */
  uncaused: "unrelated" | "caused-by-open-requests";
}

/** What a transport contributes to the order of a connection's writes. */
export interface TransportProfile {
  /** How a message is made to reach the client in a read of its own after the one before it. */
  readonly ownRead: Release;
}

/** A WebSocket frames every message: the next event-loop turn is enough to keep it from being handled with the one before. */
export const WEBSOCKET_TRANSPORT: TransportProfile = { ownRead: "next-tick" };

/**
 * A pipe or a socket of NDJSON lines hands a reader slower than the writer whatever was written
 * meanwhile in one read: one event-loop turn was too little with a busy reader (the AI SDK's Codex
 * provider subscribes to a turn once it has read the `turn/start` response, and misses what came
 * in the same read); a few milliseconds per turn cost nothing.
 */
export const PIPE_TRANSPORT: TransportProfile = { ownRead: { delayMs: 25 } };

/** The policy on one transport, as the sequencer follows it: `own-read` made concrete. */
export interface ConnectionOrder {
  answers: OutboundPolicy["answers"];
  caused: Release;
  uncaused: OutboundPolicy["uncaused"];
}

/** The orders made so far, by policy and transport: every connection of a dialect on one kind of wire shares one. */
const orders = new WeakMap<OutboundPolicy, WeakMap<TransportProfile, ConnectionOrder>>();

export function connectionOrder(policy: OutboundPolicy, transport: TransportProfile): ConnectionOrder {
  let byTransport = orders.get(policy);
  if (!byTransport) orders.set(policy, (byTransport = new WeakMap()));
  let order = byTransport.get(transport);
  if (!order) byTransport.set(transport, (order = Object.freeze({ ...policy, caused: policy.caused === "own-read" ? transport.ownRead : policy.caused })));
  return order;
}
