import type { ErrorCodeEntry } from "../model.js";
import { TAU_ERROR_CODES } from "./envelope.js";

/** Tau's complete error-code list (spec §3); the wire value is the name itself. */

const descriptions: Record<(typeof TAU_ERROR_CODES)[number], string> = {
  parse_error: "The message was not valid JSON (id is null).",
  invalid_request:
    "Bad envelope (blank, non-object, bad id, wrong version or type, non-string method, missing params), or an " +
    "operation-level refusal such as an unavailable retry or pending input rejected by a context-replacing mutation.",
  method_not_found: "The method name is not supported.",
  invalid_params: "The method's params failed schema validation.",
  not_found:
    "The session id is unknown to this host (or not restorable), or unobserve named a session this connection " +
    "has no state for; data carries { sessionId }.",
  busy:
    "Conflicting work: a turn or queued mutation is active, an interrupt is settling, rewind with active or pending " +
    "work, a duplicate active execId, or an ephemeral thread that is already running.",
  cancelled: "Pending queue/steer input was cancelled, or an exec or sample was aborted.",
  internal_error:
    "The host failed inside a handler, a turn, steering, draining queued input, exec/sample/ephemeral runtime, or " +
    "client-tool registration; data.cause says why.",
};

export const tauErrors: ErrorCodeEntry[] = TAU_ERROR_CODES.map((name) => ({
  name,
  code: name,
  description: descriptions[name],
}));
