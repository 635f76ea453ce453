import type { SessionPrincipal, SessionRoles } from "./session-roles.js";

/**
 * Whether a client is offered the choice on one of the session's interactions (an approval, a
 * question, a plan): asked with its dialect's request (Ask's interaction/requestPermission, Codex's
 * requestApproval, ACP's session/request_permission, MCP's form) and told so in Ask's
 * interaction/list. A principal that may not decide it is not asked at all — it watches the
 * interaction in the session's events — so what a client is offered is what would count.
 * Every dialect asks here, and only here, so the interaction's own deciders (a policy's `require`
 * rule) reach every offer at once once the core can name them; until then: any principal whose
 * role answers. Roles that cannot be read offer nothing, as an answer then would count for nothing.
 */
export async function offeredTo(roles: Pick<SessionRoles, "mayDecide">, sessionId: string, principal: SessionPrincipal | undefined, interactionId: string): Promise<boolean> {
  void interactionId; // whose deciders are asked about once the core names them
  return roles.mayDecide(sessionId, principal, undefined).catch(() => false);
}
