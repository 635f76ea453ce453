import type { Dialect } from "../../../src/registry/index.js";
import { ProtocolValidators } from "../../../src/validation/validator.js";
import { formatIssue } from "../../../src/validation/issues.js";
import type { DialectAnswers } from "./answer-ledger.js";
import type { Expectation } from "./expectation.js";
import { isObject } from "../../../src/shared/unknown-values.js";
import { jsonBoundsError, topLevelId } from "../../../src/shared/json-bounds.js";

/**
 * JSON-RPC 2.0 as the gateway's dialects speak it (Ask, Codex app-server, ACP; JSON-RPC 2.0 §4–6):
 * a request with a usable id (a string or a safe integer) gets exactly one response with that id,
 * whatever is wrong with it, and an answer to one of the gateway's own requests gets none. What
 * names no usable id — text that is not JSON, a non-object, a null or malformed id, an empty or
 * oversized batch, a batch where the dialect has none — gets exactly one error with a null id, or
 * nothing where the dialect drops such messages (Codex: its clients cannot match such an answer).
 * A notification gets nothing, unless its envelope is broken (no method, a method that is not a
 * string, a wrong "jsonrpc"), which is reported with a null id where the dialect answers those.
 * A message past the gateway's bounds on its shape (json-bounds.ts) is refused whole before it is
 * parsed, a batch included: one error, with the message's top-level id when it has a usable one.
 */

/** Largest batch the gateway takes on Ask (the transports' default); a larger one is refused whole. */
export const ASK_MAX_BATCH = 100;

/** The registry's RequestId: a string or a safe integer. */
const isUsableId = (v: unknown): v is string | number => typeof v === "string" || Number.isSafeInteger(v);

/** How a dialect frames JSON-RPC: what the oracle needs to know what each message is owed. */
export interface JsonRpcFraming {
  /** Largest batch accepted; false: an array is not a message of the dialect (refused like one without a usable id). */
  maxBatch: number | false;
  /** What happens to a message that names no usable id: one error with a null id, or nothing. */
  unidentifiable: "answer" | "drop";
  /** Every message must carry "jsonrpc":"2.0" (ACP); otherwise the member is optional. */
  jsonrpcRequired?: boolean;
  /** POST /rpc answers a blank body with a parse error; a blank line or message is ignored elsewhere. */
  blankIsParseError?: boolean;
}

export const ASK_FRAMING: JsonRpcFraming = { maxBatch: ASK_MAX_BATCH, unidentifiable: "answer" };

export function expectJsonRpc(unit: string, expectation: Expectation, framing: JsonRpcFraming): void {
  const unidentifiable = () => {
    if (framing.unidentifiable === "answer") expectation.oweNull(true);
  };
  if (unit.trim() === "") {
    if (framing.blankIsParseError) expectation.oweNull(true);
    return;
  }
  if (jsonBoundsError(unit)) {
    expectation.sent++;
    const id = topLevelId(unit);
    return id !== undefined ? expectation.owe(id, undefined) : unidentifiable();
  }
  let value: unknown;
  try {
    value = JSON.parse(unit);
  } catch {
    expectation.sent++;
    return unidentifiable();
  }
  if (!Array.isArray(value)) return expectElement(value, expectation, framing);
  if (framing.maxBatch !== false && value.length > 0 && value.length <= framing.maxBatch) {
    for (const element of value) expectElement(element, expectation, framing);
    return;
  }
  expectation.sent++;
  // An empty or oversized batch is refused with a null id even where unidentifiable messages are dropped.
  if (framing.maxBatch === false) unidentifiable();
  else expectation.oweNull(true);
}

function expectElement(message: unknown, expectation: Expectation, framing: JsonRpcFraming): void {
  expectation.sent++;
  const unidentifiable = () => {
    if (framing.unidentifiable === "answer") expectation.oweNull(true);
  };
  if (!isObject(message)) return unidentifiable();
  const hasId = "id" in message;
  // (ACP serves a request whose id is null: its one answer carries that null id, counted alike.)
  if (hasId && !isUsableId(message.id)) return unidentifiable();
  const brokenVersion = framing.jsonrpcRequired ? message.jsonrpc !== "2.0" : "jsonrpc" in message && message.jsonrpc !== "2.0";
  const isReply = !("method" in message) && ("result" in message || "error" in message);
  const brokenEnvelope = brokenVersion || !("method" in message) || typeof message.method !== "string";
  if (hasId) {
    // A well-formed answer to one of the gateway's own requests is taken, never answered.
    if (isReply && !brokenVersion) return;
    return expectation.owe(message.id, typeof message.method === "string" ? message.method : undefined);
  }
  // Without an id, only a broken envelope is reported (with a null id); a notification never is.
  if (brokenEnvelope) unidentifiable();
}

/**
 * Checks messages the gateway sends in `dialect` against the registry's schema, plus what JSON-RPC
 * 2.0 §5 requires of a response: exactly one of result and error, and the version member unless
 * the dialect omits it (app-server peers).
 */
export function jsonRpcMessageCheck(dialect: Dialect, jsonrpcMember: "include" | "omit" = "include"): DialectAnswers["check"] {
  return (message, respondsTo) => {
    const schema = ProtocolValidators.shared().get(dialect);
    const problems: string[] = [];
    if (isObject(message) && !("method" in message)) {
      if ("result" in message === "error" in message) problems.push(`a response must have exactly one of result and error: ${JSON.stringify(message).slice(0, 300)}`);
      if (jsonrpcMember === "include" && message.jsonrpc !== "2.0") problems.push(`a response must carry "jsonrpc":"2.0": ${JSON.stringify(message).slice(0, 300)}`);
      if (jsonrpcMember === "omit" && "jsonrpc" in message) problems.push(`a response must not carry "jsonrpc": ${JSON.stringify(message).slice(0, 300)}`);
    }
    const known = respondsTo !== undefined && schema.method(respondsTo)?.direction === "client-to-server" ? respondsTo : undefined;
    const checked = schema.message("server", message, known);
    if (!checked.ok) problems.push(`invalid ${checked.subject ?? "server"} message from the gateway (${checked.issues.slice(0, 3).map(formatIssue).join("; ")})`);
    return problems;
  };
}

/** Ask messages with "jsonrpc":"2.0", as `tau-gateway serve` and `stdio` send them by default. */
export const checkAskMessage = jsonRpcMessageCheck("ask");

/** The id a JSON-RPC response answers, or undefined for a notification or (reverse) request. */
export function jsonRpcResponse(message: unknown): { id: unknown; errorCode?: string } | undefined {
  if (!isObject(message) || "method" in message) return undefined;
  const error = isObject(message.error) ? String(message.error.code) : undefined;
  return { id: "id" in message ? message.id : null, errorCode: error };
}
