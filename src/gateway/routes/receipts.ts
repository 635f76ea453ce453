import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import type { Receipt, ReceiptWatch } from "../../bridge/interactions/policy/receipts.js";
import type { SessionPrincipal } from "../../bridge/session-principal.js";
import { PLUGIN } from "../plugin-names.js";
import { requestTenant } from "../request-tenant.js";

/** What the routes read: a session's tenant and the receipts of its command-tool calls, when this gateway holds the session. */
export interface SessionReceiptsSource {
  of(sessionId: string): { readonly tenant: string | undefined; readonly receipts: readonly Receipt[] } | undefined;
  /** Whether the principal may read the session's receipts: its owner or an operator (anyone, without a principal: a gateway without tokens). */
  mayRead(sessionId: string, principal: SessionPrincipal | undefined): Promise<boolean>;
  /** Calls `watch` with a receipt of any session as each step is added to it, until the returned function is called. */
  watch(watch: ReceiptWatch): () => void;
}

export interface ReceiptsRouteOptions {
  receipts: SessionReceiptsSource;
}

/** What a reader of a session's receipts gets: them, a 404 (no such session here, or one of another tenant), or a 403 (not its owner). */
export type ReceiptsAnswer =
  | { readonly status: 200; readonly receipts: readonly Receipt[] }
  | { readonly status: 404 }
  | { readonly status: 403; readonly message: string };

/**
 * Who may read a session's receipts, for every route that shows them (this one and the inspector's
 * approvals panel): an operator's token any session's; another token only a session of its own
 * tenant (another tenant's is a 404 exactly like an unknown one, so an answer never tells them
 * apart) that it owns (a 403 otherwise: who voted and what ran is the owner's to review, as roles
 * are its to grant). Without tokens there are no principals, and nothing is checked.
 */
export async function readReceipts(source: SessionReceiptsSource, sessionId: string, request: FastifyRequest): Promise<ReceiptsAnswer> {
  const held = source.of(sessionId);
  const principal = request.principal;
  if (!held || (principal?.operator !== true && held.tenant !== requestTenant(request))) return { status: 404 };
  if (!(await source.mayRead(sessionId, principal))) {
    return { status: 403, message: `principal '${principal?.tokenId}' does not own session ${sessionId}: its receipts are read by its owner or an operator token` };
  }
  return { status: 200, receipts: held.receipts };
}

/**
 * `GET /sessions/:id/receipts`: the receipts of a session's command-tool calls (proposed, asked,
 * voted, decided, executed, returned), newest last, to whom readReceipts allows.
 */
const receiptsRoutes: FastifyPluginAsync<ReceiptsRouteOptions> = async (app, { receipts }) => {
  app.get<{ Params: { id: string } }>("/sessions/:id/receipts", async (request, reply) => {
    const sessionId = request.params.id;
    const answer = await readReceipts(receipts, sessionId, request);
    reply.header("Cache-Control", "no-store");
    if (answer.status === 404) return reply.code(404).send({ error: "session_not_found", message: `no session ${sessionId} with receipts here` });
    if (answer.status === 403) return reply.code(403).send({ error: "forbidden", message: answer.message });
    return reply.send({ sessionId, receipts: answer.receipts });
  });
};

export const receiptsRoute = fp(receiptsRoutes, {
  name: "tau-gateway-route-receipts",
  fastify: "5.x",
  encapsulate: true,
  dependencies: [PLUGIN.accessControl],
  decorators: { request: ["principal"] },
});
