import type { ErrorObject } from "../../generated/tau-v18.js";

/**
 * An error a handler means to send as Tau's error response, with its code. Anything else thrown
 * inside a handler becomes `internal_error` "session protocol request failed" (spec §3).
 */
export class ProtocolError extends Error {
  constructor(
    readonly code: ErrorObject["code"],
    message: string,
    readonly data?: ErrorObject["data"],
  ) {
    super(message);
    this.name = "ProtocolError";
  }
}

export const busy = (message: string) => new ProtocolError("busy", message);
export const invalidRequest = (message: string) => new ProtocolError("invalid_request", message);
export const invalidParams = (message: string) => new ProtocolError("invalid_params", message);
export const cancelled = (message: string) => new ProtocolError("cancelled", message);
export const sessionNotFound = (sessionId: string) => new ProtocolError("not_found", `session not found: ${sessionId}`, { sessionId });

/** An internal failure with a fixed public message and the reason in `data.cause`. */
export const internalError = (message: string, cause: unknown) =>
  new ProtocolError("internal_error", message, { cause: cause instanceof Error ? cause.message : String(cause) });

/** The wire form of any error thrown by a handler. */
export function toWireError(err: unknown): ErrorObject {
  if (err instanceof ProtocolError) {
    return err.data === undefined ? { code: err.code, message: err.message } : { code: err.code, message: err.message, data: err.data };
  }
  return { code: "internal_error", message: "session protocol request failed", data: { cause: err instanceof Error ? err.message : String(err) } };
}
