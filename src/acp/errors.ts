import type { ErrorCode } from "../../generated/tau-v18.js";
import { SessionError } from "../bridge/session-error.js";
import { ACP_ERROR_CODES, type AcpErrorName } from "../registry/acp/index.js";
import { TauResponseError, UpstreamUnavailableError } from "../tau/upstream.js";
import { STORE_UNAVAILABLE_MESSAGE, storeUnavailableOperation } from "../store/index.js";

/** A JSON-RPC error the ACP surface answers with; `code` is one of the registry's ACP codes. */
export class AcpError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }

  static of(name: AcpErrorName, message: string, data?: unknown): AcpError {
    return new AcpError(ACP_ERROR_CODES[name], message, data);
  }
}

/** Each Tau error code's ACP counterpart: a session Tau does not know is ACP's "resource not found". */
const FROM_TAU: Record<ErrorCode, AcpErrorName> = {
  parse_error: "internal_error",
  invalid_request: "internal_error",
  method_not_found: "internal_error",
  invalid_params: "invalid_params",
  not_found: "resource_not_found",
  busy: "busy",
  cancelled: "request_cancelled",
  internal_error: "internal_error",
};

/** Maps anything a method handler throws to the error the client receives. */
export function toAcpError(err: unknown): AcpError {
  if (err instanceof AcpError) return err;
  if (err instanceof TauResponseError) return AcpError.of(FROM_TAU[err.code] ?? "internal_error", `${err.method}: ${err.message}`, { tauCode: err.code });
  if (storeUnavailableOperation(err) !== undefined) return AcpError.of("upstream_unavailable", STORE_UNAVAILABLE_MESSAGE);
  if (err instanceof UpstreamUnavailableError) return AcpError.of("upstream_unavailable", `Tau host unavailable: ${err.message}; retry once it is back`);
  if (err instanceof SessionError) {
    if (err.code === "session_not_found") return sessionNotFound(err.data?.sessionId ?? "");
    return AcpError.of(err.code === "invalid_params" ? "invalid_params" : "resource_not_found", err.message);
  }
  return AcpError.of("internal_error", `Internal error: ${err instanceof Error ? err.message : String(err)}`);
}

/**
 * The one answer for a session the connection cannot use — unknown, another tenant's, or not loaded
 * on this connection — so an answer never tells them apart. Shaped as the SDK's `sessionNotFound`.
 */
export const sessionNotFound = (sessionId: string) => AcpError.of("resource_not_found", "Resource not found", { sessionId });

export const invalidParams = (field: string, message: string) => AcpError.of("invalid_params", `invalid params: ${field}: ${message}`, { field });
