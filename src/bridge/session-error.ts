/**
 * What the session core refuses, in no dialect's words: each dialect maps a `SessionError` to its
 * own JSON-RPC error (an Ask -32004, a Codex "thread not found", an ACP "resource not found").
 *
 * - `session_not_found`: no such session, another tenant's, or one closed (`data.sessionId`);
 * - `interaction_not_found`: the interaction is not pending (any more);
 * - `plan_not_found`: the session has no pending plan proposal;
 * - `invalid_params`: a parameter the core cannot honour;
 * - `forbidden`: the caller's role in the session does not allow the action (session-roles.ts;
 *   `data` names the principal, its role and the action).
 */
export type SessionErrorCode = "session_not_found" | "interaction_not_found" | "plan_not_found" | "invalid_params" | "forbidden";

export class SessionError extends Error {
  constructor(
    readonly code: SessionErrorCode,
    message: string,
    readonly data?: { sessionId?: string; principal?: string; role?: string; action?: string },
  ) {
    super(message);
    this.name = "SessionError";
  }
}

/** A session the caller cannot use: unknown, another tenant's, or closed — one answer for all of them. */
export const sessionNotFound = (sessionId: string) => new SessionError("session_not_found", `Session ${sessionId} not found`, { sessionId });
