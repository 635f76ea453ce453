import { randomUUID } from "node:crypto";
import { CODEX_METHOD_NAMES, type CodexSurface, type CodexPeer } from "../codex/codex-surface.js";
import { CODEX_ERROR_CODES } from "../registry/codex/index.js";
import type { Log } from "../shared/log.js";
import { runCall, type CallGate } from "./jsonrpc-envelope.js";
import { answeredError, JsonRpcConnection } from "./jsonrpc-connection.js";
import type { OutboundPolicy, TransportProfile } from "./outbound-policy.js";
import { RpcError } from "../shared/rpc-error.js";
import { textOf } from "./shared-text.js";
import type { SessionPrincipal } from "../bridge/session-roles.js";

/**
 * One Codex app-server connection, whatever carries its text (WebSocket, stdio): the JSON-RPC
 * framing (jsonrpc-connection.ts) as Codex speaks it — no `"jsonrpc"` member, no batches, no
 * answer to a message without a usable id — with the Codex surface behind it, and server requests
 * on the same connection numbered from 0.
 */

/**
 * Each answer as soon as it is made, as Codex gives them. What a request causes (a turn's
 * notifications after turn/start, thread/started after thread/start) reaches the client in a
 * read of its own after the response: the AI SDK's provider hangs when a turn's first
 * notifications share a read with the `turn/start` response, and subscribes to the turn only once
 * it has read it. Anything else goes out at once.
 */
export const CODEX_OUTBOUND: OutboundPolicy = { answers: "completion", caused: "own-read", uncaused: "unrelated" };

export interface CodexJsonRpcOptions {
  tenant?: string;
  /** Who the connection authenticated as; undefined without tokens (no role is checked). */
  principal?: SessionPrincipal;
  /** Runs every client request (drain, in-flight limit, metrics); default: run it. */
  gate?: CallGate;
  /** The wire (default: a WebSocket): how what a request causes gets a read of its own. */
  transport?: TransportProfile;
  log?: Log;
}

export interface CodexJsonRpcConnection {
  readonly peer: CodexPeer;
  /** Handles one incoming text message. */
  receive(text: string): Promise<void>;
  /** A message over the transport's length bound was skipped: logged, not answered (its id is unknown). */
  skipOversized(maxBytes: number): void;
  close(): void;
}

export function attachCodexJsonRpc(surface: CodexSurface, sendText: (text: string) => void, options: CodexJsonRpcOptions = {}): CodexJsonRpcConnection {
  const gate = options.gate ?? runCall;
  // A client fault, not ours: said once per connection (more of them only at debug), so a client
  // that keeps sending such messages cannot flood the log.
  let droppedBefore = false;
  const onDropped = (reason: string) => {
    options.log?.(droppedBefore ? "debug" : "info", "codex message dropped without an answer", { reason });
    droppedBefore = true;
  };
  const connection = new JsonRpcConnection((message) => sendText(textOf(message)), {
    jsonrpcMember: "omit",
    methods: CODEX_METHOD_NAMES,
    call: (method, params, hooks) => gate(method, () => surface.call(peer, method, params, hooks.cause, hooks.signal), hooks.notification, { params, trace: hooks.trace }),
    errorOf: (error) => answeredError(error, [RpcError], CODEX_ERROR_CODES.internal_error),
    codes: CODEX_ERROR_CODES,
    batches: false,
    answerUnidentifiable: false,
    firstRequestId: 0,
    outbound: CODEX_OUTBOUND,
    transport: options.transport,
    onDropped,
  });

  const peer: CodexPeer = {
    id: randomUUID(),
    tenant: options.tenant,
    principal: options.principal,
    client: { initialized: false, experimentalApi: false, optedOut: new Set() },
    notify: (method, params, causedBy) => connection.send({ method, params }, causedBy),
    request: (method, params, signal, causedBy) => connection.request(method, params, signal, causedBy),
    get closed() {
      return connection.closed;
    },
  };

  return {
    peer,
    receive: (text) => connection.receive(text),
    skipOversized: (maxBytes) => connection.skipOversized(maxBytes),
    close() {
      if (connection.closed) return;
      connection.close();
      surface.disconnect(peer);
    },
  };
}
