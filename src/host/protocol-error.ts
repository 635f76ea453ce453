import type { ErrorObject } from "../../generated/tau-v18.js";
import { errorText } from "../shared/unknown-values.js";

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
export const cancelled = (message: string, data?: { cause: string }) => new ProtocolError("cancelled", message, data);
/** Tau's words for a session it does not have, whatever the method (clients match on them). */
export const sessionNotFound = (sessionId: string) => new ProtocolError("not_found", "session not found", { sessionId });

/** What Tau answers when a handler throws: a fixed message, the reason in `data.cause` (spec §3). */
export const REQUEST_FAILED = "session protocol request failed";

/** A handler's own failure, answered exactly as Tau answers an error thrown inside its handler. */
export const requestFailed = (cause: string) => new ProtocolError("internal_error", REQUEST_FAILED, { cause });

/** An internal failure with a fixed public message and the reason in `data.cause`. */
export const internalError = (message: string, cause: unknown) =>
  new ProtocolError("internal_error", message, { cause: errorText(cause) });

/** The wire form of any error thrown by a handler. */
export function toWireError(err: unknown): ErrorObject {
  if (err instanceof ProtocolError) {
    return err.data === undefined ? { code: err.code, message: err.message } : { code: err.code, message: err.message, data: err.data };
  }
  return { code: "internal_error", message: REQUEST_FAILED, data: { cause: errorText(err) } };
}
