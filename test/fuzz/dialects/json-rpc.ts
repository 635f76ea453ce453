import type fc from "fast-check";
import type { Dialect } from "../../../src/registry/model.js";
import { casePieces, type Piece } from "../generators/pieces.js";
import { clientMessages } from "../generators/registry-messages.js";
import { nextMessage } from "../infra/channel-wait.js";
import type { MessageChannel } from "../infra/message-channel.js";
import { ASK_MAX_BATCH, expectJsonRpc, jsonRpcMessageCheck, jsonRpcResponse } from "../oracles/json-rpc-oracle.js";
import type { FuzzSettings } from "../settings.js";
import type { StreamDialect } from "../stream-target.js";

/**
 * Any JSON-RPC dialect of the registry on a message stream (WebSocket, NDJSON): cases built from
 * the dialect's client methods, the JSON-RPC oracle, a cheap request after each case. What is
 * particular to a dialect (its session set-up and a normal session) comes with the spec.
 */

export interface JsonRpcDialectSpec {
  /** The registry dialect (schema bundle) its messages are checked against. */
  dialect: Dialect;
  /** Whether the gateway writes "jsonrpc":"2.0" (app-server peers omit it). */
  jsonrpcMember?: "include" | "omit";
  /** Largest batch accepted; undefined: the dialect has no batches. */
  maxBatch?: number;
  /** How often each method comes up (default 1). */
  weights?: Record<string, number>;
  /** A request answered by the gateway itself, sent after each case to know everything before it was read. */
  sentinelMethod: string;
  prepare: StreamDialect["prepare"];
  stillUsable?: StreamDialect["stillUsable"];
  normalSession: StreamDialect["normalSession"];
}

export const jsonRpcMessages = (spec: Pick<JsonRpcDialectSpec, "dialect" | "weights">, settings: FuzzSettings): fc.Arbitrary<unknown> =>
  clientMessages(spec.dialect, settings.sizes, { weights: spec.weights });

export function jsonRpcDialect(spec: JsonRpcDialectSpec): StreamDialect {
  const envelope = (id: string, method: string, params?: unknown) =>
    JSON.stringify({ ...(spec.jsonrpcMember === "omit" ? {} : { jsonrpc: "2.0" }), id, method, ...(params === undefined ? {} : { params }) });
  return {
    dialect: spec.dialect,
    answers: { response: jsonRpcResponse, check: jsonRpcMessageCheck(spec.dialect, spec.jsonrpcMember) },
    expect: (unit, expectation) => expectJsonRpc(unit, expectation, { maxBatch: spec.maxBatch ?? 0 }),
    cases: (settings): fc.Arbitrary<Piece[]> =>
      casePieces(jsonRpcMessages(spec, settings), settings.sizes, { batches: spec.maxBatch !== undefined, maxBatch: spec.maxBatch ?? ASK_MAX_BATCH }),
    sentinel: (n) => ({ id: `fuzz-sentinel-${n}`, text: envelope(`fuzz-sentinel-${n}`, spec.sentinelMethod) }),
    async handshake() {},
    prepare: spec.prepare,
    stillUsable: spec.stillUsable,
    normalSession: spec.normalSession,
  };
}

let runnerRequests = 0;

/** A request of the runner's own on a raw channel; resolves with its result (checked against the registry). */
export async function jsonRpcResult(dialect: Dialect, channel: MessageChannel, method: string, params: unknown, timeoutMs?: number): Promise<any> {
  const id = `fuzz-runner-${++runnerRequests}`;
  const answer = nextMessage(channel, (m) => m?.id === id && !("method" in m), `the response to ${method}`, timeoutMs);
  channel.sendText(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
  const response = await answer;
  const problems = jsonRpcMessageCheck(dialect)(response, method);
  if (problems.length) throw new Error(`${method}: ${problems.join("; ")}`);
  if (response.error) throw new Error(`${method} failed: ${JSON.stringify(response.error)}`);
  return response.result;
}
