import { randomUUID } from "node:crypto";
import {
  createJSONRPCErrorResponse,
  JSONRPCClient,
  JSONRPCServer,
  JSONRPCServerAndClient,
  type JSONRPCID,
  type JSONRPCResponse,
} from "json-rpc-2.0";
import type { Event, SessionEventParams } from "../../generated/ask-v1.0.js";
import { AskError, ASK_METHOD_NAMES, type AskBridge, type AskPeer } from "../bridge/ask-bridge.js";
import { ASK_ERROR_CODES } from "../registry/ask/index.js";
import { OutboundSequencer } from "./outbound-sequencer.js";
import { RequestOrder, type RequestTurn } from "./request-order.js";
import { SharedText, type OutgoingText } from "./shared-text.js";
import { cancellableRequest, isId, isObject, parseMessage, runCall, serializer, type CallGate, type JsonRpcMember } from "./jsonrpc-envelope.js";

/**
 * One Ask JSON-RPC connection, whatever carries its text (WebSocket, stdio, HTTP): json-rpc-2.0's
 * server answers the client's requests and its client sends our reverse requests on the same
 * connection. This layer frames (envelope checks the library does not make: the optional
 * `"jsonrpc"` member, batches element by element, ids) and orders; everything else is the bridge's.
 *
 * Order, the same on every transport (as an Ask host handles a connection):
 * - requests are applied one after another in arrival order (request-order.ts), and answered in
 *   that order; a batch is applied element by element and answered at its place;
 * - a response is written before the notifications its request causes: notifications and reverse
 *   requests that arise while a request is open wait until the responses before them are written
 *   (outbound-sequencer.ts), so a client that reads "the next line" as its answer gets it. Holding
 *   a reverse request cannot deadlock: no Ask request waits for a client's answer (interactions
 *   wait, and the methods that settle them answer at once);
 * - the client's answer to one of our reverse requests is not a request: it is taken at once,
 *   never queued behind requests, so an interaction never waits for the connection's other work.
 * A queued request counts as in flight for the gates (the in-flight limit, the drain): it was
 * accepted when it arrived.
 */

export interface AskJsonRpcOptions {
  tenant?: string;
  jsonrpcMember: JsonRpcMember;
  /** Largest batch accepted (element count). */
  maxBatch?: number;
  /** Runs every client request (e.g. to refuse or fail it while the gateway drains); default: run it. */
  gate?: AskCallGate;
}

/** Wraps each bridge call of a connection: runs `call`, or rejects (with an AskError) instead. */
export type AskCallGate = CallGate;

export interface AskJsonRpcConnection {
  readonly peer: AskPeer;
  /** Handles one incoming text message (a request, notification, response or batch); resolves once its answer is written. */
  receive(text: string): Promise<void>;
  close(): void;
}

/** Ids of our reverse requests start above the range clients use (as Ask hosts do). */
const FIRST_REVERSE_REQUEST_ID = 10001;
const DEFAULT_MAX_BATCH = 100;

/** An answer to one of our reverse requests (an id, no method, a result or an error). */
const isClientResponse = (v: unknown): v is Record<string, unknown> =>
  isObject(v) && !("method" in v) && "id" in v && v.id !== undefined && ("result" in v || "error" in v);

