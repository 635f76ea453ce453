import { randomUUID } from "node:crypto";
import { CODEX_METHOD_NAMES, CodexError, type CodexBridge, type CodexPeer } from "../codex/codex-bridge.js";
import { CODEX_ERROR_CODES } from "../registry/codex/index.js";
import type { Log } from "../shared/log.js";
import { runCall, type CallGate } from "./jsonrpc-envelope.js";
import { AskError } from "../bridge/ask-bridge.js";
import { answeredError, jsonRpcConnection } from "./jsonrpc-connection.js";
import { textOf } from "./shared-text.js";

/**
 * One Codex app-server connection, whatever carries its text (WebSocket, stdio): the JSON-RPC
 * framing (jsonrpc-connection.ts) as Codex speaks it — no `"jsonrpc"` member, no batches, no
 * answer to a message without a usable id — with the Codex bridge behind it, server requests on
 * the same connection numbered from 0, and notifications that can be held back until a response
 * has been written (see CodexPeer.holdNotifications).
 */

export interface CodexJsonRpcOptions {
  tenant?: string;
  /** Runs every client request (drain, in-flight limit, metrics); default: run it. */
  gate?: CallGate;
  /**
   * How long held notifications wait after the response they follow (default: one turn of the
   * event loop). On a pipe, a reader slower than the writer gets both in one read when the gap is
   * shorter than its wake-up, and a client that subscribes only after the response misses them.
   */
  releaseDelayMs?: number;
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

export function attachCodexJsonRpc(bridge: CodexBridge, sendText: (text: string) => void, options: CodexJsonRpcOptions = {}): CodexJsonRpcConnection {
  const gate = options.gate ?? runCall;
  // A client fault, not ours: said once per connection (more of them only at debug), so a client
  // that keeps sending such messages cannot flood the log.
  let droppedBefore = false;
  const onDropped = (reason: string) => {
    options.log?.(droppedBefore ? "debug" : "info", "codex message dropped without an answer", { reason });
    droppedBefore = true;
  };
  const connection = jsonRpcConnection((message) => sendText(textOf(message)), {
    jsonrpcMember: "omit",
    methods: CODEX_METHOD_NAMES,
    call: (method, params, hooks) => gate(method, () => bridge.call(peer, method, params, hooks.afterResponse), hooks.notification),
    errorOf: (error) => answeredError(error, [CodexError, AskError], CODEX_ERROR_CODES.internal_error),
    codes: CODEX_ERROR_CODES,
    batches: false,
    answerUnidentifiable: false,
    firstRequestId: 0, // unused: the peer numbers its server requests itself (they may wait in the hold)
    onDropped,
  });

  // Notifications and server requests held while a response that must precede them is being made;
  // sent in order once the last hold is released, in a later turn of the event loop, so they never
  // share a write (or a client's read) with that response.
  let holds = 0;
  let nextRequestId = 0;
  let held: Array<() => void> = [];
  const flush = () => {
    if (holds > 0) return;
    const queue = held;
    held = [];
    for (const send of queue) send();
  };

  const peer: CodexPeer = {
    id: randomUUID(),
    tenant: options.tenant,
    client: { initialized: false, experimentalApi: false, optedOut: new Set() },
    notify(method, params) {
      const send = () => connection.send({ method, params });
      if (holds > 0 || held.length > 0) held.push(send);
      else send();
    },
    request(method, params, signal) {
      const id = nextRequestId++;
      if (holds === 0 && held.length === 0) return { id, answer: connection.request(method, params, signal, id).answer };
      const answer = new Promise<unknown>((resolve, reject) => held.push(() => void connection.request(method, params, signal, id).answer.then(resolve, reject)));
      return { id, answer };
    },
    holdNotifications() {
      holds++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        holds--;
        if (options.releaseDelayMs) setTimeout(flush, options.releaseDelayMs);
        else setImmediate(flush);
      };
    },
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
      bridge.disconnect(peer);
    },
  };
}
