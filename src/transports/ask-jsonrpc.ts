import { randomUUID } from "node:crypto";
import type { Event, SessionEventParams } from "../../generated/ask-v1.0.js";
import { ASK_METHOD_NAMES, type AskSurface, type AskPeer } from "../ask/ask-surface.js";
import { ASK_ERROR_CODES } from "../registry/ask/index.js";
import { answeredError, JsonRpcConnection } from "./jsonrpc-connection.js";
import type { OutboundPolicy, TransportProfile } from "./outbound-policy.js";
import { RpcError } from "../shared/rpc-error.js";
import { SharedText, type OutgoingText } from "./shared-text.js";
import { runCall, type CallGate, type JsonRpcMember } from "./jsonrpc-envelope.js";
import type { SessionPrincipal } from "../bridge/session-roles.js";

/**
 * One Ask JSON-RPC connection, whatever carries its text (WebSocket, stdio, HTTP): the JSON-RPC
 * connection core (jsonrpc-connection.ts) as Ask speaks it — the `"jsonrpc"` member optional and
 * written or not as configured, batches, null params read as none, requests ordered — with the
 * Ask surface behind it; everything else is the surface's.
 *
 * Order, the same on every transport (as an Ask host handles a connection):
 * - requests are applied one after another in arrival order (request-order.ts), and answered in
 *   that order; a batch is applied element by element and answered at its place;
 * - a response is written before the notifications its request causes (ASK_OUTBOUND): which
 *   request caused an event cannot be told (a turn's first events are emitted while `session/send`
 *   waits for them), so notifications and reverse requests that arise while a request is open wait
 *   until the responses before them are written, so a client that reads "the next line" as its
 *   answer gets it. Holding a reverse request cannot deadlock: no Ask request waits for a client's
 *   answer (interactions wait, and the methods that settle them answer at once);
 * - the client's answer to one of our reverse requests is not a request: it is taken at once,
 *   never queued behind requests, so an interaction never waits for the connection's other work.
 * A queued request counts as in flight for the gates (the in-flight limit, the drain): it was
 * accepted when it arrived.
 */

export interface AskJsonRpcOptions {
  tenant?: string;
  /** Who the connection authenticated as; undefined without tokens (no role is checked). */
  principal?: SessionPrincipal;
  jsonrpcMember: JsonRpcMember;
  /** Largest batch accepted (element count). */
  maxBatch?: number;
  /** Runs every client request (e.g. to refuse or fail it while the gateway drains); default: run it. */
  gate?: CallGate;
  /** The wire (default: a WebSocket), for the part of the order it decides. */
  transport?: TransportProfile;
}

/** Wraps each surface call of a connection: runs `call`, or rejects (with an RpcError) instead. */

export interface AskJsonRpcConnection {
  readonly peer: AskPeer;
  /** Handles one incoming text message (a request, notification, response or batch); resolves once its answer is written. */
  receive(text: string): Promise<void>;
  /** A message over the transport's length bound was skipped: answered -32600 with id null. */
  skipOversized(maxBytes: number): void;
  close(): void;
}

/**
 * Answers in request order, as an Ask host gives them; everything written while requests are open
 * counts as their consequence and follows their responses at once (Ask clients read line by line).
 */
export const ASK_OUTBOUND: OutboundPolicy = { answers: "arrival", caused: "with-response", uncaused: "caused-by-open-requests" };

/** Ids of our reverse requests start above the range clients use (as Ask hosts do). */
const FIRST_REVERSE_REQUEST_ID = 10001;
const DEFAULT_MAX_BATCH = 100;

/**
 * The `session/event` notification of one event, made once for all the connections of one framing
 * (with or without the `"jsonrpc"` member): an event goes to every connection subscribed to its
 * session, and serializing and encoding it again for each was most of the cost of a fan-out. The
 * log hands an event to all its subscribers in a row, so remembering the last event's
 * notifications is enough; keeping them for every retained event would hold each event's text
 * (and bytes) a second time for as long as the log keeps the event.
 */
interface EventNotifications {
  event: Event;
  sessionId: string | undefined;
  include?: SharedText;
  omit?: SharedText;
}

let lastNotifications: EventNotifications | undefined;

function sessionEventNotification(params: SessionEventParams, framing: AskJsonRpcOptions["jsonrpcMember"]): SharedText {
  let entry = lastNotifications;
  if (entry?.event !== params.event || entry.sessionId !== params.sessionId) {
    entry = lastNotifications = { event: params.event, sessionId: params.sessionId };
  }
  // Exactly what `serialize` makes of `{ jsonrpc: "2.0", method, params }`.
  const head = framing === "include" ? '{"jsonrpc":"2.0","method":"session/event","params":' : '{"method":"session/event","params":';
  return (entry[framing] ??= new SharedText(`${head}${JSON.stringify(params)}}`));
}

/**
 * `send` writes one message: a string of the connection's own, or a `SharedText` the same for
 * every subscriber of a session (a transport that writes bytes can send its `bytes` as they are).
 */
export function attachAskJsonRpc(surface: AskSurface, send: (message: OutgoingText) => void, options: AskJsonRpcOptions): AskJsonRpcConnection {
  const gate: CallGate = options.gate ?? runCall;
  const connection = new JsonRpcConnection(send, {
    jsonrpcMember: options.jsonrpcMember,
    // null params are no params, as Ask hosts read them.
    nullParams: "absent",
    ordered: true,
    outbound: ASK_OUTBOUND,
    transport: options.transport,
    methods: ASK_METHOD_NAMES,
    isMethod: (method) => surface.isMethod(method),
    // The gates see the request from its arrival (a queued request counts); its turn comes inside them.
    call: (method, params, hooks) => gate(method, () => hooks.inOrder(() => surface.call(peer, method, params, hooks.signal)), hooks.notification, { params, trace: hooks.trace }),
    errorOf: (error) => answeredError(error, [RpcError], ASK_ERROR_CODES.internal_error),
    codes: ASK_ERROR_CODES,
    batches: { max: options.maxBatch ?? DEFAULT_MAX_BATCH },
    answerUnidentifiable: true,
    firstRequestId: FIRST_REVERSE_REQUEST_ID,
    onClose: () => surface.disconnect(peer),
  });

  const peer: AskPeer = {
    id: randomUUID(),
    tenant: options.tenant,
    principal: options.principal,
    capabilities: { reverseRequests: false },
    notify: (_method: "session/event", params: SessionEventParams) => {
      if (!connection.closed) connection.sendText(sessionEventNotification(params, options.jsonrpcMember));
    },
    request: (method, params, signal) => connection.request(method, params as object, signal).answer,
    get closed() {
      return connection.closed;
    },
  };
  surface.connect(peer);

  return {
    peer,
    receive: (text) => connection.receive(text),
    skipOversized: (maxBytes) => connection.skipOversized(maxBytes),
    close: () => connection.close(),
  };
}
