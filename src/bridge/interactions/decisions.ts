import { APPROVING_DECISIONS, SESSION_APPROVING_DECISIONS } from "../../registry/ask/index.js";

/**
 * What a client's answer to interaction/requestPermission grants (DESIGN §4.4). The decision is
 * typed as a plain string on purpose: clients answer with words the registry has never heard of,
 * and every one of them must deny rather than fail.
 */
export type DecisionGrant = "once" | "session" | "denied";

const ONCE: ReadonlySet<string> = new Set(APPROVING_DECISIONS);
const SESSION: ReadonlySet<string> = new Set(SESSION_APPROVING_DECISIONS);

export function decisionGrant(decision: unknown): DecisionGrant {
  if (typeof decision !== "string") return "denied";
  if (ONCE.has(decision)) return "once";
  if (SESSION.has(decision)) return "session";
  return "denied";
}

/**
 * Whether a permission request may be approved for the rest of the session. Not when the
 * operator's policy requires approval of this very call (`allowedScopes: ["once"]`): the decision
 * holds for the call alone, so every dialect offers once-only choices (what it offers is what counts).
 */
export function offersSessionScope(params: { allowedScopes?: readonly string[] }): boolean {
  return params.allowedScopes === undefined || params.allowedScopes.includes("session");
}
