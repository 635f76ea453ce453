import { randomUUID } from "node:crypto";
import type { McpPeer, McpServer } from "../mcp/server.js";
import { MCP_ERROR_CODES } from "../registry/mcp/index.js";
import { RpcError } from "../shared/rpc-error.js";
import { isObject } from "../shared/unknown-values.js";
import { isId, runCall, type CallGate } from "./jsonrpc-envelope.js";
import { answeredError, jsonRpcConnection } from "./jsonrpc-connection.js";
import type { OutboundPolicy, TransportProfile } from "./outbound-policy.js";
import { textOf } from "./shared-text.js";

/**
 * One MCP connection, whatever carries its text (stdio lines, WebSocket messages, a Streamable
 * HTTP session): the JSON-RPC framing (jsonrpc-connection.ts) as MCP wants it — `"jsonrpc":"2.0"`
 * on every message, ids never null, no batches — with the server behind it and its requests to the
 * client (elicitation) on the same connection, numbered from 0 as the SDK's are. A request the
 * client cancelled (notifications/cancelled) is not answered, as MCP says: its tool call's turn is
 * interrupted and the response it would have had is dropped.
 */

/**
 * Each answer as soon as it is made (a tool call's when its turn ends, while other requests are
 * answered); notifications go out at once — a tool call's progress before its answer, which is
 * what progress is for.
 */
export const MCP_OUTBOUND: OutboundPolicy = { answers: "completion", caused: "with-response", uncaused: "unrelated" };

export interface McpJsonRpcOptions {
  tenant?: string;
  gate?: CallGate;
  /** The wire (default: a WebSocket), for the part of the order it decides. */
  transport?: TransportProfile;
}

export interface McpJsonRpcConnection {
  readonly peer: McpPeer;
  /** Handles one incoming message; resolves once it is answered (a tool call: when its turn has ended). */
  receive(text: string): Promise<void>;
  /** A message over the transport's length bound was skipped: answered -32600 with id null. */
  skipOversized(maxBytes: number): void;
  /** Interrupts the turns this connection's tool calls are running (the process is stopping). */
  interruptCalls(): void;
  /** The client is gone: see McpServer.disconnect. */
  close(): void;
}

/** The id of a response text as the connection serializes it (`{"jsonrpc":"2.0","id":…,"result"|"error"`). */
const RESPONSE_ID = /^\{"jsonrpc":"2\.0","id":("(?:[^"\\]|\\.)*"|-?\d+),"(?:result|error)"/;

export function attachMcpJsonRpc(server: McpServer, sendText: (text: string) => void, options: McpJsonRpcOptions = {}): McpJsonRpcConnection {
  const gate: CallGate = options.gate ?? runCall;
  /** Ids (as JSON) of requests the client cancelled that are still unanswered: their answers are dropped. */
  const cancelled = new Set<string>();
  /** The id of the request being handed to the server right now (the connection calls `call` synchronously on receipt). */
  let arriving: string | number | undefined;
  const transmit = (text: string) => {
    if (cancelled.size > 0) {
      const id = RESPONSE_ID.exec(text)?.[1];
      if (id !== undefined && cancelled.delete(id)) return;
    }
    sendText(text);
  };
  const connection = jsonRpcConnection((message) => transmit(textOf(message)), {
    jsonrpcMember: "include",
    jsonrpcRequired: true,
    nullParams: "invalid",
    methods: server.methods,
    unknownMethodFailure: (method) => server.refusal(client, method),
    // An elicitation settled elsewhere (another client, the deadline, the turn ended): the host may close its form.
    cancelNotice: (id) => ({ method: "notifications/cancelled", params: { requestId: id, reason: "no longer needed: decided elsewhere, or its turn ended" } }),
    call: (method, params, hooks) => {
      const requestId = hooks.notification ? undefined : arriving;
      return gate(method, () => server.call(client, method, params, requestId), hooks.notification, { params, trace: hooks.trace });
    },
    onNotification: (method, params) => {
      if (method === "notifications/cancelled" && isObject(params) && isId(params.requestId)) cancelled.add(JSON.stringify(params.requestId));
      server.notify(client, method, params);
    },
    // Errors are answers, not faults: the server logs what deserves it.
    errorOf: (error) => answeredError(error, [RpcError], MCP_ERROR_CODES.internal_error),
    codes: MCP_ERROR_CODES,
    batches: false,
    answerUnidentifiable: true,
    firstRequestId: 0,
    outbound: MCP_OUTBOUND,
    transport: options.transport,
  });

  const peer: McpPeer = {
    id: randomUUID(),
    tenant: options.tenant,
    notify: (method, params) => connection.send({ jsonrpc: "2.0", method, params }),
    request: (method, params, signal) => {
      if (connection.closed) return Promise.reject(new Error("connection closed"));
      return connection.request(method, params as object, signal).answer.catch((err: unknown) => {
        throw err instanceof Error ? err : new Error(String(err));
      });
    },
    get closed() {
      return connection.closed;
    },
  };
  const client = server.connect(peer);

  return {
    peer,
    receive(text) {
      // Only a request's id is needed (notifications/cancelled names it); it is read from the text only when the text may be one.
      arriving = text.includes('"method"') && text.includes('"id"') ? requestIdOf(text) : undefined;
      try {
        return connection.receive(text);
      } finally {
        arriving = undefined;
      }
    },
    skipOversized: (maxBytes) => connection.skipOversized(maxBytes),
    interruptCalls: () => server.interruptCalls(client),
    close() {
      if (connection.closed) return;
      connection.close();
      server.disconnect(client);
    },
  };
}

function requestIdOf(text: string): string | number | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) && typeof value.method === "string" && isId(value.id) ? value.id : undefined;
  } catch {
    return undefined;
  }
}
