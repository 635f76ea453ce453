import { randomUUID } from "node:crypto";
import {
  createJSONRPCErrorResponse,
  JSONRPCClient,
  JSONRPCServer,
  JSONRPCServerAndClient,
  type JSONRPCErrorResponse,
  type JSONRPCID,
  type JSONRPCResponse,
} from "json-rpc-2.0";
import { AcpError, type AcpAgent, type AcpClient, type AcpPeer } from "../acp/agent.js";
import { AskError } from "../bridge/ask-bridge.js";
import { ACP_ERROR_CODES, type AcpErrorName } from "../registry/acp/index.js";
import { cancellableRequest, isId, isObject, parseMessage, runCall, type CallGate } from "./jsonrpc-envelope.js";

/**
 * One ACP connection, whatever carries its text (stdio lines, WebSocket messages): json-rpc-2.0's
 * server answers the client's requests and its client sends the agent's requests on the same
 * connection. This layer frames, as ACP's JSON-RPC wants it (protocol §1): `"jsonrpc":"2.0"` on
 * every message, no batches, an unknown notification ignored; the rest is the agent's.
 */

/** Wraps each request of a connection (in-flight limit, metrics, drain): runs `call`, or rejects with the error to answer instead. */
export type AcpCallGate = CallGate;

export interface AcpJsonRpcOptions {
  tenant?: string;
  gate?: AcpCallGate;
}

export interface AcpJsonRpcConnection {
  readonly peer: AcpPeer;
  /** Handles one incoming message; resolves once it is answered (a prompt: when its turn has ended). */
  receive(text: string): Promise<void>;
  /** Interrupts the turns of this connection's prompts, which are then answered `cancelled`. */
  interruptTurns(): Promise<void>;
  /** The client is gone: see AcpAgent.disconnect for `graceMs` (default: the agent's). */
  close(graceMs?: number): Promise<void>;
}

/** ACP's ids: JSON-RPC's, null included. */
const isAcpId = (v: unknown): v is string | number | null => v === null || isId(v);

/** An error a gate or the agent raised, as the JSON-RPC error the client receives. */
function errorResponse(id: JSONRPCID, error: unknown): JSONRPCErrorResponse {
  if (error instanceof AcpError || error instanceof AskError) return createJSONRPCErrorResponse(id, error.code, error.message, error.data);
  return createJSONRPCErrorResponse(id, ACP_ERROR_CODES.internal_error, `Internal error: ${error instanceof Error ? error.message : String(error)}`);
}

const failure = (id: JSONRPCID, name: AcpErrorName, message: string): JSONRPCErrorResponse => createJSONRPCErrorResponse(id, ACP_ERROR_CODES[name], message);

export function attachAcpJsonRpc(agent: AcpAgent, sendText: (text: string) => void, options: AcpJsonRpcOptions = {}): AcpJsonRpcConnection {
  let closed = false;
  const write = (message: object) => {
    if (!closed) sendText(JSON.stringify(message));
  };
  // Each side numbers its own requests; the agent's count from 0, as the SDK's do.
  let nextId = 0;
  // Errors are answers, not faults: the agent logs what deserves it.
  const server = new JSONRPCServer<AcpClient>({ errorListener: () => undefined });
  const rpcClient = new JSONRPCClient<void>((payload: object) => write(payload), () => nextId++);
  const rpc = new JSONRPCServerAndClient<AcpClient, void>(server, rpcClient);
  const gate: AcpCallGate = options.gate ?? runCall;
  server.mapErrorToJSONRPCErrorResponse = errorResponse;

  const peer: AcpPeer = {
    id: randomUUID(),
    tenant: options.tenant,
    notify: (method, params) => write({ jsonrpc: "2.0", method, params }),
    request: (method, params, signal) => {
      if (closed) return Promise.reject(new Error("connection closed"));
      return cancellableRequest(signal, () => rpc.request(method, params, undefined)).catch((err: unknown) => {
        throw err instanceof Error ? err : new Error(String(err));
      });
    },
    get closed() {
      return closed;
    },
  };
  const client = agent.connect(peer);
  for (const method of agent.methods) rpc.addMethod(method, (params, from) => gate(method, () => agent.call(from, method, params)));

  /** One parsed message; resolves with the response to send, if any. */
  async function handle(message: unknown): Promise<JSONRPCResponse | null> {
    if (!isObject(message)) return failure(null, "invalid_request", "Invalid Request: a message must be a JSON object (batches are not supported)");
    const id = "id" in message && isAcpId(message.id) ? message.id : null;
    if ("id" in message && !isAcpId(message.id)) return failure(null, "invalid_request", "Invalid Request: id must be a string, an integer or null");
    if (message.jsonrpc !== "2.0") return failure(id, "invalid_request", 'Invalid Request: "jsonrpc" must be "2.0"');
    if (!("method" in message)) {
      if ("id" in message && ("result" in message || "error" in message)) {
        rpcClient.receive(message as unknown as JSONRPCResponse); // an answer to one of the agent's requests
        return null;
      }
      return failure(id, "invalid_request", "Invalid Request: no method");
    }
    const { method } = message;
    if (typeof method !== "string") return failure(id, "invalid_request", "Invalid Request: method must be a string");
    if (!("id" in message)) {
      agent.notify(client, method, message.params);
      return null;
    }
    if ("params" in message && message.params !== undefined && message.params !== null && !isObject(message.params)) {
      return failure(id, "invalid_params", "invalid params: params must be an object");
    }
    if (!agent.isMethod(method)) return failure(id, "method_not_found", `Method not found: ${method}`);
    return server.receive({ jsonrpc: "2.0", id, method, params: message.params as Record<string, unknown> | undefined }, client);
  }

  return {
    peer,
    async receive(text: string) {
      if (closed) return;
      const parsed = parseMessage(text);
      if (parsed === undefined) return;
      if ("parseError" in parsed) return write(failure(null, "parse_error", parsed.parseError));
      const response = await handle(parsed.value);
      if (response) write(response);
    },
    interruptTurns: () => agent.interruptTurns(client),
    async close(graceMs?: number) {
      if (closed) return;
      closed = true;
      rpcClient.rejectAllPendingRequests("connection closed");
      await agent.disconnect(client, graceMs);
    },
  };
}
