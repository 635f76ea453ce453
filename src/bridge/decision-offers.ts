import type { SessionPrincipal, SessionRoles } from "./session-roles.js";

/**
 * Whether a client is offered the choice on one of the session's interactions (an approval, a
 * question, a plan): asked with its dialect's request (Ask's interaction/requestPermission, Codex's
 * requestApproval, ACP's session/request_permission, MCP's form) and told so in Ask's
 * interaction/list. A principal that may not decide it is not asked at all — it watches the
 * interaction in the session's events — so what a client is offered is what would count.
 * Every dialect asks here, and only here, so the interaction's own deciders (a policy's `require`
 * rule naming principals or roles, read from the session's pending interactions on any replica)
 * reach every offer at once. Roles that cannot be read offer nothing, as an answer then would
 * count for nothing. The connections asked about one interaction at once (one offer round, over
 * every dialect) share one read of the session's roles and one of the interaction's deciders
 * (SessionRoles.mayDecideOn), rather than a store round trip each per connection.
 */
export async function offeredTo(roles: Pick<SessionRoles, "mayDecideOn">, sessionId: string, principal: SessionPrincipal | undefined, interactionId: string): Promise<boolean> {
  return roles.mayDecideOn(sessionId, principal, interactionId).catch(() => false);
}
