import type { ErrorCodeEntry } from "./model.js";

/**
 * The error codes every JSON-RPC dialect (Ask, Codex app-server, ACP) shares, declared once; each
 * dialect's table spreads them beside its own codes.
 */

/** JSON-RPC 2.0's reserved codes (§5.1). */
export const JSONRPC_ERROR_CODES = {
  parse_error: -32700,
  invalid_request: -32600,
  method_not_found: -32601,
  invalid_params: -32602,
  internal_error: -32603,
} as const;

/** The gateway's own codes, for conditions the dialects' hosts never meet. */
export const GATEWAY_ERROR_CODES = {
  busy: -32010,
  forbidden: -32011,
  upstream_unavailable: -32012,
  overloaded: -32013,
} as const;

/** The registry entry of one of a dialect's codes: its name, number and what it means in that dialect. */
export const errorEntryOf =
  <Name extends string>(codes: Readonly<Record<Name, number>>) =>
  (name: Name, description: string, extension = false): ErrorCodeEntry => ({
    name,
    code: codes[name],
    description,
    ...(extension ? { extension: true } : {}),
  });
