import type { FastifyPluginAsync } from "fastify";
import fp from "fastify-plugin";
import { PLUGIN } from "../plugin-names.js";
import { requestTenant } from "../request-tenant.js";

/** What the route reads: a session's tenant and the receipts of its command-tool calls, when this gateway holds the session. */
export interface SessionReceiptsSource {
  of(sessionId: string): { readonly tenant: string | undefined; readonly receipts: readonly object[] } | undefined;
}

export interface ReceiptsRouteOptions {
  receipts: SessionReceiptsSource;
}

/**
 * `GET /sessions/:id/receipts`: the receipts of a session's command-tool calls (proposed, asked,
 * voted, decided, executed, returned), newest last. An operator's token reads any session's; any
 * other token only its own tenant's, and another tenant's session is a 404 exactly like an unknown
 * one, so an answer never tells them apart.
 */
const receiptsRoutes: FastifyPluginAsync<ReceiptsRouteOptions> = async (app, { receipts }) => {
  app.get<{ Params: { id: string } }>("/sessions/:id/receipts", async (request, reply) => {
    const sessionId = request.params.id;
    const held = receipts.of(sessionId);
    const mayRead = held !== undefined && (request.principal?.operator === true || held.tenant === requestTenant(request));
    reply.header("Cache-Control", "no-store");
    if (!held || !mayRead) return reply.code(404).send({ error: "session_not_found", message: `no session ${sessionId} with receipts here` });
    return reply.send({ sessionId, receipts: held.receipts });
  });
};

export const receiptsRoute = fp(receiptsRoutes, {
  name: "tau-gateway-route-receipts",
  fastify: "5.x",
  encapsulate: true,
  dependencies: [PLUGIN.accessControl],
  decorators: { request: ["principal"] },
});
