import { errorEntryOf, GATEWAY_ERROR_CODES, JSONRPC_ERROR_CODES } from "../error-codes.js";
import type { ErrorCodeEntry } from "../model.js";

/**
 * JSON-RPC error codes of the Ask surface: the reserved range, Ask's application codes
 * (-32004…-32009) and the codes the gateway adds for conditions Ask hosts never meet.
 */
export const ASK_ERROR_CODES = {
  ...JSONRPC_ERROR_CODES,
  session_not_found: -32004,
  session_already_exists: -32005,
  interaction_not_found: -32006,
  plan_not_found: -32007,
  workspace_error: -32008,
  not_implemented: -32009,
  ...GATEWAY_ERROR_CODES,
  cancelled: -32800,
} as const;

export type AskErrorName = keyof typeof ASK_ERROR_CODES;

const entry = errorEntryOf(ASK_ERROR_CODES);

export const askErrorEntries: ErrorCodeEntry[] = [
  entry("parse_error", "The message is not valid JSON; answered with id null."),
  entry("invalid_request", "The message is not a valid request, e.g. it has an id but no method."),
  entry("method_not_found", "The method is not part of the surface."),
  entry("invalid_params", "Params are missing, mistyped or cannot be honoured; the message names the field."),
  entry("internal_error", "An unexpected failure while handling the request."),
  entry("session_not_found", "No such session, or it belongs to another tenant (Tau's not_found)."),
  entry("session_already_exists", "A session with that id already exists."),
  entry("interaction_not_found", "No such interaction, or it is no longer pending (first resolution wins)."),
  entry("plan_not_found", "The session has no pending plan proposal."),
  entry("workspace_error", "Reading or preparing the workspace failed."),
  entry("not_implemented", "The method exists but this host does not support it."),
  entry("forbidden", "The caller's role in the session (owner, controller, observer) does not allow the action: an observer prompts, steers, interrupts, closes or answers, or someone other than the owner or an operator grants a role. The message names the method, the principal, its role and the action; data has them as fields.", true),
  entry("busy", "The session cannot take this request now (Tau busy), e.g. another mutation is in progress.", true),
  entry("upstream_unavailable", "The upstream Tau host cannot be reached.", true),
  entry("overloaded", "A gateway limit was reached; retry later.", true),
  entry("cancelled", "The request was cancelled before it completed (Tau cancelled).", true),
];
