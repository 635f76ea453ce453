import { randomUUID } from "node:crypto";
import { type AcpAgent, type AcpPeer } from "../acp/agent.js";
import { ACP_ERROR_CODES } from "../registry/acp/index.js";
import { runCall, type CallGate } from "./jsonrpc-envelope.js";
import { answeredError, JsonRpcConnection } from "./jsonrpc-connection.js";
import type { OutboundPolicy, TransportProfile } from "./outbound-policy.js";
import { RpcError } from "../shared/rpc-error.js";
import { textOf } from "./shared-text.js";
import type { SessionPrincipal } from "../bridge/session-roles.js";

/**
 * One ACP connection, whatever carries its text (stdio lines, WebSocket messages): the JSON-RPC
 * framing (jsonrpc-connection.ts) as ACP wants it (protocol §1) — `"jsonrpc":"2.0"` on every
 * message, no batches, `"params": null` taken as given, a request's id may be null (answered with
 * that null id), every notification handed to the agent
 * (which ignores one it does not know) — with the agent behind it and its requests to the client
 * on the same connection, numbered from 0 as the SDK's are.
 */

/**
 * Each answer as soon as it is made (a prompt's when its turn ends, while other requests are
 * answered). What a request causes follows its answer one event-loop turn later, once the editor
 * has handled the answer (an update of a session it has not been told about is dropped); anything
 * else — a session's updates, permission requests — goes out at once.
 */
export const ACP_OUTBOUND: OutboundPolicy = { answers: "completion", caused: "next-tick", uncaused: "unrelated" };

/** Wraps each request of a connection (in-flight limit, metrics, drain): runs `call`, or rejects with the error to answer instead. */

export interface AcpJsonRpcOptions {
  tenant?: string;
  /** Who the connection authenticated as; undefined without tokens (no role is checked). */
  principal?: SessionPrincipal;
  gate?: CallGate;
  /** The wire (default: a WebSocket), for the part of the order it decides. */
  transport?: TransportProfile;
}

export interface AcpJsonRpcConnection {
  readonly peer: AcpPeer;
  /** Handles one incoming message; resolves once it is answered (a prompt: when its turn has ended). */
  receive(text: string): Promise<void>;
  /** A message over the transport's length bound was skipped: answered -32600 with id null. */
  skipOversized(maxBytes: number): void;
  /** Interrupts the turns of this connection's prompts, which are then answered `cancelled`. */
  interruptTurns(budgetMs: number): Promise<void>;
  /** The client is gone: see AcpAgent.disconnect. */
  close(): Promise<void>;
}

export function attachAcpJsonRpc(agent: AcpAgent, sendText: (text: string) => void, options: AcpJsonRpcOptions = {}): AcpJsonRpcConnection {
  const gate: CallGate = options.gate ?? runCall;
  const connection = new JsonRpcConnection((message) => sendText(textOf(message)), {
    jsonrpcMember: "include",
    jsonrpcRequired: true,
    nullParams: "passed",
    nullRequestIds: true,
    methods: agent.methods,
    // Before initialize, an unknown method is refused like any other request (the SDK agent's gate).
    unknownMethodFailure: (method) => agent.refusal(client, method),
    // A question settled elsewhere (another editor, the deadline, a cancelled turn): the editor may close its dialog.
    cancelNotice: (id) => ({ method: "$/cancel_request", params: { requestId: id } }),
    call: (method, params, hooks) => gate(method, () => agent.call(client, method, params, hooks.cause, hooks.signal), hooks.notification, { params, trace: hooks.trace }),
    onNotification: (method, params) => agent.notify(client, method, params),
    // Either side may cancel a request it sent (protocol: `$/cancel_request`, answered all the same).
    cancelMethod: "$/cancel_request",
    // Errors are answers, not faults: the agent logs what deserves it.
    errorOf: (error) => answeredError(error, [RpcError], ACP_ERROR_CODES.internal_error),
    codes: ACP_ERROR_CODES,
    batches: false,
    answerUnidentifiable: true,
    firstRequestId: 0,
    outbound: ACP_OUTBOUND,
    transport: options.transport,
  });

  const peer: AcpPeer = {
    id: randomUUID(),
    tenant: options.tenant,
    principal: options.principal,
    notify: (method, params, causedBy) => connection.send({ jsonrpc: "2.0", method, params }, causedBy),
    request: (method, params, signal, causedBy) => {
      if (connection.closed) return Promise.reject(new Error("connection closed"));
      return connection.request(method, params as object, signal, causedBy).answer.catch((err: unknown) => {
        throw err instanceof Error ? err : new Error(String(err));
      });
    },
    get closed() {
      return connection.closed;
    },
  };
  const client = agent.connect(peer);

  return {
    peer,
    receive: (text) => connection.receive(text),
    skipOversized: (maxBytes) => connection.skipOversized(maxBytes),
    interruptTurns: (budgetMs) => agent.interruptTurns(client, budgetMs),
    async close() {
      if (connection.closed) return;
      connection.close();
      await agent.disconnect(client);
    },
  };
}
