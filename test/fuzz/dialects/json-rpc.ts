import type fc from "fast-check";
import type { Dialect } from "../../../src/registry/index.js";
import { casePieces, type Piece } from "../generators/pieces.js";
import { clientMessages } from "../generators/registry-messages.js";
import { nextMessage } from "../infra/channel-wait.js";
import type { MessageChannel } from "../infra/message-channel.js";
import { ASK_MAX_BATCH, expectJsonRpc, jsonRpcMessageCheck, jsonRpcResponse, type JsonRpcFraming } from "../oracles/json-rpc-oracle.js";
import type { FuzzSettings } from "../settings.js";
import type { StreamDialect } from "../stream-target.js";

/**
 * Any JSON-RPC dialect of the registry on a message stream (WebSocket, NDJSON): cases built from
 * the dialect's client methods, the JSON-RPC oracle with the dialect's framing, a cheap request
 * after each case. What is particular to a dialect (its handshake, session set-up and a normal
 * session) comes with the spec.
 */

/** Who the runner's own requests speak to: the dialect, and whether its messages carry "jsonrpc". */
export interface JsonRpcPeer {
  /** The registry dialect (schema bundle) its messages are checked against. */
  dialect: Dialect;
  /** Whether the gateway writes "jsonrpc":"2.0" (app-server peers omit it); default include. */
  jsonrpcMember?: "include" | "omit";
}

export interface JsonRpcDialectSpec extends JsonRpcPeer {
  /** Batches, unidentifiable messages, the "jsonrpc" member: what each message is owed. */
  framing: JsonRpcFraming;
  /** How often each method comes up (default 1). */
  weights?: Record<string, number>;
  /** A request answered by the gateway itself, sent after each case to know everything before it was read. */
  sentinel: { method: string; params?: unknown };
  /** Brings a new connection to where cases start (e.g. initialize); default: nothing to do. */
  handshake?: StreamDialect["handshake"];
  prepare: StreamDialect["prepare"];
  stillUsable?: StreamDialect["stillUsable"];
  normalSession: StreamDialect["normalSession"];
}

export const jsonRpcMessages = (spec: Pick<JsonRpcDialectSpec, "dialect" | "weights">, settings: FuzzSettings): fc.Arbitrary<unknown> =>
  clientMessages(spec.dialect, settings.sizes, { weights: spec.weights });

export function jsonRpcDialect(spec: JsonRpcDialectSpec): StreamDialect {
  return {
    dialect: spec.dialect,
    answers: { response: jsonRpcResponse, check: jsonRpcMessageCheck(spec.dialect, spec.jsonrpcMember) },
    expect: (unit, expectation) => expectJsonRpc(unit, expectation, spec.framing),
    // Batches are sent to every dialect: one without them must refuse them.
    cases: (settings): fc.Arbitrary<Piece[]> =>
      casePieces(jsonRpcMessages(spec, settings), settings.sizes, { batches: true, maxBatch: spec.framing.maxBatch || ASK_MAX_BATCH }),
    sentinel: (n) => {
      const id = `fuzz-sentinel-${n}`;
      return { id, text: JSON.stringify({ jsonrpc: "2.0", id, method: spec.sentinel.method, ...(spec.sentinel.params === undefined ? {} : { params: spec.sentinel.params }) }) };
    },
    handshake: spec.handshake ?? (async () => undefined),
    prepare: spec.prepare,
    stillUsable: spec.stillUsable,
    normalSession: spec.normalSession,
  };
}

let runnerRequests = 0;

/** A request of the runner's own on a raw channel; resolves with its result (checked against the registry). */
export async function jsonRpcResult(peer: Dialect | JsonRpcPeer, channel: MessageChannel, method: string, params: unknown, timeoutMs?: number): Promise<any> {
  const { dialect, jsonrpcMember } = typeof peer === "string" ? { dialect: peer, jsonrpcMember: undefined } : peer;
  const id = `fuzz-runner-${++runnerRequests}`;
  const answer = nextMessage(channel, (m) => m?.id === id && !("method" in m), `the response to ${method}`, timeoutMs);
  channel.sendText(JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) }));
  const response = await answer;
  const problems = jsonRpcMessageCheck(dialect, jsonrpcMember)(response, method);
  if (problems.length) throw new Error(`${method}: ${problems.join("; ")}`);
  if (response.error) throw new Error(`${method} failed: ${JSON.stringify(response.error)}`);
  return response.result;
}

/** A notification of the runner's own. */
export function jsonRpcNotify(channel: MessageChannel, method: string, params?: unknown): void {
  channel.sendText(JSON.stringify({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) }));
}

/**
 * Checks every message `channel` receives from now on against the dialect's schema (responses as
 * responses of any method: jsonRpcResult checks its own against theirs); the returned function
 * stops and gives the problems found.
 */
export function checkEveryMessage(peer: JsonRpcPeer, channel: MessageChannel): () => string[] {
  const check = jsonRpcMessageCheck(peer.dialect, peer.jsonrpcMember);
  const problems: string[] = [];
  const stop = channel.onMessage((text) => {
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      problems.push(`not JSON: ${text.slice(0, 200)}`);
      return;
    }
    problems.push(...check(message, undefined).map((p) => `${p}: ${text.slice(0, 300)}`));
  });
  return () => {
    stop();
    return problems;
  };
}
