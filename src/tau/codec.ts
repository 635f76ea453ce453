import type { ClientMessage, ErrorCode, ErrorObject, ErrorResponse, ServerMessage, SuccessResponse } from "../../generated/tau-v18.js";
import { TAU_PARAMS_WORDING } from "../registry/tau/index.js";
import { formatIssue } from "../validation/issues.js";
import { ProtocolValidators, type BundleValidator } from "../validation/validator.js";
import { tauParamsMessage } from "./params-words.js";
import { jsonBoundsError, topLevelId } from "../shared/json-bounds.js";
import { isObject } from "../shared/unknown-values.js";

/**
 * Tau's envelope codec, both directions, the one place Tau messages are read and written.
 *
 * Client messages: one incoming WebSocket text message becomes a validated request, or exactly the
 * error response `tau serve` would send (spec §2.1, checked in the host's order). The host and the
 * gateway's `/tau` front door share it, so an invalid request is answered identically by both and
 * never forwarded.
 *
 * Server messages: every message a Tau host sends is parsed and schema-checked here, a response
 * against the result of the method it answers (found by the caller's open-request table), for the
 * gateway's own upstream client, the `/tau` relay and the `ready` handshake alike.
 */

export const TAU_VERSION = 18;

export type TauRequest = ClientMessage;

/** One WebSocket message from a Tau host as a JSON value, or why it is none. */
export type DecodedServerMessage = { ok: true; value: unknown; text: string } | { ok: false; problem: string; details: Record<string, unknown> };

/** A server message checked against its schema; `answers` is the open request a response answers (now closed). */
export type ParsedServerMessage<R> =
  | { ok: true; message: ServerMessage; text: string; answers: R | undefined }
  | { ok: false; problem: string; details: Record<string, unknown>; answers: R | undefined };

/** A request, or the error response Tau would send; `issues` (invalid params) are our validator's findings, for operators' logs only. */
export type ParsedRequest =
  | { ok: true; request: TauRequest }
  | { ok: false; id: string | null; error: ErrorObject; method?: string; issues?: string[] };

const WHITESPACE_ONLY = /^[\t\n\r ]*$/;
const isRequestId = (v: unknown): v is string => typeof v === "string" && v.trim().length > 0;

export class TauCodec {
  private static instance: TauCodec | undefined;
  readonly version: number;
  private readonly schema: BundleValidator;

  /** The codec of the current version over the process-wide validators, made on first use. */
  static shared(): TauCodec {
    return (TauCodec.instance ??= new TauCodec());
  }

  constructor(version = TAU_VERSION, validators = ProtocolValidators.shared()) {
    this.version = version;
    this.schema = validators.get("tau", version);
  }

  /** Parses and validates one request line; never throws. */
  parseRequest(text: string): ParsedRequest {
    if (WHITESPACE_ONLY.test(text)) return fail(null, "invalid_request", "request line cannot be empty");
    // Before parsing: a request's shape is bounded (json-bounds.ts); Tau has no such bound, so the words are the gateway's.
    const refused = jsonBoundsError(text);
    if (refused) {
      // The request's id, when it can be read without parsing, so the refusal answers that request.
      const id = topLevelId(text);
      return fail(typeof id === "string" && isRequestId(id) ? id : null, "invalid_request", `request refused: ${refused.message}`, { limit: refused.limit });
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      return fail(null, "parse_error", "failed to parse JSON request line", { cause: (err as Error).message });
    }
    return this.checkRequest(value);
  }