/** What a method handler gets besides the params: the connection's peer and the request's place in its order. */
interface CallContext {
  peer: AskPeer;
  turn: RequestTurn;
}

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
export function attachAskJsonRpc(bridge: AskBridge, send: (message: OutgoingText) => void, options: AskJsonRpcOptions): AskJsonRpcConnection {
  const serialize = serializer(options.jsonrpcMember);
  const outbound = new OutboundSequencer<OutgoingText>((message) => {
    if (!peer.closed) send(message);
  });
  const order = new RequestOrder();
  const answerText = (message: object | object[] | null): string | undefined =>
    message === null ? undefined : Array.isArray(message) ? `[${message.map(serialize).join(",")}]` : serialize(message);
  const notify = (_method: "session/event", params: SessionEventParams) => {
    if (!peer.closed) outbound.send(sessionEventNotification(params, options.jsonrpcMember));
  };

  let nextId = FIRST_REVERSE_REQUEST_ID;
  // Error answers are the protocol working, not faults: the bridge logs internal errors itself, and
  // the library's default (console.warn) would write onto stderr for every -32004.
  const server = new JSONRPCServer<CallContext>({ errorListener: () => undefined });
  const client = new JSONRPCClient<void>((payload: object) => outbound.send(serialize(payload)), () => nextId++);
  const rpc = new JSONRPCServerAndClient<CallContext, void>(server, client);
  const gate: AskCallGate = options.gate ?? runCall;
  // The gates see the request from its arrival (a queued request counts); its turn comes inside them.
  for (const method of ASK_METHOD_NAMES) {
    rpc.addMethod(method, (params, { peer, turn }) => gate(method, () => turn.run(() => bridge.call(peer, method, params))));
  }
  server.mapErrorToJSONRPCErrorResponse = (id: JSONRPCID, error: unknown) =>
    error instanceof AskError
      ? createJSONRPCErrorResponse(id, error.code, error.message, error.data)
      : createJSONRPCErrorResponse(id, ASK_ERROR_CODES.internal_error, `Internal error: ${error instanceof Error ? error.message : String(error)}`);

  let closed = false;
  const peer: AskPeer = {
    id: randomUUID(),
    tenant: options.tenant,
    capabilities: { reverseRequests: false },
    notify,
    request: (method, params, signal) => cancellableRequest(signal, () => rpc.request(method, params, undefined)),
    get closed() {
      return closed;
    },
  };
  bridge.connect(peer);

  const error = (id: JSONRPCID, name: keyof typeof ASK_ERROR_CODES, message: string): JSONRPCResponse =>
    createJSONRPCErrorResponse(id, ASK_ERROR_CODES[name], message);

  /**
   * One message of a batch or a lone message; resolves with the response to send, if any. A call
   * takes its place in the connection's order before this returns its promise (no await before it),
   * so the elements of a batch, mapped in a row, are applied in array order.
   */
  async function handleOne(message: unknown): Promise<JSONRPCResponse | null> {
    if (!isObject(message)) return error(null, "invalid_request", "Invalid Request: a JSON-RPC message must be an object");
    const hasId = "id" in message && message.id !== undefined;
    if (hasId && !isId(message.id) && message.id !== null) return error(null, "invalid_request", "Invalid Request: id must be a string or an integer");
    const id = hasId && isId(message.id) ? message.id : null;
    if ("jsonrpc" in message && message.jsonrpc !== "2.0") return error(id, "invalid_request", 'Invalid Request: "jsonrpc" must be "2.0" when present');
    if (!("method" in message)) {
      if (isClientResponse(message)) {
        client.receive({ ...message, jsonrpc: "2.0" } as unknown as JSONRPCResponse);
        return null;
      }
      return error(id, "invalid_request", "Invalid Request: Method not specified");
    }
    if (typeof message.method !== "string") return error(id, "invalid_request", "Invalid Request: method must be a string");
    // null params are no params, as Ask hosts read them.
    if ("params" in message && message.params !== undefined && message.params !== null && !isObject(message.params)) {
      return hasId ? error(id, "invalid_params", "invalid params: params must be an object") : null;
    }
    const request = { jsonrpc: "2.0" as const, method: message.method, params: (message.params ?? undefined) as Record<string, unknown> | undefined, ...(hasId ? { id: id! } : {}) };
    if (!bridge.isMethod(message.method)) {
      return hasId ? error(id, "method_not_found", `Method not found: ${message.method}`) : null;
    }
    const turn = order.enter();
    try {
      return await server.receive(request, { peer, turn });
    } finally {
      // A call its gates refused never ran; its place must not hold up the requests after it.
      turn.release();
    }
  }

  /** The answer to one text message: a response, a batch of responses, or nothing. */
  async function answer(value: unknown): Promise<JSONRPCResponse | JSONRPCResponse[] | null> {
    if (!Array.isArray(value)) return handleOne(value);
    const max = options.maxBatch ?? DEFAULT_MAX_BATCH;
    if (value.length === 0) return error(null, "invalid_request", "Invalid Request: empty batch");
    if (value.length > max) return error(null, "invalid_request", `Invalid Request: batch of ${value.length} exceeds the limit of ${max}`);
    const responses = (await Promise.all(value.map(handleOne))).filter((r): r is JSONRPCResponse => r !== null);
    return responses.length ? responses : null;
  }

  return {
    peer,
    async receive(text: string) {
      if (closed) return;
      const parsed = parseMessage(text);
      if (parsed === undefined) return;
      if ("parseError" in parsed) return outbound.reserve().fill(answerText(error(null, "parse_error", parsed.parseError)));
      const { value } = parsed;
      if (isClientResponse(value)) {
        // An answer to our reverse request takes no place in either order: it is handed to the
        // waiting interaction at once. Only a malformed one is answered.
        const refusal = await handleOne(value);
        return refusal ? outbound.reserve().fill(answerText(refusal)) : undefined;
      }
      // The answer's place is taken now, on arrival; everything written after this waits for it.
      const slot = outbound.reserve();
      return slot.fill(answerText(await answer(value)));
    },
    close() {
      if (closed) return;
      // What is ready goes out while the transport may still take it; the rest is dropped.
      outbound.close();
      closed = true;
      bridge.disconnect(peer);
      client.rejectAllPendingRequests("connection closed");
    },
  };
}
