import { AskError } from "../ask/ask-bridge.js";
import { CODEX_ERROR_CODES, type CodexErrorName } from "../registry/codex/index.js";
import { SessionError } from "../bridge/session-error.js";
import { TauResponseError, UpstreamUnavailableError } from "../tau/upstream.js";
import { STORE_UNAVAILABLE_MESSAGE, storeUnavailableOperation } from "../store/index.js";

/** A JSON-RPC error the Codex surface answers with; `code` is one of the registry's Codex codes. */
export class CodexError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "CodexError";
  }

  static of(name: CodexErrorName, message: string, data?: unknown): CodexError {
    return new CodexError(CODEX_ERROR_CODES[name], message, data);
  }
}

/** An unknown thread, one of another tenant, one not loaded: the same words, so answers never tell them apart (Codex: -32600). */
export const threadNotFound = (threadId: string) => CodexError.of("invalid_request", `thread not found: ${threadId}`);

export const invalidParams = (field: string, message: string) => CodexError.of("invalid_params", `invalid params: ${field}: ${message}`, { field });

/** As Codex words it for an experimental method, field or value used without the capability. */
export const requiresExperimentalApi = (descriptor: string) => CodexError.of("invalid_request", `${descriptor} requires experimentalApi capability`);

const FROM_TAU: Partial<Record<TauResponseError["code"], CodexErrorName>> = {
  invalid_request: "invalid_request",
  invalid_params: "invalid_params",
  busy: "busy",
};

/**
 * Maps anything a Codex method (or a gate around it) throws to the error the client receives.
 * The gateway's gates speak AskError (drain, in-flight limit); their codes are the same numbers.
 */
export function toCodexError(err: unknown): CodexError {
  if (err instanceof CodexError) return err;
  if (err instanceof AskError) return new CodexError(err.code, err.message, err.data);
  if (err instanceof SessionError && err.code === "session_not_found") return threadNotFound(err.data?.sessionId ?? "");
  if (err instanceof SessionError && err.code === "invalid_params") return CodexError.of("invalid_params", err.message);
  if (err instanceof TauResponseError) {
    return CodexError.of(FROM_TAU[err.code] ?? "internal_error", `${err.method}: ${err.message}`, { tauCode: err.code });
  }
  if (storeUnavailableOperation(err) !== undefined) return CodexError.of("upstream_unavailable", STORE_UNAVAILABLE_MESSAGE);
  if (err instanceof UpstreamUnavailableError) return CodexError.of("upstream_unavailable", `Tau host unavailable: ${err.message}; retry once it is back`);
  return CodexError.of("internal_error", `Internal error: ${err instanceof Error ? err.message : String(err)}`);
}
