import { randomBytes, timingSafeEqual } from "node:crypto";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { InteractionError } from "../../bridge/interactions/interaction-error.js";
import { voteCountOf, type ApprovalAnswered } from "../../bridge/interactions/approval-votes.js";
import { SessionError } from "../../bridge/session-error.js";
import { readReceipts, type SessionReceiptsSource } from "../routes/receipts.js";
import type { InspectorHub } from "./inspector-hub.js";
import { sees, type InspectorViewer } from "./inspector-viewer.js";
import { answerProblem, carryOut, OPERATOR_ANSWER_SCHEMA, type OperatorAnswer } from "./operator-decisions.js";
import { sessionView, summary, type InspectedSessions } from "./session-view.js";

/**
 * The inspector's session routes, under the inspector's access checks (a valid token, the right
 * Host, the page's own Origin); a tenant's token sees its own tenant's sessions and answers none:
 * - `GET /inspector/api/sessions`: the sessions the bridge serves;
 * - `GET /inspector/api/sessions/:id?after=SEQ`: one session's events (the timeline's rows; the
 *   frames each became arrive on the feed, naming the event's seq) and its pending interactions;
 * - `GET /inspector/api/sessions/:id/receipts`: the receipts of its command-tool calls (the
 *   approvals panel), to whom `GET /sessions/:id/receipts` answers (an operator, the session's
 *   owner: routes/receipts.ts); the feed's `receipt` events say when to read them again;
 * - `GET /inspector/api/csrf`: the token the page sends back with an answer;
 * - `POST /inspector/api/sessions/:id/interactions/:interactionId`: an operator's answer, through
 *   the normal decision path (operator-decisions.ts).
 *
 * The answer changes something, so besides the operator's token it needs what a page of another
 * site cannot produce: an Origin header naming this very page (browsers always send one with a
 * POST), a JSON body (no HTML form can send one), and the CSRF token, which only a page that may
 * read this origin's answers can have read.
 */

export const CSRF_HEADER = "x-inspector-csrf";

export interface SessionRoutesOptions {
  hub: InspectorHub;
  sessions: InspectedSessions;
  /** Who asks: an operator sees every session and may answer; a tenant sees its own sessions, read-only (inspector-viewer.ts). */
  viewer: (request: FastifyRequest) => InspectorViewer;
  /** The sessions' receipts (absent: the receipts route answers 404). */
  receipts?: SessionReceiptsSource;
}

type SessionParams = { Params: { id: string }; Querystring: { after?: string } };
type AnswerParams = { Params: { id: string; interactionId: string }; Body: OperatorAnswer };

export async function sessionRoutes(app: FastifyInstance, { hub, sessions, viewer, receipts }: SessionRoutesOptions): Promise<void> {
  const csrf = randomBytes(32).toString("base64url");
  const data = { config: { checksOwnOrigin: true, checksOwnHost: true } };

  // Requests this scope refuses before a handler runs (a body that breaks the schema, not JSON) get the inspector's own error shape.
  app.setErrorHandler((error: FastifyError, _request, reply) => {
    if (error.statusCode !== undefined && error.statusCode < 500) return reply.code(error.statusCode).send({ error: "invalid_request", message: error.message });
    throw error;
  });

  const notOperator = (reply: FastifyReply) =>
    reply.code(403).send({ error: "not_operator", message: 'answering from the inspector is an operator\'s to do ("operator": true in the tokens file); a tenant\'s token sees its own sessions, read-only' });

  const notFound = (reply: FastifyReply, id: string) =>
    reply.code(404).send({ error: "not_found", message: `no session ${JSON.stringify(id)} is open on this gateway (a session shows once a client has used it)` });

  /** The session, when the viewer may see it: another tenant's session is, to a tenant, one that does not exist. */
  const visible = (request: FastifyRequest, id: string) => {
    const record = sessions.get(id);
    return record && sees(viewer(request), record.tenant) ? record : undefined;
  };

  app.get("/inspector/api/sessions", data, async (request) => ({ sessions: sessions.all().filter((record) => sees(viewer(request), record.tenant)).map(summary) }));

  // Only those who may answer get the token answers need.
  app.get("/inspector/api/csrf", data, async (request, reply) => (viewer(request).operator ? { header: CSRF_HEADER, token: csrf } : notOperator(reply)));

  app.get<SessionParams>("/inspector/api/sessions/:id", data, async (request, reply) => {
    const record = visible(request, request.params.id);
    if (!record) return notFound(reply, request.params.id);
    const { after } = request.query;
    if (after !== undefined && !/^\d{1,15}$/.test(after)) return reply.code(400).send({ error: "invalid_request", message: `after must be an event seq (a whole number), got ${JSON.stringify(after)}` });
    return sessionView(record, after === undefined ? 0 : Number(after));
  });

  app.get<SessionParams>("/inspector/api/sessions/:id/receipts", data, async (request, reply) => {
    const { id } = request.params;
    const answer = receipts && visible(request, id) ? await readReceipts(receipts, id, request) : { status: 404 as const };
    if (answer.status === 404) return notFound(reply, id);
    if (answer.status === 403) return reply.code(403).send({ error: "forbidden", message: answer.message });
    return { sessionId: id, receipts: answer.receipts };
  });

  app.post<AnswerParams>("/inspector/api/sessions/:id/interactions/:interactionId", { ...data, schema: { body: OPERATOR_ANSWER_SCHEMA } }, async (request, reply) => {
    if (!viewer(request).operator) return notOperator(reply);
    const refused = refuseForgery(request, reply, csrf);
    if (refused) return refused;
    const problem = answerProblem(request.body);
    if (problem) return reply.code(400).send({ error: "invalid_request", message: problem });
    const { id, interactionId } = request.params;
    const record = visible(request, id);
    if (!record) return notFound(reply, id);
    let answered: ApprovalAnswered;
    try {
      answered = await carryOut(record.interactions.shared, interactionId, request.body, request.principal);
    } catch (error) {
      // A policy rule that names who decides holds the operator to it too.
      if (error instanceof SessionError && error.code === "forbidden") return reply.code(403).send({ error: "forbidden", message: error.message });
      if (!(error instanceof InteractionError)) throw error;
      const status = error.code === "invalid_params" ? 400 : 409;
      return reply.code(status).send({ error: error.code === "invalid_params" ? "invalid_request" : "not_pending", message: error.message });
    }
    // One vote of several is told as a vote, with its count, not as the decision.
    const vote = voteCountOf(answered);
    const decision = { sessionId: id, interactionId, ...request.body, by: request.principal?.tokenId ?? "loopback", at: new Date().toISOString(), ...(vote ? { vote } : {}) };
    hub.recordDecision(decision, record.tenant);
    return { decided: vote === undefined, decision, ...(vote ? { vote } : {}) };
  });
}

/** Refuses a POST that a page of another site could have made; undefined when it is the inspector page's own. */
function refuseForgery(request: FastifyRequest, reply: FastifyReply, csrf: string): FastifyReply | undefined {
  // The access guard already refused an Origin of another site; a POST must carry one.
  if (request.headers.origin === undefined) return reply.code(403).send({ error: "forbidden_origin", message: "an answer must come from the inspector page (no Origin header)" });
  const header = request.headers[CSRF_HEADER];
  const sent = Buffer.from(typeof header === "string" ? header : "");
  const expected = Buffer.from(csrf);
  if (sent.length !== expected.length || !timingSafeEqual(sent, expected)) {
    return reply.code(403).send({ error: "bad_csrf_token", message: `an answer needs the ${CSRF_HEADER} header the page reads from /inspector/api/csrf` });
  }
  return undefined;
}
