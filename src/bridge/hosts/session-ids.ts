import { TauResponseError } from "../../tau/upstream.js";

/**
 * A session id Tau's schema refuses (empty, or whitespace only) names no session. Dialects whose
 * own schema lets such an id through (ACP's SessionId is any string) get "not found" for it, as
 * for any other unknown session, and the request never reaches Tau invalid.
 */
export function namesNoSession(sessionId: string): boolean {
  return !/\S/.test(sessionId);
}

/** What Tau answers for a session it does not have, made here for an id that cannot name one. */
export function noSuchSession(method: string, sessionId: string): TauResponseError {
  return new TauResponseError(method, "not_found", "session not found", { sessionId });
}
