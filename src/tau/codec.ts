import type { ClientMessage, ErrorCode, ErrorResponse, ServerMessage, SuccessResponse } from "../../generated/tau-v18.js";
import { formatIssue } from "../validation/issues.js";
import { ProtocolValidators, type BundleValidator } from "../validation/validator.js";

/**
 * Tau's envelope codec: turns one incoming WebSocket text message into a validated request, or
 * into exactly the error response `tau serve` would send (spec §2.1, checked in the host's order),
 * and builds outgoing responses. The host and the gateway's `/tau` front door share it, so an
 * invalid request is answered identically by both and never forwarded.
 */

export const TAU_VERSION = 18;

export type TauRequest = ClientMessage;

export interface TauProtocolError {
  code: ErrorCode;
  message: string;
  data?: unknown;
}

export type ParsedRequest =
  | { ok: true; request: TauRequest }
  | { ok: false; id: string | null; error: TauProtocolError; method?: string };

const WHITESPACE_ONLY = /^[\t\n\r ]*$/;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isRequestId = (v: unknown): v is string => typeof v === "string" && v.trim().length > 0;

export class TauCodec {
  readonly version: number;
  private readonly schema: BundleValidator;

  constructor(version = TAU_VERSION, validators = ProtocolValidators.shared()) {
    this.version = version;
    this.schema = validators.get("tau", version);
  }

  /** Parses and validates one request line; never throws. */
  parseRequest(text: string): ParsedRequest {
    if (WHITESPACE_ONLY.test(text)) return fail(null, "invalid_request", "request line cannot be empty");
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
      const first = checked.issues[0];
      const where = first ? `params${first.pointer.replace(/\//g, ".")}` : "params";
      const message = first ? `${method} ${where} ${first.message}` : `${method} params are invalid`;
      return { ok: false, id, method, error: { code: "invalid_params", message, data: { issues: checked.issues.map(formatIssue) } } };
    }
    return { ok: true, request: value as unknown as TauRequest };
  }

  success(id: string, result: unknown): SuccessResponse {
    return { version: this.version, type: "response", id, ok: true, result } as SuccessResponse;
  }

  error(id: string | null, error: TauProtocolError): ErrorResponse {
    return {
      version: this.version,
      type: "response",
      id,
      ok: false,
      error: error.data === undefined ? { code: error.code, message: error.message } : error,
    } as ErrorResponse;
  }

  /** Checks an outgoing server message (the host validates everything it sends). */
  checkServerMessage(message: ServerMessage | Record<string, unknown>, respondsTo?: string) {
    return this.schema.message("server", message, respondsTo);
  }

  get validator(): BundleValidator {
    return this.schema;
  }
}

function fail(id: string | null, code: ErrorCode, message: string, data?: unknown): ParsedRequest {
  return { ok: false, id, error: data === undefined ? { code, message } : { code, message, data } };
}

/** A client's value as text for an error message. parseRequest never throws: JSON.parse reads any nesting depth, JSON.stringify overflows the stack on deep values. */
function display(v: unknown): string {
  if (typeof v === "string") return v;
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return Array.isArray(v) ? "(a deeply nested array)" : "(a deeply nested object)";
  }
}
