import { errorEntryOf, GATEWAY_ERROR_CODES, JSONRPC_ERROR_CODES } from "../error-codes.js";
import type { ErrorCodeEntry } from "../model.js";

/**
 * JSON-RPC error codes of the Codex surface. Codex itself answers -32600 for nearly every failure
 * (unknown methods included); the gateway keeps the JSON-RPC meanings (-32601 for an unknown
 * method, -32602 naming the field for bad params), which the clients measured cope with, and adds
 * its own codes for conditions a Codex server never meets.
 */
export const CODEX_ERROR_CODES = {
  ...JSONRPC_ERROR_CODES,
  ...GATEWAY_ERROR_CODES,
} as const;

export type CodexErrorName = keyof typeof CODEX_ERROR_CODES;

const entry = errorEntryOf(CODEX_ERROR_CODES);

export const codexErrorEntries: ErrorCodeEntry[] = [
  entry("parse_error", "The message is not valid JSON; answered with id null."),
  entry(
    "invalid_request",
    "As in Codex: not initialized, already initialized, an unknown or foreign thread, no active turn, an experimental method or field without capabilities.experimentalApi.",
  ),
  entry("method_not_found", "The method is not part of the gateway's surface (Codex answers -32600 here)."),
  entry("invalid_params", "Params do not fit the registry or cannot be honoured; the message names the field."),
  entry("internal_error", "An unexpected failure while handling the request."),
  entry("forbidden", "The caller's role in the session (owner, controller, observer) does not allow the action: an observer prompts, steers, interrupts, closes or answers, or someone other than the owner or an operator grants a role. The message names the method, the principal, its role and the action; data has them as fields.", true),
  entry("busy", "The Tau session cannot take this request now, e.g. another mutation is in progress.", true),
  entry("upstream_unavailable", "The upstream Tau host cannot be reached, or the gateway is shutting down.", true),
  entry("overloaded", "A gateway limit was reached; retry later.", true),
];
