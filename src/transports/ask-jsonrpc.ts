import { randomUUID } from "node:crypto";
import type { Event, SessionEventParams } from "../../generated/ask-v1.0.js";
import { AskError, ASK_METHOD_NAMES, type AskBridge, type AskPeer } from "../bridge/ask-bridge.js";
import { ASK_ERROR_CODES } from "../registry/ask/index.js";
import { jsonRpcConnection } from "./jsonrpc-connection.js";

/**
 * One Ask JSON-RPC connection, whatever carries its text (WebSocket, stdio, HTTP): the JSON-RPC
 * framing (jsonrpc-connection.ts) with the Ask bridge behind it, reverse requests on the same
 * connection, and `session/event` notifications serialized once per event.
 */

export interface AskJsonRpcOptions {
  tenant?: string;
  /** `omit` for app-server peers that never send or expect `"jsonrpc":"2.0"`. */
  jsonrpcMember: "include" | "omit";
  /** Largest batch accepted (element count). */
  maxBatch?: number;
  /** Runs every client request (e.g. to refuse or fail it while the gateway drains); default: run it. */
  gate?: AskCallGate;
}

/** Wraps each bridge call of a connection: runs `call`, or rejects (with an AskError) instead. */
export type AskCallGate = (method: string, call: () => Promise<unknown>) => Promise<unknown>;

export interface AskJsonRpcConnection {
  readonly peer: AskPeer;
  /** Handles one incoming text message (a request, notification, response or batch). */
  receive(text: string): Promise<void>;
  close(): void;
}

/** Ids of our reverse requests start above the range clients use (as Ask hosts do). */
const FIRST_REVERSE_REQUEST_ID = 10001;
const DEFAULT_MAX_BATCH = 100;

/**
 * The JSON of `session/event` params, made once per event and session: an event goes to every
 * connection subscribed to its session, and serializing it again for each was most of the cost
 * of a fan-out. Keyed by the event object (the session log's own, shared by all its subscribers,
 * never changed after it is appended), so an entry lives as long as the log retains the event; the
 * session id is part of the params, so it is kept with the JSON and checked.
 */
const eventParamsJson = new WeakMap<Event, { sessionId: string | undefined; json: string }>();

function sessionEventParamsJson(params: SessionEventParams): string {
  const cached = eventParamsJson.get(params.event);
  if (cached && cached.sessionId === params.sessionId) return cached.json;
  const json = JSON.stringify(params);
  eventParamsJson.set(params.event, { sessionId: params.sessionId, json });
  return json;
}

export function attachAskJsonRpc(bridge: AskBridge, sendText: (text: string) => void, options: AskJsonRpcOptions): AskJsonRpcConnection {
  const gate: AskCallGate = options.gate ?? ((_method, call) => call());
  const connection = jsonRpcConnection(sendText, {
    jsonrpcMember: options.jsonrpcMember,
    methods: ASK_METHOD_NAMES,
    call: (method, params) => gate(method, () => bridge.call(peer, method, params)),
    errorOf: (error) =>
      error instanceof AskError
        ? { code: error.code, message: error.message, data: error.data }
        : { code: ASK_ERROR_CODES.internal_error, message: `Internal error: ${error instanceof Error ? error.message : String(error)}` },
    codes: ASK_ERROR_CODES,
    batches: { max: options.maxBatch ?? DEFAULT_MAX_BATCH },
    answerUnidentifiable: true,
    firstRequestId: FIRST_REVERSE_REQUEST_ID,
  });
  // Exactly what the connection makes of `{ jsonrpc: "2.0", method, params }`, around params serialized once per event.
  const notificationHead = options.jsonrpcMember === "include" ? '{"jsonrpc":"2.0","method":' : '{"method":';
  const notify = (method: "session/event", params: SessionEventParams) => {
    if (!peer.closed) connection.sendText(`${notificationHead}${JSON.stringify(method)},"params":${sessionEventParamsJson(params)}}`);
  };

  const peer: AskPeer = {
    id: randomUUID(),
    tenant: options.tenant,
    capabilities: { reverseRequests: false },
    notify,
    request: (method, params, signal) => connection.request(method, params, signal).answer,
    get closed() {
      return connection.closed;
    },
  };
  bridge.connect(peer);

  return {
    peer,
    receive: (text) => connection.receive(text),
    close() {
      if (connection.closed) return;
      connection.close();
      bridge.disconnect(peer);
    },
  };
}
