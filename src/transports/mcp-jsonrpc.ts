import { randomUUID } from "node:crypto";
import type { RequestId } from "../../generated/mcp-v2025-11-25.js";
import type { McpPeer, McpServer } from "../mcp/server.js";
import { MCP_ERROR_CODES } from "../registry/mcp/index.js";
import { RpcError } from "../shared/rpc-error.js";
import { isObject } from "../shared/unknown-values.js";
import { isId, runCall, type CallGate } from "./jsonrpc-envelope.js";
import { answeredError, JsonRpcConnection } from "./jsonrpc-connection.js";
import type { OutboundPolicy, TransportProfile } from "./outbound-policy.js";
import { textOf } from "./shared-text.js";
import type { SessionPrincipal } from "../bridge/session-roles.js";

/**
 * One MCP connection, whatever carries its text (stdio lines, WebSocket messages, a Streamable
 * HTTP session): the JSON-RPC framing (jsonrpc-connection.ts) as MCP wants it — `"jsonrpc":"2.0"`
 * on every message, ids never null, no batches — with the server behind it and its requests to the
 * client (elicitation) on the same connection, numbered from 0 as the SDK's are. A request the
 * client cancelled (notifications/cancelled) is not answered, as MCP says: its tool call's turn is
 * interrupted and the response it would have had is dropped.
 *
 * Each message written carries the client's request it is part of, when it is one (a tool call's
 * progress, a form its turn waits for, the withdrawal of that form): Streamable HTTP sends it on
 * that request's response stream. MCP_OUTBOUND writes every message when it is sent (answers as
 * they are made, nothing waits for a cause), so the relation is the one given with the send.
 */

/**
 * Each answer as soon as it is made (a tool call's when its turn ends, while other requests are
 * answered); notifications go out at once — a tool call's progress before its answer, which is
 * what progress is for.
 */
export const MCP_OUTBOUND: OutboundPolicy = { answers: "completion", caused: "with-response", uncaused: "unrelated" };

export interface McpJsonRpcOptions {
  tenant?: string;
  /** Who the connection authenticated as; undefined without tokens (no role is checked). */
  principal?: SessionPrincipal;
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

export function attachMcpJsonRpc(server: McpServer, sendText: (text: string, relatedRequestId?: RequestId) => void, options: McpJsonRpcOptions = {}): McpJsonRpcConnection {
  const gate: CallGate = options.gate ?? runCall;
  /** The client's request the message being written is part of. */
  let relating: RequestId | undefined;
  /** Our requests to the client that are part of one of its requests, by id: their withdrawal goes with them. */
  const relatedOf = new Map<number, RequestId>();
  const related = <T>(relatedRequestId: RequestId | undefined, write: () => T): T => {
    relating = relatedRequestId;
    try {
      return write();
    } finally {
      relating = undefined;
    }
  };
  /** Ids (as JSON) of requests the client cancelled that are still unanswered: their answers are dropped. */
  const cancelled = new Set<string>();
  /** The id of the request being handed to the server right now (the connection calls `call` synchronously on receipt). */
  let arriving: string | number | undefined;
  const transmit = (text: string) => {
    const relatedRequestId = relating;
    relating = undefined;
    if (cancelled.size > 0) {
      const id = RESPONSE_ID.exec(text)?.[1];
      if (id !== undefined && cancelled.delete(id)) return;
    }
    sendText(text, relatedRequestId);
  };
  const connection = new JsonRpcConnection((message) => transmit(textOf(message)), {
    jsonrpcMember: "include",
    jsonrpcRequired: true,
    nullParams: "invalid",
    methods: server.methods,
    unknownMethodFailure: (method) => server.refusal(client, method),
    // An elicitation settled elsewhere (another client, the deadline, the turn ended): the host may close its form.
    // Written right after this returns: on the stream the withdrawn request went on.
    cancelNotice: (id) => {
      relating = relatedOf.get(id);
      relatedOf.delete(id);
      return { method: "notifications/cancelled", params: { requestId: id, reason: "no longer needed: decided elsewhere, or its turn ended" } };
    },
    call: (method, params, hooks) => {
      const requestId = hooks.notification ? undefined : arriving;
      return gate(method, () => server.call(client, method, params, requestId, hooks.signal), hooks.notification, { params, trace: hooks.trace });
    },
    cancelMethod: "notifications/cancelled",
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
    principal: options.principal,
    notify: (method, params, relatedRequestId) => related(relatedRequestId, () => connection.send({ jsonrpc: "2.0", method, params })),
    request: (method, params, signal, relatedRequestId) => {
      if (connection.closed) return Promise.reject(new Error("connection closed"));
      const { id, answer } = related(relatedRequestId, () => connection.request(method, params as object, signal));
      if (relatedRequestId === undefined) return answer.catch(asError);
      relatedOf.set(id, relatedRequestId);
      return answer.then(
        (value) => {
          relatedOf.delete(id);
          return value;
        },
        (err: unknown) => {
          // A withdrawal (cancelNotice) follows the abort synchronously and has taken the relation by now.
          relatedOf.delete(id);
          throw asError(err);
        },
      );
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

const asError = (err: unknown): never => {
  throw err instanceof Error ? err : new Error(String(err));
};

function requestIdOf(text: string): string | number | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) && typeof value.method === "string" && isId(value.id) ? value.id : undefined;
  } catch {
    return undefined;
  }
}
