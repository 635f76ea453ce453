import { fieldErrorOf, type FailureWords } from "../bridge/rpc-failures.js";
import { ACP_ERROR_CODES } from "../registry/acp/index.js";
import { rpcErrors } from "../shared/rpc-error.js";

/** A JSON-RPC error the ACP surface answers with, by the name of one of the registry's ACP codes. */
export const acpError = rpcErrors(ACP_ERROR_CODES);

/**
 * The one answer for a session the connection cannot use — unknown, another tenant's, or not loaded
 * on this connection — so an answer never tells them apart. Shaped as the SDK's `sessionNotFound`.
 */
export const sessionNotFound = (sessionId: string) => acpError("resource_not_found", "Resource not found", { sessionId });

export const invalidParams = fieldErrorOf(acpError);

/** How ACP words a refusal: a session Tau or the core does not know is ACP's "resource not found". */
export const ACP_FAILURES: FailureWords<keyof typeof ACP_ERROR_CODES> = {
  error: acpError,
  fromTau: {
    parse_error: "internal_error",
    invalid_request: "internal_error",
    method_not_found: "internal_error",
    invalid_params: "invalid_params",
    not_found: "resource_not_found",
    busy: "busy",
    cancelled: "request_cancelled",
    internal_error: "internal_error",
  },
  fromSession: (error) => {
    if (error.code === "session_not_found") return sessionNotFound(error.data?.sessionId ?? "");
    if (error.code === "forbidden") return acpError("forbidden", error.message, error.data);
    return acpError(error.code === "invalid_params" ? "invalid_params" : "resource_not_found", error.message);
  },
};

