import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import type { BridgeCore } from "../../bridge/bridge-core.js";
import { sessionTenant } from "../../bridge/session-attributes.js";
import { SessionError } from "../../bridge/session-error.js";
import type { SessionRole } from "../../bridge/session-roles.js";
import { PLUGIN } from "../plugin-names.js";

/** What the route needs of the bridge core: its sessions (tenant rules) and their roles. */
export type RoleAdministration = Pick<BridgeCore, "sessions" | "roles" | "knownSnapshot">;

const ROLES: ReadonlySet<string> = new Set<SessionRole>(["owner", "controller", "observer"]);

/**
 * `/sessions/:sessionId/roles`: the roles of a session over HTTP, for whatever dialect its clients
 * speak (docs/approvals.md#roles). `GET` lists its owner and granted roles, `PUT
 * …/roles/:principal` with `{"role": …}` grants one, `DELETE …/roles/:principal` revokes it.
 * Behind the bearer token: only the session's owner or an operator token may (403 otherwise); a
 * session of another tenant is 404 word for word as one that does not exist (an operator reaches
 * every tenant's, as in the inspector).
 */
const sessionRoles: FastifyPluginAsync<{ core: RoleAdministration }> = async (app, { core }) => {
  const base = "/sessions/:sessionId/roles";

  app.get<{ Params: { sessionId: string } }>(base, async (request, reply) =>
    answering(reply, async () => {
      const sessionId = await admitted(core, request, request.params.sessionId, "GET /sessions/:id/roles");
      return { sessionId, roles: await core.roles.list(sessionId) };
    }),
  );

  app.put<{ Params: { sessionId: string; principal: string }; Body: unknown }>(`${base}/:principal`, async (request, reply) =>
    answering(reply, async () => {
      const role = (request.body as { role?: unknown } | null | undefined)?.role;
      if (typeof role !== "string" || !ROLES.has(role)) {
        return refuse(reply, 400, "invalid_role", `the body must be {"role": "owner" | "controller" | "observer"}, not ${JSON.stringify(request.body ?? null)}`);
      }
      return setRole(core, request, role as SessionRole, "PUT /sessions/:id/roles/:principal");
    }),
  );

  app.delete<{ Params: { sessionId: string; principal: string } }>(`${base}/:principal`, async (request, reply) =>
    answering(reply, () => setRole(core, request, null, "DELETE /sessions/:id/roles/:principal")),
  );
};

async function setRole(core: RoleAdministration, request: FastifyRequest<{ Params: { sessionId: string; principal: string } }>, role: SessionRole | null, method: string) {
  const { principal } = request.params;
  const sessionId = await admitted(core, request, request.params.sessionId, method);
  await core.roles.setRole(sessionId, request.principal, principal, role, method);
  const now = (await core.roles.list(sessionId)).find((entry) => entry.principal === principal)?.role ?? null;
  return { sessionId, principal, role: now };
}

/** The session, once the caller may administer its roles: it reaches it (its tenant, or an operator), and owns it or is an operator. */
async function admitted(core: RoleAdministration, request: FastifyRequest, sessionId: string, method: string): Promise<string> {
  const principal = request.principal;
  let tenant = request.tenant;
  if (principal?.operator) {
    const snapshot = await core.knownSnapshot(sessionId);
    if (snapshot) tenant = sessionTenant(snapshot);
  }
  const record = await core.sessions.access(sessionId, tenant);
  await core.roles.require(record.sessionId, principal, "grant", method);
  return record.sessionId;
}

/** The core's refusals as HTTP answers: an unknown (or another tenant's) session 404, a role that does not allow it 403. */
async function answering(reply: FastifyReply, handle: () => Promise<unknown>): Promise<unknown> {
  try {
    return await handle();
  } catch (err) {
    if (!(err instanceof SessionError)) throw err;
    if (err.code === "forbidden") return refuse(reply, 403, "forbidden", err.message);
    if (err.code === "session_not_found") return refuse(reply, 404, "session_not_found", err.message);
    return refuse(reply, 400, err.code, err.message);
  }
}

function refuse(reply: FastifyReply, status: number, error: string, message: string): FastifyReply {
  return reply.code(status).header("Cache-Control", "no-store").send({ error, message });
}

export const sessionRolesRoute = fp(sessionRoles, {
  name: "tau-gateway-route-session-roles",
  fastify: "5.x",
  encapsulate: true,
  dependencies: [PLUGIN.accessControl],
  decorators: { request: ["tenant", "principal"] },
});
