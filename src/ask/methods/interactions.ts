import type {
  ApprovalVoteCount,
  InteractionApproveAllParams,
  InteractionApproveAllResult,
  InteractionApproveParams,
  InteractionApproveResult,
  InteractionListParams,
  InteractionListResult,
  InteractionPermissionQueryParams,
  InteractionPermissionQueryResult,
  InteractionRejectAllParams,
  InteractionRejectAllResult,
  InteractionRejectParams,
  InteractionRejectResult,
  InteractionRespondParams,
  InteractionRespondResult,
  PlanApproveParams,
  PlanApproveResult,
  PlanRejectParams,
  PlanRejectResult,
} from "../../../generated/ask-v1.0.js";
import { askError } from "../ask-errors.js";
import type { MethodContext } from "../context.js";
import { offeredTo } from "../../bridge/decision-offers.js";
import { InteractionError, voteCountOf, type ApprovalAnswered } from "../../bridge/interactions/index.js";

/** interaction/* and plan/*: resolve the gateway's interactions of one session (DESIGN §4.4). */
async function interactionsOf({ services, peer }: MethodContext, sessionId: string, answering?: string) {
  const record = await services.sessions.access(sessionId, peer.tenant);
  // An observer's answer decides nothing: refused before it reaches the interaction, which stays pending for the others.
  if (answering) await services.core.roles.require(record.sessionId, peer.principal, "answer", answering);
  // Answers from this replica, whichever replica holds the calls: the first answer wins in the store
  // (an approval a policy rule requires is voted on: the answer names its principal).
  return record.interactions.shared;
}

/**
 * InteractionError codes are registry error names (-32006, -32007, -32602). Not-found answers use
 * the Ask host's words (clients match them); why it was not found stays in `data.reason`.
 */
async function resolving<T>(about: { sessionId: string; interactionId?: string }, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (err) {
    if (!(err instanceof InteractionError)) throw err;
    const { sessionId, interactionId } = about;
    if (err.code === "interaction_not_found") throw askError(err.code, `Interaction ${interactionId ?? ""} not found`, { sessionId, interactionId, reason: err.message });
    if (err.code === "plan_not_found") throw askError(err.code, `No pending plan for session ${sessionId}`, { sessionId, reason: err.message });
    throw askError(err.code, err.message);
  }
}

/** interaction/list: the pending interactions, each saying whether the caller (with a principal) may decide it. */
export async function list(ctx: MethodContext, p: InteractionListParams): Promise<InteractionListResult> {
  const { sessionId, interactions: session } = await ctx.services.sessions.access(p.sessionId, ctx.peer.tenant);
  const interactions = await session.shared.list();
  const { principal } = ctx.peer;
  if (!principal) return { interactions };
  return { interactions: await Promise.all(interactions.map(async (i) => ({ ...i, mayDecide: await offeredTo(ctx.services.core.roles, sessionId, principal, i.id) }))) };
}

export async function approve(ctx: MethodContext, p: InteractionApproveParams): Promise<InteractionApproveResult> {
  const interactions = await interactionsOf(ctx, p.sessionId, "interaction/approve");
  const answered = await resolving(p, () => interactions.approve(p.interactionId, p.scope, ctx.peer.principal));
  return { approved: answered.kind === "decided", interactionId: p.interactionId, ...voteOf(answered) };
}

export async function reject(ctx: MethodContext, p: InteractionRejectParams): Promise<InteractionRejectResult> {
  const interactions = await interactionsOf(ctx, p.sessionId, "interaction/reject");
  const answered = await resolving(p, () => interactions.reject(p.interactionId, p.feedback, ctx.peer.principal));
  return { rejected: answered.kind === "decided", interactionId: p.interactionId, ...voteOf(answered) };
}

/** An answer that was one vote and did not decide says so, with the count (none when it was handed to the replica holding the call). */
function voteOf(answered: ApprovalAnswered): { vote?: ApprovalVoteCount } {
  const vote = voteCountOf(answered);
  return vote ? { vote } : {};
}

export async function approveAll(ctx: MethodContext, p: InteractionApproveAllParams): Promise<InteractionApproveAllResult> {
  const interactions = await interactionsOf(ctx, p.sessionId, "interaction/approve-all");
  return { approved: await resolving(p, () => interactions.approveAll(p.scope, ctx.peer.principal)) };
}

export async function rejectAll(ctx: MethodContext, p: InteractionRejectAllParams): Promise<InteractionRejectAllResult> {
  const interactions = await interactionsOf(ctx, p.sessionId, "interaction/reject-all");
  return { rejected: await resolving(p, () => interactions.rejectAll(p.feedback, ctx.peer.principal)) };
}

export async function respond(ctx: MethodContext, p: InteractionRespondParams): Promise<InteractionRespondResult> {
  const interactions = await interactionsOf(ctx, p.sessionId, "interaction/respond");
  await resolving(p, () => interactions.respond(p.interactionId, p.response));
  return { responded: true, interactionId: p.interactionId };
}

export async function planApprove(ctx: MethodContext, p: PlanApproveParams): Promise<PlanApproveResult> {
  const interactions = await interactionsOf(ctx, p.sessionId, "plan/approve");
  await resolving(p, () => interactions.approvePlan());
  return { approved: true };
}

export async function planReject(ctx: MethodContext, p: PlanRejectParams): Promise<PlanRejectResult> {
  const interactions = await interactionsOf(ctx, p.sessionId, "plan/reject");
  await resolving(p, () => interactions.rejectPlan(p.feedback));
  return { rejected: true };
}

/**
 * interaction/requestPermission sent by a client: Ask hosts answer it as a query, with the approval
 * mode and whether a decision is waiting. With a sessionId, that session's; without, the default
 * mode (require) and nothing pending.
 */
export async function permissionQuery(ctx: MethodContext, p: InteractionPermissionQueryParams): Promise<InteractionPermissionQueryResult> {
  if (p.sessionId === undefined) return { mode: "require", pending: false };
  const record = await ctx.services.sessions.access(p.sessionId, ctx.peer.tenant);
  const [pending] = await Promise.all([record.interactions.shared.approvalPending(), record.interactions.refreshSettings()]);
  return { mode: record.interactions.approvalMode, pending };
}
