import type { ErrorCode } from "../../generated/tau-v18.js";
import type { GATEWAY_ERROR_CODES, JSONRPC_ERROR_CODES } from "../registry/error-codes.js";
import { RpcError, type RpcErrorMaker } from "../shared/rpc-error.js";
import { STORE_UNAVAILABLE_MESSAGE, storeUnavailableOperation } from "../store/index.js";
import { TauResponseError, UpstreamUnavailableError } from "../tau/upstream.js";
import { SessionError } from "./session-error.js";
import { errorText } from "../shared/unknown-values.js";

/** The code names every JSON-RPC dialect's registry has (src/registry/error-codes.ts). */
export type SharedErrorName = keyof typeof JSONRPC_ERROR_CODES | keyof typeof GATEWAY_ERROR_CODES;

/** How a dialect words what the session core and the Tau host refuse. */
export interface FailureWords<Name extends string> {
  /** The dialect's errors, by its registry code names. */
  readonly error: RpcErrorMaker<Name | SharedErrorName>;
  /** Each Tau error code's counterpart (an unlisted one is internal_error). */
  readonly fromTau: Readonly<Partial<Record<ErrorCode, Name | "internal_error">>>;
  /** The dialect's answer for something the session core refused. */
  fromSession(error: SessionError): RpcError;
  /** How a Tau error's message is worded (default: led by the method, `session.submit: …`). */
  tauMessage?(method: string, message: string): string;
}

/** A dialect's invalid_params for a field a handler cannot honour: `invalid params: <field>: <message>`, `data.field` naming it. */
export const fieldErrorOf =
  (error: RpcErrorMaker<"invalid_params">) =>
  (field: string, message: string): RpcError =>
    error("invalid_params", `invalid params: ${field}: ${message}`, { field });

/**
 * Maps anything a method handler (or a gate around it) throws to the error the client receives:
 * errors already in JSON-RPC terms pass; the core's and Tau's refusals are worded by the dialect;
 * an unreachable shared store or Tau host is retryable; anything else is an internal error.
 */
export function rpcFailure<Name extends string>(err: unknown, words: FailureWords<Name>): RpcError {
  if (err instanceof RpcError) return err;
  if (err instanceof SessionError) return words.fromSession(err);
  if (err instanceof TauResponseError) {
    const message = words.tauMessage ? words.tauMessage(err.method, err.message) : `${err.method}: ${err.message}`;
    return words.error(words.fromTau[err.code] ?? "internal_error", message, { tauCode: err.code });
  }
  if (storeUnavailableOperation(err) !== undefined) return words.error("upstream_unavailable", STORE_UNAVAILABLE_MESSAGE);
  if (err instanceof UpstreamUnavailableError) return words.error("upstream_unavailable", `Tau host unavailable: ${err.message}; retry once it is back`);
  return words.error("internal_error", `Internal error: ${errorText(err)}`);
}
