import { fieldErrorOf, rpcFailure, type FailureWords } from "../bridge/rpc-failures.js";
import { sessionNotFound as coreSessionNotFound } from "../bridge/session-error.js";
import { ASK_ERROR_CODES } from "../registry/ask/index.js";
import { rpcErrors, type RpcError } from "../shared/rpc-error.js";

/** A JSON-RPC error the Ask surface answers with, by the name of one of the registry's Ask codes. */
export const askError = rpcErrors(ASK_ERROR_CODES);

/** How the Ask host words a refusal: DESIGN §4.5, each Tau error code has exactly one JSON-RPC counterpart. */
export const ASK_FAILURES: FailureWords<keyof typeof ASK_ERROR_CODES> = {
  error: askError,
  fromTau: {
    parse_error: "parse_error",
    invalid_request: "invalid_request",
    method_not_found: "method_not_found",
    invalid_params: "invalid_params",
    not_found: "session_not_found",
    busy: "busy",
    cancelled: "cancelled",
    internal_error: "internal_error",
  },
  // The core's refusals carry Ask's own code names and words.
  fromSession: (error) => askError(error.code, error.message, error.data),
  tauMessage: namingMethod,
};

/** A Tau error message led by the method it answers, once: many of Tau's messages already start with it. */
function namingMethod(method: string, message: string): string {
  return message.startsWith(`${method} `) || message.startsWith(`${method}:`) ? message : `${method}: ${message}`;
}

/** Maps anything a method handler throws to the error the client receives. */
export const toAskError = (err: unknown): RpcError => rpcFailure(err, ASK_FAILURES);

/** The core's refusal of an unknown (or another tenant's, or closed) session, which is the Ask host's -32004 word for word. */
export const sessionNotFound = (sessionId: string): RpcError => ASK_FAILURES.fromSession(coreSessionNotFound(sessionId));
export const invalidParams = fieldErrorOf(askError);
