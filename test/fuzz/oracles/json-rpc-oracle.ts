import type { Dialect } from "../../../src/registry/model.js";
import { ProtocolValidators } from "../../../src/validation/validator.js";
import { formatIssue } from "../../../src/validation/issues.js";
import type { DialectAnswers } from "./answer-ledger.js";
import type { Expectation } from "./expectation.js";

/**
 * JSON-RPC 2.0 as the gateway speaks it (Ask; any dialect on the same JSON-RPC layer): a request
 * with a string or (safe) integer id gets exactly one response with that id, whatever is wrong
 * with it. A message whose id cannot be used (null, a float, an object…), a non-object, an
 * unparsable text, an empty or oversized batch and a message without a method get one error with
 * a null id. A notification gets nothing. A response to one of the gateway's own reverse requests
 * gets nothing either (or an error, when its envelope is broken).
 */

/** Largest batch the gateway takes (the transports' default); a larger one is refused whole. */
export const ASK_MAX_BATCH = 100;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
/** The registry's RequestId: a string or a safe integer. */
const isUsableId = (v: unknown): v is string | number => typeof v === "string" || Number.isSafeInteger(v);

export interface JsonRpcUnitOptions {
  /** POST /rpc answers a blank body with a parse error; a blank line or message is ignored elsewhere. */
  blankIsParseError?: boolean;
  /** Largest batch accepted (default ASK_MAX_BATCH). */
  maxBatch?: number;
}

export function expectJsonRpc(unit: string, expectation: Expectation, options: JsonRpcUnitOptions = {}): void {
  if (unit.trim() === "") {
    if (options.blankIsParseError) expectation.oweNull(true);
    return;
  }
  let value: unknown;
  try {
    value = JSON.parse(unit);
  } catch {
    expectation.sent++;
    return expectation.oweNull(true);
  }
  if (!Array.isArray(value)) return expectElement(value, expectation);
  if (value.length === 0 || value.length > (options.maxBatch ?? ASK_MAX_BATCH)) {
    expectation.sent++;
    return expectation.oweNull(true);
  }
  for (const element of value) expectElement(element, expectation);
}

function expectElement(message: unknown, expectation: Expectation): void {
  expectation.sent++;
  if (!isObject(message)) return expectation.oweNull(true);
  const method = typeof message.method === "string" ? message.method : undefined;
  // Shaped like a client's answer to a reverse request: consumed, unless its envelope is broken.
  const looksLikeAnswer = !("method" in message) && ("result" in message || "error" in message);
  if ("id" in message) {
    const id = message.id;
    if (isUsableId(id)) return expectation.owe(id, method, !looksLikeAnswer);
    if (id === null && looksLikeAnswer) return expectation.oweNull(false);
    return expectation.oweNull(true);
  }
  const brokenEnvelope = !("method" in message) || typeof message.method !== "string" || ("jsonrpc" in message && message.jsonrpc !== "2.0");
  // A notification is never answered; JSON-RPC would answer one with non-structured params with an error.
  expectation.oweNull(brokenEnvelope);
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
