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

/**
 * One Ask JSON-RPC connection, whatever carries its text (WebSocket, stdio, HTTP): json-rpc-2.0's
 * server answers the client's requests and its client sends our reverse requests on the same
 * connection. This layer only frames: envelope checks the library does not make (the optional
 * `"jsonrpc"` member, batches element by element, ids), everything else is the bridge's.
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

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
/** The registry's RequestId: a string, or an integer a JSON parser keeps exact (beyond 2^53 the id echoed back could differ). */
const isId = (v: unknown): v is string | number => typeof v === "string" || Number.isSafeInteger(v);

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
  const serialize = (message: object): string => {
    if (options.jsonrpcMember === "include") return JSON.stringify(message);
    const { jsonrpc: _omitted, ...rest } = message as Record<string, unknown>;
    return JSON.stringify(rest);
  };
  const write = (message: object | object[]) => {
    if (!peer.closed) sendText(Array.isArray(message) ? `[${message.map(serialize).join(",")}]` : serialize(message));
  };
  // Exactly what `serialize` makes of `{ jsonrpc: "2.0", method, params }`, around params serialized once per event.
  const notificationHead = options.jsonrpcMember === "include" ? '{"jsonrpc":"2.0","method":' : '{"method":';
  const notify = (method: "session/event", params: SessionEventParams) => {
    if (!peer.closed) sendText(`${notificationHead}${JSON.stringify(method)},"params":${sessionEventParamsJson(params)}}`);
  };

  let nextId = FIRST_REVERSE_REQUEST_ID;
  // Error answers are the protocol working, not faults: the bridge logs internal errors itself, and
  // the library's default (console.warn) would write onto stderr for every -32004.
  const server = new JSONRPCServer<AskPeer>({ errorListener: () => undefined });
  const client = new JSONRPCClient<void>((payload: object) => write(payload), () => nextId++);
  const rpc = new JSONRPCServerAndClient<AskPeer, void>(server, client);
  const gate: AskCallGate = options.gate ?? ((_method, call) => call());
  for (const method of ASK_METHOD_NAMES) rpc.addMethod(method, (params, p) => gate(method, () => bridge.call(p, method, params)));
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
    request: (method, params, signal) =>
      new Promise((resolve, reject) => {
        if (signal.aborted) return reject(new Error("cancelled"));
        const onAbort = () => reject(new Error("cancelled"));
        signal.addEventListener("abort", onAbort, { once: true });
        rpc.request(method, params as Record<string, unknown>, undefined).then(
          (value) => {
            signal.removeEventListener("abort", onAbort);
            resolve(value);
          },
          (err: unknown) => {
            signal.removeEventListener("abort", onAbort);
            reject(err);
          },
        );
      }),
    get closed() {
      return closed;
    },
  };
  bridge.connect(peer);

  const error = (id: JSONRPCID, name: keyof typeof ASK_ERROR_CODES, message: string): JSONRPCResponse =>
    createJSONRPCErrorResponse(id, ASK_ERROR_CODES[name], message);

  /** One message of a batch or a lone message; resolves with the response to send, if any. */
  async function handleOne(message: unknown): Promise<JSONRPCResponse | null> {
    if (!isObject(message)) return error(null, "invalid_request", "Invalid Request: a JSON-RPC message must be an object");
    const hasId = "id" in message && message.id !== undefined;
    if (hasId && !isId(message.id) && message.id !== null) return error(null, "invalid_request", "Invalid Request: id must be a string or an integer from -(2^53-1) to 2^53-1");
    const id = hasId && isId(message.id) ? message.id : null;
    if ("jsonrpc" in message && message.jsonrpc !== "2.0") return error(id, "invalid_request", 'Invalid Request: "jsonrpc" must be "2.0" when present');
    if (!("method" in message)) {
      if (hasId && ("result" in message || "error" in message)) {
        // An answer to one of our reverse requests.
        client.receive({ ...message, jsonrpc: "2.0" } as unknown as JSONRPCResponse);
        return null;
      }
      return error(id, "invalid_request", "Invalid Request: Method not specified");
    }
    if (typeof message.method !== "string") return error(id, "invalid_request", "Invalid Request: method must be a string");
    // JSON-RPC allows a null request id but the registry's RequestId does not: its success response would be invalid.
    if (message.id === null) return error(null, "invalid_request", "Invalid Request: id must be a string or an integer, not null");
    if ("params" in message && message.params !== undefined && !isObject(message.params)) {
      return hasId ? error(id, "invalid_params", "invalid params: params must be an object") : null;
    }
    const request = { jsonrpc: "2.0" as const, method: message.method, params: message.params as Record<string, unknown> | undefined, ...(hasId ? { id: id! } : {}) };
    if (!bridge.isMethod(message.method)) {
      return hasId ? error(id, "method_not_found", `Method not found: ${message.method}`) : null;
    }
    return server.receive(request, peer);
  }

  return {
    peer,
    async receive(text: string) {
      if (closed || text.trim() === "") return;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (err) {
        write(error(null, "parse_error", `Parse error: ${(err as Error).message}`));
        return;
      }
      if (!Array.isArray(value)) {
        const response = await handleOne(value);
        if (response) write(response);
        return;
      }
      const max = options.maxBatch ?? DEFAULT_MAX_BATCH;
      if (value.length === 0) return write(error(null, "invalid_request", "Invalid Request: empty batch"));
      if (value.length > max) return write(error(null, "invalid_request", `Invalid Request: batch of ${value.length} exceeds the limit of ${max}`));
      const responses = (await Promise.all(value.map(handleOne))).filter((r): r is JSONRPCResponse => r !== null);
      if (responses.length) write(responses);
    },
    close() {
      if (closed) return;
      closed = true;
      bridge.disconnect(peer);
      client.rejectAllPendingRequests("connection closed");
    },
  };
}
