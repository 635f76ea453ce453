import { errorEntryOf, GATEWAY_ERROR_CODES, JSONRPC_ERROR_CODES } from "../error-codes.js";
import type { ErrorCodeEntry } from "../model.js";

/**
 * JSON-RPC error codes on the ACP surface (protocol §11): the reserved range, ACP's own two
 * (-32000 authentication required, -32002 resource not found) and the gateway's codes for what
 * ACP agents elsewhere never meet (any other integer is allowed).
 */
export const ACP_ERROR_CODES = {
  ...JSONRPC_ERROR_CODES,
  request_cancelled: -32800,
  auth_required: -32000,
  resource_not_found: -32002,
  ...GATEWAY_ERROR_CODES,
} as const;

export type AcpErrorName = keyof typeof ACP_ERROR_CODES;

const entry = errorEntryOf(ACP_ERROR_CODES);

export const acpErrorEntries: ErrorCodeEntry[] = [
  entry("parse_error", "The line is not valid JSON; answered with id null."),
  entry("invalid_request", "Not a JSON-RPC 2.0 request (no jsonrpc member, a batch, no method), or a request before initialize."),
  entry("method_not_found", "The method is not part of the surface; an unknown notification is ignored instead."),
  entry("invalid_params", "Params are missing, mistyped or cannot be honoured; the message names the field."),
  entry("internal_error", "An unexpected failure while handling the request, or a turn that failed (the message is Tau's)."),
  entry("request_cancelled", "The request was cancelled before it completed."),
  entry("auth_required", "Authentication is required first (the gateway authenticates at the transport and never sends it)."),
  entry("resource_not_found", "No such session, another tenant's session, or one this connection has not loaded; data names the sessionId."),
  entry("forbidden", "The caller's role in the session (owner, controller, observer) does not allow the action: an observer prompts, steers, interrupts, closes or answers, or someone other than the owner or an operator grants a role. The message names the method, the principal, its role and the action; data has them as fields.", true),
  entry("busy", "The session cannot take this request now (Tau busy), e.g. another client's turn is running.", true),
  entry("upstream_unavailable", "The Tau host cannot be reached, or the gateway is shutting down.", true),
  entry("overloaded", "A gateway limit was reached; retry later.", true),
];
