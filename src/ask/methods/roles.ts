import type { SessionRolesParams, SessionRolesResult, SessionSetRoleParams, SessionSetRoleResult } from "../../../generated/ask-v1.0.js";
import type { MethodContext } from "../context.js";

/** session/setRole: the owner (or an operator) grants a principal a role in the session, or revokes it (null). */
export async function setRole({ services, peer }: MethodContext, params: SessionSetRoleParams): Promise<SessionSetRoleResult> {
  const record = await services.sessions.access(params.sessionId, peer.tenant);
  const { roles } = services.core;
  await roles.setRole(record.sessionId, peer.principal, params.principal, params.role, "session/setRole");
  const now = await roles.list(record.sessionId);
  const role = now.find((entry) => entry.principal === params.principal)?.role ?? null;
  return { sessionId: record.sessionId, principal: params.principal, role };
}

/** session/roles: the session's owner and granted roles, and the caller's own role. */
export async function list({ services, peer }: MethodContext, params: SessionRolesParams): Promise<SessionRolesResult> {
  const record = await services.sessions.access(params.sessionId, peer.tenant);
  const { roles } = services.core;
  const [entries, yourRole] = await Promise.all([roles.list(record.sessionId), peer.principal ? roles.roleOf(record.sessionId, peer.principal) : null]);
  return { sessionId: record.sessionId, roles: entries, yourRole };
}
