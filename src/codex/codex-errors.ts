import { fieldErrorOf, type FailureWords } from "../bridge/rpc-failures.js";
import { CODEX_ERROR_CODES } from "../registry/codex/index.js";
import { rpcErrors } from "../shared/rpc-error.js";

/** A JSON-RPC error the Codex surface answers with, by the name of one of the registry's Codex codes. */
export const codexError = rpcErrors(CODEX_ERROR_CODES);

/** An unknown thread, one of another tenant, one not loaded: the same words, so answers never tell them apart (Codex: -32600). */
export const threadNotFound = (threadId: string) => codexError("invalid_request", `thread not found: ${threadId}`);

export const invalidParams = fieldErrorOf(codexError);

/** As Codex words it for an experimental method, field or value used without the capability. */
export const requiresExperimentalApi = (descriptor: string) => codexError("invalid_request", `${descriptor} requires experimentalApi capability`);

/** How Codex words a refusal: a session the core does not have is a thread not found. */
export const CODEX_FAILURES: FailureWords<keyof typeof CODEX_ERROR_CODES> = {
  error: codexError,
  fromTau: { invalid_request: "invalid_request", invalid_params: "invalid_params", busy: "busy" },
  fromSession: (error) => {
    if (error.code === "session_not_found") return threadNotFound(error.data?.sessionId ?? "");
    if (error.code === "invalid_params") return codexError("invalid_params", error.message);
    if (error.code === "forbidden") return codexError("forbidden", error.message, error.data);
    return codexError("internal_error", `Internal error: ${error.message}`);
  },
};