  /** Validates an already-parsed request value, in the host's order of checks. */
  checkRequest(value: unknown): ParsedRequest {
    if (!isObject(value)) return fail(null, "invalid_request", "request must be a JSON object");
    if (!isRequestId(value.id)) return fail(null, "invalid_request", "request id must be a non-empty string");
    const id = value.id;
    if (value.version !== this.version) {
      return fail(id, "invalid_request", `unsupported session protocol version: ${display(value.version)}`);
    }
    if (value.type !== "request") return fail(id, "invalid_request", 'request.type must be "request"');
    if (typeof value.method !== "string") return fail(id, "invalid_request", "request.method must be a string");
    if (!("params" in value) || value.params === undefined) return fail(id, "invalid_request", "request.params is required");
    const method = value.method;
    const entry = this.schema.method(method);
    if (!entry || entry.kind !== "request") return fail(id, "method_not_found", `unsupported method: ${method}`);
    const checked = this.schema.params(method, value.params, "");
    if (!checked.ok) {
      // Tau's own sentence and nothing else on the wire; what our validator found is for the log.
      const message = tauParamsMessage(method, TAU_PARAMS_WORDING.get(method), checked.errors ?? []);
      return { ok: false, id, method, error: { code: "invalid_params", message }, issues: checked.issues.map(formatIssue) };
    }
    return { ok: true, request: value as unknown as TauRequest };
  }

  /** The text of a request envelope. */
  encodeRequest(id: string, method: string, params: object): string {
    return JSON.stringify({ version: this.version, type: "request", id, method, params });
  }

  success(id: string, result: unknown): SuccessResponse {
    return { version: this.version, type: "response", id, ok: true, result } as SuccessResponse;
  }

  error(id: string | null, error: ErrorObject): ErrorResponse {
    return {
      version: this.version,
      type: "response",
      id,
      ok: false,
      error: error.data === undefined ? { code: error.code, message: error.message } : error,
    } as ErrorResponse;
  }

  /** Checks a server message (the host checks everything it sends, clients everything they receive). */
  checkServerMessage(message: unknown, respondsTo?: string) {
    return this.schema.message("server", message, respondsTo);
  }

  /** The JSON of one WebSocket message from a host (`text` undefined: a binary frame), not yet checked. */
  decodeServerMessage(text: string | undefined): DecodedServerMessage {
    if (text === undefined) return { ok: false, problem: "a binary frame (Tau messages are text)", details: {} };
    try {
      return { ok: true, value: JSON.parse(text), text };
    } catch {
      return { ok: false, problem: "not JSON", details: { text: text.slice(0, 200) } };
    }
  }

  /**
   * Parses and checks one WebSocket message from a host; never throws. A response with a string id
   * is first matched with `answered` (which closes the open request it answers, if any) and then
   * checked against that request's method, so a response is matched even when it is invalid.
   */
  parseServerMessage<R extends { method: string }>(text: string | undefined, answered?: (id: string) => R | undefined): ParsedServerMessage<R> {
    const decoded = this.decodeServerMessage(text);
    if (!decoded.ok) return { ...decoded, answers: undefined };
    const { value, text: messageText } = decoded;
    const response = isObject(value) && value.type === "response" && typeof value.id === "string" ? value.id : undefined;
    const answers = response === undefined ? undefined : answered?.(response);
    const checked = this.checkServerMessage(value, answers?.method);
    if (!checked.ok) {
      const problem = answers ? `invalid response to ${answers.method}` : `invalid ${checked.subject ?? "server"} message`;
      return { ok: false, problem, details: { issues: checked.issues.slice(0, 5).map(formatIssue) }, answers };
    }
    return { ok: true, message: value as ServerMessage, text: messageText, answers };
  }

  get validator(): BundleValidator {
    return this.schema;
  }
}

function fail(id: string | null, code: ErrorCode, message: string, data?: unknown): ParsedRequest {
  return { ok: false, id, error: data === undefined ? { code, message } : { code, message, data } };
}

/**
 * A client's value as Tau prints it in an error message: `String(value)`, so an object is
 * "[object Object]" and an array its items joined with commas. parseRequest never throws: JSON.parse
 * reads any nesting depth, and joining a deeply nested array overflows the stack.
 */
function display(v: unknown): string {
  try {
    return String(v);
  } catch {
    return "(a value that cannot be shown)";
  }
}
