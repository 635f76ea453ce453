import type { ErrorCode } from "../../generated/tau-v18.js";
import { ASK_ERROR_CODES, type AskErrorName } from "../registry/ask/index.js";
import { SessionError } from "../bridge/session-error.js";
import { TauResponseError, UpstreamUnavailableError } from "../tau/upstream.js";
import { STORE_UNAVAILABLE_MESSAGE, storeUnavailableOperation } from "../store/index.js";

/** A JSON-RPC error the Ask surface answers with; `code` is one of the registry's Ask codes. */
export class AskError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }

  static of(name: AskErrorName, message: string, data?: unknown): AskError {
    return new AskError(ASK_ERROR_CODES[name], message, data);
  }
}

/** DESIGN §4.5: each Tau error code has exactly one JSON-RPC counterpart. */
const FROM_TAU: Record<ErrorCode, AskErrorName> = {
  parse_error: "parse_error",
  invalid_request: "invalid_request",
  method_not_found: "method_not_found",
  invalid_params: "invalid_params",
  not_found: "session_not_found",
  busy: "busy",
  cancelled: "cancelled",
  internal_error: "internal_error",
};

/** Maps anything a method handler throws to the error the client receives. */
export function toAskError(err: unknown): AskError {
  if (err instanceof AskError) return err;
  if (err instanceof SessionError) return AskError.of(err.code, err.message, err.data);
  if (err instanceof TauResponseError) {
    return AskError.of(FROM_TAU[err.code] ?? "internal_error", namingMethod(err.method, err.message), { tauCode: err.code });
  }
  if (storeUnavailableOperation(err) !== undefined) return AskError.of("upstream_unavailable", STORE_UNAVAILABLE_MESSAGE);
  if (err instanceof UpstreamUnavailableError) {
    return AskError.of("upstream_unavailable", `Tau host unavailable: ${err.message}; retry once it is back`);
  }
  return AskError.of("internal_error", `Internal error: ${err instanceof Error ? err.message : String(err)}`);
}

/** A Tau error message led by the method it answers, once: many of Tau's messages already start with it. */
function namingMethod(method: string, message: string): string {
  return message.startsWith(`${method} `) || message.startsWith(`${method}:`) ? message : `${method}: ${message}`;
}

/** In the Ask host's words, which clients match. */
export const sessionNotFound = (sessionId: string) => AskError.of("session_not_found", `Session ${sessionId} not found`, { sessionId });
export const invalidParams = (field: string, message: string) => AskError.of("invalid_params", `invalid params: ${field}: ${message}`, { field });
